// Vaults and their write-only credentials. Inputs and outputs are derived from the zod schemas of
// src/vaults/contract.ts (the ones REST validates with and OpenAPI documents); resolvers return
// the contract-shaped views of src/vaults/view.ts, which never hold a credential's value.
import { builder } from './builder.js';
import { createVault, deleteCredential, deleteVault, findVault, listVaults, putCredential } from '../vaults/vaults.js';
import { vaultView } from '../vaults/view.js';
import { createVaultBody, putVaultCredentialBody, vaultBody } from '../vaults/contract.js';
import { inputOf, objectOf } from './graphql-types.js';
import { takeInput } from './input.js';
import { newestFirst } from './id-connection.js';

const VaultType = objectOf(vaultBody);
const PAGE = { defaultSize: 20, maxSize: 100 };

builder.queryField('vaults', (t) =>
  t.connection({
    type: VaultType,
    description: 'Vaults of the universe, newest first (credential values are never returned)',
    authScopes: { read: true },
    resolve: (_r, args, ctx) => newestFirst(args, PAGE, async (page) => (await listVaults(ctx.viewer!, page)).map(vaultView)),
  }),
);
builder.queryField('vault', (t) =>
  t.field({
    type: VaultType,
    args: { id: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_r, { id }, ctx) => vaultView(await findVault(ctx.viewer!, id)),
  }),
);

builder.mutationField('createVault', (t) =>
  t.field({
    type: VaultType,
    description: 'Create an empty vault',
    args: { input: t.arg({ type: inputOf(createVaultBody, 'CreateVault'), required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { input }, ctx) => vaultView(await createVault(ctx.viewer!, takeInput(ctx, createVaultBody, input))),
  }),
);
builder.mutationField('deleteVault', (t) =>
  t.boolean({
    description: 'Delete a vault and its credentials; live sessions listing it lose its headers on their next request',
    args: { id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { id }, ctx) => {
      await deleteVault(ctx.viewer!, id);
      return true;
    },
  }),
);
builder.mutationField('putVaultCredential', (t) =>
  t.field({
    type: VaultType,
    description:
      'Create or replace a credential (write-only, encrypted at rest); egress_header_conflict when it would conflict for the vault or a live session using it',
    args: {
      vaultId: t.arg.string({ required: true }),
      key: t.arg.string({ required: true, description: 'matches ^[A-Za-z0-9_.-]{1,128}$' }),
      input: t.arg({ type: inputOf(putVaultCredentialBody, 'PutVaultCredential'), required: true }),
    },
    authScopes: { write: true },
    resolve: async (_r, { vaultId, key, input }, ctx) =>
      vaultView(await putCredential(ctx.viewer!, vaultId, key, takeInput(ctx, putVaultCredentialBody, input))),
  }),
);
builder.mutationField('deleteVaultCredential', (t) =>
  t.field({
    type: VaultType,
    description: 'Delete a credential; live sessions using the vault lose its header on their next request',
    args: { vaultId: t.arg.string({ required: true }), key: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { vaultId, key }, ctx) => vaultView(await deleteCredential(ctx.viewer!, vaultId, key)),
  }),
);
