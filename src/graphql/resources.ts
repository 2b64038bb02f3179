// Session resources in GraphQL: types and inputs derived from src/resources/contract.ts.
import { builder } from './builder.js';
import { AppError } from '../errors.js';
import { addResource, listResources, getResource, rotateToken, deleteResource } from '../resources/operations.js';
import { resourceView } from '../resources/resources.js';
import { resourceInput, rotateTokenBody, sessionResource, resourcePage, resourceDeleted } from '../resources/contract.js';
import { inputOf, objectOf } from './graphql-types.js';
import { takeInput } from './input.js';

const SessionResourceType = objectOf(sessionResource);

builder.queryField('sessionResources', (t) =>
  t.field({
    type: objectOf(resourcePage),
    description: 'Resources of a session, oldest first; without limit everything in one answer',
    args: { sessionId: t.arg.string({ required: true }), limit: t.arg.int({ description: '1 to 1000' }), page: t.arg.string() },
    authScopes: { read: true },
    resolve: async (_r, args, ctx) => {
      if (args.limit != null && (args.limit < 1 || args.limit > 1000)) throw new AppError('invalid_request', 'limit must be between 1 and 1000');
      const page = await listResources(ctx.viewer!, args.sessionId, args.limit ?? null, args.page ?? null);
      return { data: page.data.map(resourceView), next_page: page.nextPage };
    },
  }),
);
builder.queryField('sessionResource', (t) =>
  t.field({
    type: SessionResourceType,
    args: { sessionId: t.arg.string({ required: true }), id: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_r, a, ctx) => resourceView(await getResource(ctx.viewer!, a.sessionId, a.id)),
  }),
);
builder.mutationField('addSessionResource', (t) =>
  t.field({
    type: SessionResourceType,
    description: 'Add a file resource (copied read-only before the next turn); repositories attach only at create',
    args: { sessionId: t.arg.string({ required: true }), input: t.arg({ type: inputOf(resourceInput, 'Resource'), required: true }) },
    authScopes: { write: true },
    resolve: async (_r, a, ctx) => resourceView(await addResource(ctx.viewer!, a.sessionId, takeInput(ctx, resourceInput, a.input))),
  }),
);
builder.mutationField('rotateSessionResourceToken', (t) =>
  t.field({
    type: SessionResourceType,
    description: "Rotate a repository resource's token (re-encrypted; never enters the sandbox)",
    args: {
      sessionId: t.arg.string({ required: true }),
      id: t.arg.string({ required: true }),
      input: t.arg({ type: inputOf(rotateTokenBody, 'RotateResourceToken'), required: true }),
    },
    authScopes: { write: true },
    resolve: async (_r, a, ctx) => resourceView(await rotateToken(ctx.viewer!, a.sessionId, a.id, takeInput(ctx, rotateTokenBody, a.input))),
  }),
);
builder.mutationField('deleteSessionResource', (t) =>
  t.field({
    type: objectOf(resourceDeleted),
    description: 'Remove a file resource and its per-session copy (repositories answer invalid_request)',
    args: { sessionId: t.arg.string({ required: true }), id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_r, a, ctx) => ({ type: 'session_resource_deleted' as const, id: (await deleteResource(ctx.viewer!, a.sessionId, a.id)).id }),
  }),
);
