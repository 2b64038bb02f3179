// /environments: packages and a network allow-list sessions start with; list, detail, patch,
// archive. Bodies and answers are the zod schemas of src/environments/contract.ts; documents
// alias their root field.
import { z } from 'zod';
import { defineRoute } from '../route.js';
import { selectionOf } from '../../src/contract/values.js';
import { connectionCursor } from '../../src/pagination/page-token.js';
import { createEnvironmentBody, environmentBody, environmentList, patchEnvironmentBody } from '../../src/environments/contract.js';
import { nextCursorOf, nodesOf } from '../connections.js';

const ENVIRONMENT = selectionOf(environmentBody);

export const environmentRoutes = [
  defineRoute({
    method: 'GET',
    path: '/environments',
    operationId: 'listEnvironments',
    tag: 'Environments',
    scope: 'read',
    summary: 'Environments of the universe (archived ones included), newest first',
    query: z.strictObject({
      limit: z.coerce.number().int().min(1).max(100).default(20).describe('1 to 100, default 20'),
      page: connectionCursor('env').optional().describe('the next_page of the previous answer'),
    }),
    document: `query Environments($first: Int, $after: String) { environments(first: $first, after: $after) { edges { node { ${ENVIRONMENT} } } pageInfo { hasNextPage endCursor } } }`,
    variables: ({ query }) => ({ first: query.limit, after: query.page ?? null }),
    // Keys as GraphQL spells them: the response schema converts `nextPage` to `next_page`.
    pick: (data) => ({ data: nodesOf(data.environments), nextPage: nextCursorOf(data.environments) }),
    response: environmentList,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'POST',
    path: '/environments',
    operationId: 'createEnvironment',
    tag: 'Environments',
    scope: 'write',
    summary: 'Create an environment: packages (apt, npm, pip) installed when a session starts, and the network allow-list',
    body: createEnvironmentBody,
    document: `mutation Create($input: CreateEnvironmentInput!) { environment: createEnvironment(input: $input) { ${ENVIRONMENT} } }`,
    pick: (data) => data.environment,
    status: 201,
    idempotent: true,
    response: environmentBody,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'GET',
    path: '/environments/{id}',
    operationId: 'getEnvironment',
    tag: 'Environments',
    scope: 'read',
    summary: 'One environment',
    document: `query Environment($id: String!) { environment(id: $id) { ${ENVIRONMENT} } }`,
    pick: (data) => data.environment,
    response: environmentBody,
  }),
  defineRoute({
    method: 'PATCH',
    path: '/environments/{id}',
    operationId: 'updateEnvironment',
    tag: 'Environments',
    scope: 'write',
    summary:
      'Update an environment; every field optional (a packages change is a new version, installed afresh by new sessions; the allow-list applies to live sessions at once)',
    body: patchEnvironmentBody,
    document: `mutation Update($id: String!, $input: UpdateEnvironmentInput!) { environment: updateEnvironment(id: $id, input: $input) { ${ENVIRONMENT} } }`,
    pick: (data) => data.environment,
    response: environmentBody,
    errors: ['invalid_request', 'conflict'],
  }),
  defineRoute({
    method: 'POST',
    path: '/environments/{id}/archive',
    operationId: 'archiveEnvironment',
    tag: 'Environments',
    scope: 'write',
    summary: 'Archive the environment (idempotent): new sessions naming it are refused with 409 conflict; running ones keep it',
    document: `mutation Archive($id: String!) { environment: archiveEnvironment(id: $id) { ${ENVIRONMENT} } }`,
    pick: (data) => data.environment,
    response: environmentBody,
  }),
];
