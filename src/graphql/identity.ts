// Identity: whoami, universes and API tokens. Whoami and universes are derived from the zod
// schemas of src/universes/contract.ts (the REST answers); API tokens are GraphQL-only.
import { z } from 'zod';
import { builder } from './builder.js';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { mintToken } from '../auth/tokens.js';
import { clearViewerCache } from '../auth/viewer.js';
import { createUniverse, createUniverseSchema } from '../universes/universes.js';
import { universeBody, whoamiBody, scope, authKind, type UniverseView } from '../universes/contract.js';
import type { Universe } from '../generated/prisma/client.js';
import { enumOf, inputOf, objectOf } from './graphql-types.js';
import { takeInput } from './input.js';
import { parseInput } from '../validation.js';

const ScopeEnum = enumOf(scope);
const AuthKindEnum = enumOf(authKind);
const UniverseType = objectOf(universeBody);

function universeView(u: Universe): UniverseView {
  return { slug: u.slug, name: u.name, isPersonal: u.isPersonal, createdAt: u.createdAt.toISOString() };
}

builder.queryField('whoami', (t) =>
  t.field({
    type: objectOf(whoamiBody),
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
  t.field({
    type: [UniverseType],
    description: 'Universes the caller can act in (a universe-scoped token sees only its own).',
    authScopes: { read: true },
    resolve: async (_root, _args, ctx) => {
      const v = ctx.viewer!;
      const rows = await prisma.universe.findMany({
        where: v.tokenUniverseId ? { id: v.tokenUniverseId } : { ownerId: v.user.id },
        orderBy: [{ isPersonal: 'desc' }, { createdAt: 'asc' }],
      });
      return rows.map(universeView);
    },
  }),
);

builder.queryField('universe', (t) =>
  t.field({
    type: UniverseType,
    args: { slug: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_root, { slug }, ctx) => {
      const v = ctx.viewer!;
      const found = await prisma.universe.findFirst({ where: { slug, ownerId: v.user.id } });
      if (!found || (v.tokenUniverseId && found.id !== v.tokenUniverseId)) throw new AppError('not_found', `universe ${slug} not found`);
      return universeView(found);
    },
  }),
);

builder.mutationField('createUniverse', (t) =>
  t.field({
    type: UniverseType,
    description: 'Needs a personal credential with write scope.',
    args: { input: t.arg({ type: inputOf(createUniverseSchema, 'CreateUniverse'), required: true }) },
    authScopes: { $all: { write: true, personal: true } },
    resolve: async (_root, { input }, ctx) => universeView(await createUniverse(ctx.viewer!.user.id, takeInput(ctx, createUniverseSchema, input))),
  }),
);

// ---- API tokens (minted only from a signed-in browser session) ----

const ApiTokenType = builder.prismaObject('ApiToken', {
  fields: (t) => ({
    id: t.exposeID('id', { description: 'tok_… id' }),
    name: t.exposeString('name'),
    scope: t.field({ type: ScopeEnum, resolve: (tok) => tok.scope as z.output<typeof scope> }),
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

/** The token input as GraphQL coerced it (expiresAt a Date), checked once. */
const tokenInputSchema = z.object({
  name: z.string().trim().min(1).max(100),
  scope,
  universe: z.string().nullish(),
  expiresAt: z.date().nullish(),
});

builder.mutationField('createApiToken', (t) =>
  t.field({
    type: CreatedApiToken,
    args: { input: t.arg({ type: CreateApiTokenInput, required: true }) },
    authScopes: { webSession: true },
    resolve: async (_root, { input }, ctx) => {
      const body = parseInput(tokenInputSchema, input);
      const userId = ctx.viewer!.user.id;
      let universeId: string | null = null;
      if (body.universe) {
        const u = await prisma.universe.findFirst({ where: { slug: body.universe, ownerId: userId } });
        if (!u) throw new AppError('not_found', `universe ${body.universe} not found`);
        universeId = u.id;
      }
      if (body.expiresAt && body.expiresAt.getTime() <= Date.now()) throw new AppError('invalid_request', 'expiresAt must be in the future');
      const { token, apiToken } = await mintToken({ userId, name: body.name, scope: body.scope, universeId, expiresAt: body.expiresAt ?? null });
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
