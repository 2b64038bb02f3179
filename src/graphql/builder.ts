// The Pothos builder: plugins and scalars, no domain types (those live one file per domain).
import { settings } from '../config.js';
import SchemaBuilder from '@pothos/core';
import ScopeAuthPlugin, { type AuthFailure, AuthScopeFailureType } from '@pothos/plugin-scope-auth';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import SimpleObjectsPlugin from '@pothos/plugin-simple-objects';
import { GraphQLScalarType, Kind, type ValueNode } from 'graphql';
import type PrismaTypes from '../generated/pothos-prisma-types.js';
import { getDatamodel } from '../generated/pothos-prisma-types.js';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import type { Context } from './context.js';
import type { Scope } from '../auth/scopes.js';

export interface AuthScopes {
  read: boolean;
  write: boolean;
  admin: boolean;
  /** A signed-in browser (cookie), not a bearer token. */
  webSession: boolean;
  /** A personal credential: a cookie or a token not bound to one universe. */
  personal: boolean;
  owner: boolean;
}

function failedScopes(failure: AuthFailure, out: string[] = []): string[] {
  if (failure.kind === AuthScopeFailureType.AuthScope) out.push(failure.scope);
  if (failure.kind === AuthScopeFailureType.AnyAuthScopes || failure.kind === AuthScopeFailureType.AllAuthScopes) {
    for (const child of failure.failures) failedScopes(child, out);
  }
  return out;
}

export const builder = new SchemaBuilder<{
  Context: Context;
  PrismaTypes: PrismaTypes;
  AuthScopes: AuthScopes;
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
  };
  DefaultFieldNullability: false;
}>({
  defaultFieldNullability: false,
  plugins: [ScopeAuthPlugin, PrismaPlugin, RelayPlugin, SimpleObjectsPlugin],
  scopeAuth: {
    authorizeOnSubscribe: true,
    authScopes: (ctx) => {
      const v = ctx.viewer;
      const has = (s: Scope) => !!v && v.scopes.includes(s);
      return {
        read: has('read'),
        write: has('write'),
        admin: has('admin'),
        webSession: v?.auth === 'session',
        personal: !!v && v.tokenUniverseId === null,
        owner: !!v?.user.isOwner,
      };
    },
    unauthorizedError: (_parent, ctx, _info, result) => {
      if (!ctx.viewer) return new AppError('invalid_token', 'missing, unknown, revoked or expired token');
      const scopes = failedScopes(result.failure);
      if (scopes.includes('webSession')) return new AppError('forbidden', 'only a signed-in browser session may do this; tokens cannot mint tokens');
      if (scopes.includes('personal')) return new AppError('forbidden', 'this operation needs a personal token, not a universe-scoped one');
      if (scopes.includes('owner')) return new AppError('forbidden', 'only the service owner may do this');
      return new AppError('insufficient_scope', `this operation needs the ${scopes.find((s) => ['read', 'write', 'admin'].includes(s)) ?? 'higher'} scope`);
    },
  },
  prisma: {
    client: () => prisma,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    filterConnectionTotalCount: true,
    onUnusedQuery: settings.production() ? null : 'warn',
  },
  relay: {
    cursorType: 'String',
    clientMutationId: 'omit',
    defaultConnectionTypeOptions: {},
  },
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});

builder.scalarType('DateTime', {
  description: 'ISO 8601 timestamp',
  serialize: (value) => (value instanceof Date ? value.toISOString() : String(value)),
  parseValue: (value) => {
    const d = new Date(String(value));
    if (Number.isNaN(d.getTime())) throw new AppError('invalid_request', 'invalid DateTime');
    return d;
  },
});

function literalToJs(ast: ValueNode, variables?: Record<string, unknown> | null): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return ast.values.map((v) => literalToJs(v, variables));
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((f) => [f.name.value, literalToJs(f.value, variables)]));
    case Kind.VARIABLE:
      return variables?.[ast.name.value];
    default:
      return undefined;
  }
}

const jsonScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value',
  serialize: (v) => v,
  parseValue: (v) => v,
  parseLiteral: (ast, variables) => literalToJs(ast, variables),
});
builder.addScalarType('JSON', jsonScalar, {});
