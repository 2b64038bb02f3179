// /agents: CRUD, archive, prompt versions, secrets.
import { z } from 'zod';
import { defineRoute } from '../route.js';
import { Ok, Timestamp } from '../schemas.js';
import { createAgentBody, patchAgentBody, putPromptBody, putSecretBody } from '../../src/agents/rules.js';

const LIST_FIELDS = 'id name displayName agentType llm harnessVersion reasoningEffort capabilities version archived sessionCount createdAt';
const DETAIL_FIELDS = `${LIST_FIELDS} slug description prompt promptVersion mcpServers skills instructions customData metadata defaultSessionId universe`;

const AgentListItem = z.object({
  id: z.string(), name: z.string(), displayName: z.string(), agentType: z.string(), llm: z.string(),
  harnessVersion: z.string().nullable(), reasoningEffort: z.string().nullable(), capabilities: z.array(z.string()),
  version: z.int(), archived: z.boolean(), sessionCount: z.int(), createdAt: Timestamp,
}).meta({ id: 'AgentListItem' });

const AgentDetail = AgentListItem.extend({
  slug: z.string().describe('the unique handle minted from displayName'),
  description: z.string().nullable(),
  prompt: z.string().nullable(),
  promptVersion: z.int().nullable(),
  mcpServers: z.array(z.record(z.string(), z.unknown())),
  skills: z.array(z.record(z.string(), z.unknown())),
  instructions: z.array(z.record(z.string(), z.unknown())),
  customData: z.array(z.record(z.string(), z.unknown())),
  metadata: z.record(z.string(), z.unknown()),
  defaultSessionId: z.string().nullable(),
  universe: z.string(),
}).meta({ id: 'Agent' });

const PromptVersion = z.object({ version: z.int(), note: z.string().nullable(), createdAt: Timestamp, active: z.boolean(), content: z.string() }).meta({ id: 'PromptVersion' });

const idParam = ({ params }: { params: Record<string, string> }) => ({ id: params.id });

