// Environments. Inputs and outputs are derived from the zod schemas of
// src/environments/contract.ts (the ones REST validates with and OpenAPI documents); resolvers
// return the contract-shaped views of src/environments/view.ts.
import { builder } from './builder.js';
import { archiveEnvironment, createEnvironment, findEnvironment, listEnvironments, patchEnvironment } from '../environments/environments.js';
import { environmentView } from '../environments/view.js';
import { createEnvironmentBody, environmentBody, patchEnvironmentBody } from '../environments/contract.js';
import { inputOf, objectOf } from './graphql-types.js';
import { takeInput } from './input.js';
import { newestFirst } from './id-connection.js';

const EnvironmentType = objectOf(environmentBody);
const PAGE = { defaultSize: 20, maxSize: 100 };

builder.queryField('environments', (t) =>
  t.connection({
    type: EnvironmentType,
    description: 'Environments of the universe (archived ones included), newest first',
    authScopes: { read: true },
    resolve: (_r, args, ctx) => newestFirst(args, PAGE, async (page) => (await listEnvironments(ctx.viewer!, page)).map(environmentView)),
  }),
);
builder.queryField('environment', (t) =>
  t.field({
    type: EnvironmentType,
    args: { id: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_r, { id }, ctx) => environmentView(await findEnvironment(ctx.viewer!, id)),
  }),
);

builder.mutationField('createEnvironment', (t) =>
  t.field({
    type: EnvironmentType,
    description: 'Create an environment: packages a session installs at start, and its network allow-list',
    args: { input: t.arg({ type: inputOf(createEnvironmentBody, 'CreateEnvironment'), required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { input }, ctx) => environmentView(await createEnvironment(ctx.viewer!, takeInput(ctx, createEnvironmentBody, input))),
  }),
);
builder.mutationField('updateEnvironment', (t) =>
  t.field({
    type: EnvironmentType,
    description: 'Update an environment; every field optional (a packages change is a new version, installed afresh by new sessions)',
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: inputOf(patchEnvironmentBody, 'UpdateEnvironment'), required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { id, input }, ctx) => environmentView(await patchEnvironment(ctx.viewer!, id, takeInput(ctx, patchEnvironmentBody, input))),
  }),
);
builder.mutationField('archiveEnvironment', (t) =>
  t.field({
    type: EnvironmentType,
    description: 'Archive the environment (idempotent): new sessions naming it are refused; running ones keep it',
    args: { id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { id }, ctx) => environmentView(await archiveEnvironment(ctx.viewer!, id)),
  }),
);
