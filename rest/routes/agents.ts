// /agents: CRUD, archive, prompt versions, secrets. Bodies and answers are the zod schemas of
// src/agents/contract.ts; each document aliases its root field to the answer's key and selects
// the answer's fields, so the GraphQL result converts to the REST body by the same schema.
import { defineRoute } from '../route.js';
import { Ok } from '../schemas.js';
import { selectionOf } from '../../src/contract/values.js';
import {
  agentAnswer, agentBody, agentList, agentListItem, createAgentBody, listAgentsQuery, patchAgentBody, promptUpdateResult,
  promptVersionBody, promptVersionList, putPromptBody, putSecretBody, secretKeyBody, secretKeyList,
} from '../../src/agents/contract.js';
import { nextCursorOf, nodesOf } from '../connections.js';

const AGENT = selectionOf(agentBody);

export const agentRoutes = [
  defineRoute({
    method: 'GET', path: '/agents', operationId: 'listAgents', tag: 'Agents', scope: 'read',
    summary: 'List the agents of the universe (list items), newest first; pages of `limit` (default 1000), the next one by `?cursor=` with `nextCursor`',
    query: listAgentsQuery,
    document: `query Agents($archived: Boolean, $first: Int, $after: String) { agents(first: $first, after: $after, archived: $archived) { edges { node { ${selectionOf(agentListItem)} } } pageInfo { hasNextPage endCursor } } }`,
    variables: ({ query }) => ({ archived: query.archived === undefined ? null : query.archived === 'true', first: query.limit, after: query.cursor ?? null }),
    pick: (data) => ({ agents: nodesOf(data.agents), nextCursor: nextCursorOf(data.agents) }),
    response: agentList,
  }),
  defineRoute({
    method: 'POST', path: '/agents', operationId: 'createAgent', tag: 'Agents', scope: 'write',
    summary: 'Create an agent (an empty body makes a hermes agent with no capabilities); provisions nothing',
    body: createAgentBody,
    document: `mutation CreateAgent($input: CreateAgentInput) { agent: createAgent(input: $input) { ${AGENT} } }`,
    status: 201,
    idempotent: true,
    response: agentAnswer,
    errors: ['invalid_request', 'invalid_spec', 'egress_header_conflict'],
  }),
  defineRoute({
    method: 'GET', path: '/agents/{id}', operationId: 'getAgent', tag: 'Agents', scope: 'read',
    summary: 'One agent (detail)',
    document: `query Agent($id: String!) { agent(id: $id) { ${AGENT} } }`,
    response: agentAnswer,
  }),
  defineRoute({
    method: 'PATCH', path: '/agents/{id}', operationId: 'updateAgent', tag: 'Agents', scope: 'write',
    summary: 'Update an agent; omitted fields are preserved; version is bumped; archived agents answer 409 conflict',
    body: patchAgentBody,
    document: `mutation UpdateAgent($id: String!, $input: UpdateAgentInput!) { agent: updateAgent(id: $id, input: $input) { ${AGENT} } }`,
    response: agentAnswer,
    errors: ['invalid_request', 'invalid_spec', 'version_conflict', 'conflict', 'egress_header_conflict'],
  }),
  defineRoute({
    method: 'DELETE', path: '/agents/{id}', operationId: 'deleteAgent', tag: 'Agents', scope: 'admin',
    summary: 'Delete an agent that has no sessions',
    document: `mutation DeleteAgent($id: String!) { ok: deleteAgent(id: $id) }`,
    response: Ok,
    errors: ['agent_has_sessions'],
  }),
  defineRoute({
    method: 'POST', path: '/agents/{id}/archive', operationId: 'archiveAgent', tag: 'Agents', scope: 'admin',
    summary: 'Archive an agent: read-only from then on, running sessions keep running, new sessions are rejected; idempotent',
    document: `mutation ArchiveAgent($id: String!) { agent: archiveAgent(id: $id) { ${AGENT} } }`,
    response: agentAnswer,
  }),
  defineRoute({
    method: 'PUT', path: '/agents/{id}/prompt', operationId: 'setAgentPrompt', tag: 'Agents', scope: 'write',
    summary: 'Save the prompt; a changed prompt becomes a new version used by sessions started after the save',
    body: putPromptBody,
    document: `mutation SetPrompt($id: String!, $input: PutAgentPromptInput!) { result: setAgentPrompt(agentId: $id, input: $input) { ${selectionOf(promptUpdateResult)} } }`,
    pick: (data) => data.result,
    response: promptUpdateResult,
    errors: ['invalid_request', 'conflict'],
  }),
  defineRoute({
    method: 'GET', path: '/agents/{id}/prompt/versions', operationId: 'listAgentPromptVersions', tag: 'Agents', scope: 'read',
    summary: 'Prompt versions, newest first',
    document: `query PromptVersions($id: String!) { versions: agentPromptVersions(agentId: $id) { ${selectionOf(promptVersionBody)} } }`,
    response: promptVersionList,
  }),
  defineRoute({
    method: 'GET', path: '/agents/{id}/secrets', operationId: 'listAgentSecrets', tag: 'Agents', scope: 'read',
    summary: 'Declared secret keys (never values)',
    document: `query Secrets($id: String!) { secrets: agentSecrets(agentId: $id) { ${selectionOf(secretKeyBody)} } }`,
    response: secretKeyList,
  }),
  defineRoute({
    method: 'PUT', path: '/agents/{id}/secrets/{key}', operationId: 'setAgentSecret', tag: 'Agents', scope: 'write',
    summary: 'Create or replace a secret (write-only, encrypted at rest); key matches ^[A-Za-z_][A-Za-z0-9_]{0,127}$',
    body: putSecretBody,
    document: `mutation SetSecret($id: String!, $key: String!, $input: PutAgentSecretInput!) { ok: setAgentSecret(agentId: $id, key: $key, input: $input) }`,
    response: Ok,
    errors: ['invalid_request', 'conflict', 'egress_header_conflict'],
  }),
  defineRoute({
    method: 'DELETE', path: '/agents/{id}/secrets/{key}', operationId: 'deleteAgentSecret', tag: 'Agents', scope: 'write',
    summary: 'Delete a secret (404 when the key is not declared)',
    document: `mutation DeleteSecret($id: String!, $key: String!) { ok: deleteAgentSecret(agentId: $id, key: $key) }`,
    response: Ok,
    errors: ['invalid_request', 'conflict'],
  }),
];