export const agentRoutes = [
  defineRoute({
    method: 'GET', path: '/agents', operationId: 'listAgents', tag: 'Agents', scope: 'read',
    summary: 'List agents of the universe, newest first',
    document: `query Agents { agents(first: 1000) { edges { node { ${LIST_FIELDS} } } } }`,
    result: (d) => ({ agents: d.agents.edges.map((e: any) => e.node) }),
    response: z.object({ agents: z.array(AgentListItem) }),
  }),
  defineRoute({
    method: 'POST', path: '/agents', operationId: 'createAgent', tag: 'Agents', scope: 'write',
    summary: 'Create an agent (an empty body makes a hermes agent with no capabilities); provisions nothing',
    body: createAgentBody,
    document: `mutation CreateAgent($input: JSONObject) { createAgent(input: $input) { ${DETAIL_FIELDS} } }`,
    variables: ({ body }) => ({ input: body }),
    result: (d) => ({ agent: d.createAgent }),
    status: 201,
    idempotent: true,
    response: z.object({ agent: AgentDetail }),
    errors: ['invalid_request', 'invalid_spec'],
  }),
  defineRoute({
    method: 'GET', path: '/agents/{id}', operationId: 'getAgent', tag: 'Agents', scope: 'read',
    summary: 'One agent (detail)',
    document: `query Agent($id: String!) { agent(id: $id) { ${DETAIL_FIELDS} } }`,
    variables: idParam,
    result: (d) => ({ agent: d.agent }),
    response: z.object({ agent: AgentDetail }),
  }),
  defineRoute({
    method: 'PATCH', path: '/agents/{id}', operationId: 'updateAgent', tag: 'Agents', scope: 'write',
    summary: 'Update an agent; omitted fields are preserved; version is bumped',
    body: patchAgentBody,
    document: `mutation UpdateAgent($id: String!, $input: JSONObject!) { updateAgent(id: $id, input: $input) { ${DETAIL_FIELDS} } }`,
    variables: ({ params, body }) => ({ id: params.id, input: body }),
    result: (d) => ({ agent: d.updateAgent }),
    response: z.object({ agent: AgentDetail }),
    errors: ['invalid_request', 'invalid_spec', 'version_conflict', 'conflict'],
  }),
  defineRoute({
    method: 'DELETE', path: '/agents/{id}', operationId: 'deleteAgent', tag: 'Agents', scope: 'admin',
    summary: 'Delete an agent that has no sessions',
    document: `mutation DeleteAgent($id: String!) { deleteAgent(id: $id) }`,
    variables: idParam,
    result: () => ({ ok: true }),
    response: Ok,
    errors: ['agent_has_sessions'],
  }),
  defineRoute({
    method: 'POST', path: '/agents/{id}/archive', operationId: 'archiveAgent', tag: 'Agents', scope: 'admin',
    summary: 'Archive an agent: read-only, running sessions keep running, new sessions are rejected',
    document: `mutation ArchiveAgent($id: String!) { archiveAgent(id: $id) { ${DETAIL_FIELDS} } }`,
    variables: idParam,
    result: (d) => ({ agent: d.archiveAgent }),
    response: z.object({ agent: AgentDetail }),
  }),
  defineRoute({
    method: 'PUT', path: '/agents/{id}/prompt', operationId: 'setAgentPrompt', tag: 'Agents', scope: 'write',
    summary: 'Save the prompt; a changed prompt becomes a new version used by sessions started after the save',
    body: putPromptBody,
    document: `mutation SetPrompt($id: String!, $prompt: String!, $note: String) { setAgentPrompt(agentId: $id, prompt: $prompt, note: $note) { version unchanged } }`,
    variables: ({ params, body }) => ({ id: params.id, prompt: body.prompt, note: body.note ?? null }),
    result: (d) => d.setAgentPrompt,
    response: z.object({ version: z.int(), unchanged: z.boolean() }).meta({ id: 'PromptUpdateResult' }),
    errors: ['invalid_request', 'conflict'],
  }),
  defineRoute({
    method: 'GET', path: '/agents/{id}/prompt/versions', operationId: 'listAgentPromptVersions', tag: 'Agents', scope: 'read',
    summary: 'Prompt versions, newest first',
    document: `query PromptVersions($id: String!) { agentPromptVersions(agentId: $id) { version note createdAt active content } }`,
    variables: idParam,
    result: (d) => ({ versions: d.agentPromptVersions }),
    response: z.object({ versions: z.array(PromptVersion) }),
  }),
  defineRoute({
    method: 'GET', path: '/agents/{id}/secrets', operationId: 'listAgentSecrets', tag: 'Agents', scope: 'read',
    summary: 'Declared secret keys (never values)',
    document: `query Secrets($id: String!) { agentSecrets(agentId: $id) { key description } }`,
    variables: idParam,
    result: (d) => ({ secrets: d.agentSecrets }),
    response: z.object({ secrets: z.array(z.object({ key: z.string(), description: z.string() }).meta({ id: 'SecretKey' })) }),
  }),
  defineRoute({
    method: 'PUT', path: '/agents/{id}/secrets/{key}', operationId: 'setAgentSecret', tag: 'Agents', scope: 'write',
    summary: 'Set a secret (write-only, encrypted at rest)',
    body: putSecretBody,
    document: `mutation SetSecret($id: String!, $key: String!, $value: String!, $description: String) { setAgentSecret(agentId: $id, key: $key, value: $value, description: $description) }`,
    variables: ({ params, body }) => ({ id: params.id, key: params.key, value: body.value, description: body.description ?? null }),
    result: () => ({ ok: true }),
    response: Ok,
    errors: ['invalid_request', 'conflict'],
  }),
  defineRoute({
    method: 'DELETE', path: '/agents/{id}/secrets/{key}', operationId: 'deleteAgentSecret', tag: 'Agents', scope: 'write',
    summary: 'Delete a secret',
    document: `mutation DeleteSecret($id: String!, $key: String!) { deleteAgentSecret(agentId: $id, key: $key) }`,
    variables: ({ params }) => ({ id: params.id, key: params.key }),
    result: () => ({ ok: true }),
    response: Ok,
    errors: ['invalid_request', 'conflict'],
  }),
];
