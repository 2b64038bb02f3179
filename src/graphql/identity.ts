// Identity: whoami, universes and API tokens.
import { z } from 'zod';
import { builder } from './builder.js';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { SCOPES } from '../auth/scopes.js';
import { mintToken } from '../auth/tokens.js';
import { clearViewerCache } from '../auth/viewer.js';
import { createUniverse } from '../universes/universes.js';
import { parseInput } from '../validation.js';

export const ScopeEnum = builder.enumType('Scope', { values: SCOPES });
export const AuthKindEnum = builder.enumType('AuthKind', { values: ['token', 'session'] as const });

export const UniverseType = builder.prismaObject('Universe', {
  fields: (t) => ({
    slug: t.exposeString('slug'),
    name: t.exposeString('name'),
    isPersonal: t.exposeBoolean('isPersonal'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const WhoamiUser = builder.simpleObject('WhoamiUser', {
  fields: (t) => ({ id: t.string(), email: t.string(), name: t.string({ nullable: true }) }),
});
const WhoamiUniverse = builder.simpleObject('WhoamiUniverse', {
  fields: (t) => ({ slug: t.string(), name: t.string(), isPersonal: t.boolean() }),
});
const Whoami = builder.simpleObject('Whoami', {
  fields: (t) => ({
    user: t.field({ type: WhoamiUser }),
    universe: t.field({ type: WhoamiUniverse }),
    scopes: t.field({ type: [ScopeEnum] }),
    auth: t.field({ type: AuthKindEnum }),
  }),
});

builder.queryField('whoami', (t) =>
  t.field({
    type: Whoami,
    authScopes: { read: true },
    resolve: (_root, _args, ctx) => {
      const v = ctx.viewer!;
      return {
        user: { id: v.user.id, email: v.user.email, name: v.user.name },
        universe: { slug: v.universe.slug, name: v.universe.name, isPersonal: v.universe.isPersonal },
        scopes: v.scopes,
        auth: v.auth,
      };
    },
  }),
);

builder.queryField('universes', (t) =>
  t.prismaField({
    type: ['Universe'],
    description: 'Universes the caller can act in (a universe-scoped token sees only its own).',
    authScopes: { read: true },
    resolve: (query, _root, _args, ctx) => {
      const v = ctx.viewer!;
      return prisma.universe.findMany({
        ...query,
        where: v.tokenUniverseId ? { id: v.tokenUniverseId } : { ownerId: v.user.id },
        orderBy: [{ isPersonal: 'desc' }, { createdAt: 'asc' }],
      });
    },
  }),
);

builder.queryField('universe', (t) =>
  t.prismaField({
    type: 'Universe',
    args: { slug: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (query, _root, { slug }, ctx) => {
      const v = ctx.viewer!;
      const found = await prisma.universe.findFirst({ ...query, where: { slug, ownerId: v.user.id } });
      if (!found || (v.tokenUniverseId && found.id !== v.tokenUniverseId)) throw new AppError('not_found', `universe ${slug} not found`);
      return found;
    },
  }),
);

const CreateUniverseInput = builder.inputType('CreateUniverseInput', {
  fields: (t) => ({ slug: t.string({ required: true }), name: t.string() }),
});

builder.mutationField('createUniverse', (t) =>
  t.prismaField({
    type: 'Universe',
    description: 'Needs a personal credential with write scope.',
    args: { input: t.arg({ type: CreateUniverseInput, required: true }) },
    authScopes: { $all: { write: true, personal: true } },
    resolve: async (_query, _root, { input }, ctx) => createUniverse(ctx.viewer!.user.id, stripNulls(input)),
  }),
);

// ---- API tokens (minted only from a signed-in browser session) ----

export const ApiTokenType = builder.prismaObject('ApiToken', {
  fields: (t) => ({
    id: t.exposeID('id', { description: 'tok_… id' }),
    name: t.exposeString('name'),
    scope: t.field({ type: ScopeEnum, resolve: (tok) => tok.scope as (typeof SCOPES)[number] }),
    prefix: t.exposeString('prefix', { description: 'First characters of the value, to recognise it' }),
    universe: t.string({
      nullable: true,
      description: 'Slug of the universe a scoped token is bound to; null for a personal token',
      select: { universe: { select: { slug: true } } },
      resolve: (tok) => tok.universe?.slug ?? null,
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
  }),
});

builder.queryField('apiTokens', (t) =>
  t.prismaConnection({
    type: 'ApiToken',
    cursor: 'id',
    authScopes: { webSession: true },
    args: { includeRevoked: t.arg.boolean({ defaultValue: false }) },
    resolve: (query, _root, args, ctx) =>
      prisma.apiToken.findMany({
        ...query,
        where: { userId: ctx.viewer!.user.id, ...(args.includeRevoked ? {} : { revokedAt: null }) },
        orderBy: { id: 'desc' },
      }),
  }),
);

const CreateApiTokenInput = builder.inputType('CreateApiTokenInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    scope: t.field({ type: ScopeEnum, required: true }),
    universe: t.string({ description: 'Universe slug for a scoped token; null for a personal token' }),
    expiresAt: t.field({ type: 'DateTime', description: 'Optional expiry; null never expires' }),
  }),
});

const CreatedApiToken = builder.simpleObject('CreatedApiToken', {
  fields: (t) => ({
    token: t.string({ description: 'The raw token value, shown only here' }),
    apiToken: t.field({ type: ApiTokenType }),
  }),
});

const tokenInputSchema = z.object({
  name: z.string().trim().min(1).max(100),
  expiresAt: z.date().nullish(),
});

builder.mutationField('createApiToken', (t) =>
  t.field({
    type: CreatedApiToken,
    args: { input: t.arg({ type: CreateApiTokenInput, required: true }) },
    authScopes: { webSession: true },
    resolve: async (_root, { input }, ctx) => {
      parseInput(tokenInputSchema, input);
      const userId = ctx.viewer!.user.id;
      let universeId: string | null = null;
      if (input.universe) {
        const u = await prisma.universe.findFirst({ where: { slug: input.universe, ownerId: userId } });
        if (!u) throw new AppError('not_found', `universe ${input.universe} not found`);
        universeId = u.id;
      }
      if (input.expiresAt && input.expiresAt.getTime() <= Date.now()) throw new AppError('invalid_request', 'expiresAt must be in the future');
      const { token, apiToken } = await mintToken({
        userId,
        name: input.name.trim(),
        scope: input.scope,
        universeId,
        expiresAt: input.expiresAt ?? null,
      });
      const withUniverse = await prisma.apiToken.findUniqueOrThrow({ where: { id: apiToken.id }, include: { universe: true } });
      return { token, apiToken: withUniverse };
    },
  }),
);

builder.mutationField('revokeApiToken', (t) =>
  t.prismaField({
    type: 'ApiToken',
    args: { id: t.arg.string({ required: true, description: 'tok_… id' }) },
    authScopes: { webSession: true },
    resolve: async (query, _root, { id }, ctx) => {
      const tok = await prisma.apiToken.findFirst({ where: { id, userId: ctx.viewer!.user.id } });
      if (!tok) throw new AppError('not_found', 'token not found');
      const revoked = await prisma.apiToken.update({ ...query, where: { id }, data: { revokedAt: tok.revokedAt ?? new Date() } });
      clearViewerCache();
      return revoked;
    },
  }),
);

/** GraphQL gives explicit nulls for omitted optional inputs; domain schemas treat them as absent. */
export function stripNulls<T extends object>(input: T): { [K in keyof T]: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null && v !== undefined)) as never;
}
