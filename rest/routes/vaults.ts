// /vaults: credentials the egress proxy injects for a session's sandbox (values write-only).
// Bodies and answers are the zod schemas of src/vaults/contract.ts; documents alias their root
// field to the answer's key.
import { z } from 'zod';
import { defineRoute } from '../route.js';
import { Ok } from '../schemas.js';
import { selectionOf } from '../../src/contract/values.js';
import { connectionCursor } from '../../src/pagination/page-token.js';
import { createVaultBody, putVaultCredentialBody, vaultBody, vaultList } from '../../src/vaults/contract.js';
import { nextCursorOf, nodesOf } from '../connections.js';

const VAULT = selectionOf(vaultBody);
const KEY_NOTE = 'key matches ^[A-Za-z0-9_.-]{1,128}$';

export const vaultRoutes = [
  defineRoute({
    method: 'GET',
    path: '/vaults',
    operationId: 'listVaults',
    tag: 'Vaults',
    scope: 'read',
    summary: 'Vaults of the universe, newest first (credential values are never returned)',
    query: z.strictObject({
      limit: z.coerce.number().int().min(1).max(100).default(20).describe('1 to 100, default 20'),
      page: connectionCursor('vault').optional().describe('the next_page of the previous answer'),
    }),
    document: `query Vaults($first: Int, $after: String) { vaults(first: $first, after: $after) { edges { node { ${VAULT} } } pageInfo { hasNextPage endCursor } } }`,
    variables: ({ query }) => ({ first: query.limit, after: query.page ?? null }),
    pick: (data) => ({ data: nodesOf(data.vaults), nextPage: nextCursorOf(data.vaults) }),
    response: vaultList,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'POST',
    path: '/vaults',
    operationId: 'createVault',
    tag: 'Vaults',
    scope: 'write',
    summary: 'Create an empty vault',
    body: createVaultBody,
    document: `mutation Create($input: CreateVaultInput!) { vault: createVault(input: $input) { ${VAULT} } }`,
    pick: (data) => data.vault,
    status: 201,
    idempotent: true,
    response: vaultBody,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'GET',
    path: '/vaults/{id}',
    operationId: 'getVault',
    tag: 'Vaults',
    scope: 'read',
    summary: 'One vault: its credentials’ keys, hosts and headers (never values)',
    document: `query Vault($id: String!) { vault(id: $id) { ${VAULT} } }`,
    pick: (data) => data.vault,
    response: vaultBody,
  }),
  defineRoute({
    method: 'DELETE',
    path: '/vaults/{id}',
    operationId: 'deleteVault',
    tag: 'Vaults',
    scope: 'write',
    summary: 'Delete a vault and its credentials; live sessions listing it lose its headers on their next request',
    document: `mutation Delete($id: String!) { ok: deleteVault(id: $id) }`,
    response: Ok,
  }),
  defineRoute({
    method: 'PUT',
    path: '/vaults/{id}/credentials/{key}',
    operationId: 'putVaultCredential',
    tag: 'Vaults',
    scope: 'write',
    summary: `Create or replace a credential (write-only, encrypted at rest, injected by the egress proxy as \`header: prefix+value\` on requests to host); ${KEY_NOTE}`,
    note: 'egress_header_conflict when it would set one header on one host to a different value than another credential of the vault, or, for a live session using the vault, than its repository tokens, its agent’s egress secrets or its other vaults; nothing is stored then.',
    body: putVaultCredentialBody,
    document: `mutation Put($id: String!, $key: String!, $input: PutVaultCredentialInput!) { vault: putVaultCredential(vaultId: $id, key: $key, input: $input) { ${VAULT} } }`,
    pick: (data) => data.vault,
    response: vaultBody,
    errors: ['invalid_request', 'egress_header_conflict'],
  }),
  defineRoute({
    method: 'DELETE',
    path: '/vaults/{id}/credentials/{key}',
    operationId: 'deleteVaultCredential',
    tag: 'Vaults',
    scope: 'write',
    summary: 'Delete a credential (404 when the vault has no such key); live sessions lose its header on their next request',
    document: `mutation DeleteCredential($id: String!, $key: String!) { vault: deleteVaultCredential(vaultId: $id, key: $key) { ${VAULT} } }`,
    pick: (data) => data.vault,
    response: vaultBody,
    errors: ['invalid_request'],
  }),
];
