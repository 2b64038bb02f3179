// /agents: CRUD, archive, prompt versions, secrets. Bodies are validated by the domain's zod
// schemas (src/agents/rules.ts) and passed as the GraphQL inputs unchanged (same camelCase names).
import { z } from 'zod';
import { defineRoute } from '../route.js';
import { Ok, Timestamp } from '../schemas.js';
import {
  AGENT_TYPES, CAPABILITY_IDS, createAgentBody, patchAgentBody, putPromptBody, putSecretBody, listAgentsQuery,
} from '../../src/agents/rules.js';
import { REASONING_EFFORT_VALUES } from '../../src/sessions/contract.js';

const LIST_FIELDS = 'id name displayName agentType llm harnessVersion reasoningEffort capabilities version archived sessionCount createdAt';
const DETAIL_FIELDS = `${LIST_FIELDS} slug description prompt promptVersion metadata defaultSessionId universe
  mcpServers { type name url tools { include exclude } }
  skills { ... on AgentSkillRef { type skillId version } ... on AgentGithubSkill { type url ref tokenSecretRef } }
  instructions { name content }
  customData { id name kind scope description uri config }`;

// ── response shapes (OpenAPI) ───────────────────────────────────────────────────────────────

const AgentListItem = z.object({
  id: z.string().describe('agent_<id>'),
  name: z.string().describe('prompt/display label only, not the handle'),
  displayName: z.string(),
  agentType: z.enum(AGENT_TYPES),
  llm: z.string(),
  harnessVersion: z.string().nullable().describe('engine CLI version the sessions run'),
  reasoningEffort: z.enum(REASONING_EFFORT_VALUES).nullable().describe('null: the engine default'),
  capabilities: z.array(z.enum(CAPABILITY_IDS)),
  version: z.int().min(1),
  archived: z.boolean(),
  sessionCount: z.int().min(0),
  createdAt: Timestamp,
}).meta({ id: 'AgentListItem' });

const McpServer = z.object({
  type: z.literal('url'),
  name: z.string(),
  url: z.string(),
  tools: z.object({ include: z.array(z.string()), exclude: z.array(z.string()) }),
}).meta({ id: 'McpServer', description: 'Remote tool-server reference; runtime authentication fields are never returned' });

const SkillAttachment = z.discriminatedUnion('type', [
  z.object({ type: z.literal('skill'), skillId: z.string(), version: z.string().describe('latest or a skr_ revision id') }),
  z.object({
    type: z.literal('github'), url: z.string(),
    ref: z.string().nullable().describe('branch or commit SHA; null: the default branch'),
    tokenSecretRef: z.string().nullable().describe('agent secret holding a clone token'),
  }),
]).meta({ id: 'SkillAttachment' });

const CustomDataItem = z.object({
  id: z.string(), name: z.string(), kind: z.enum(['spreadsheet', 'doc', 'private_api', 'other']), scope: z.enum(['creator', 'user']),
  description: z.string().nullable(), uri: z.string().nullable(), config: z.record(z.string(), z.string()),
}).meta({ id: 'CustomDataItem' });

const InstructionFile = z.object({ name: z.string(), content: z.string() }).meta({ id: 'InstructionFile' });

const AgentDetail = AgentListItem.extend({
  slug: z.string().describe('the unique handle minted from displayName at create'),
  description: z.string().nullable(),
  prompt: z.string().nullable().describe('the active prompt version'),
  promptVersion: z.int().nullable(),
  mcpServers: z.array(McpServer),
  skills: z.array(SkillAttachment),
  instructions: z.array(InstructionFile),
  customData: z.array(CustomDataItem),
  metadata: z.record(z.string(), z.unknown()),
  defaultSessionId: z.string().nullable().describe('the session the service verbs target when addressed by agent id'),
  universe: z.string().describe('the universe slug'),
}).meta({ id: 'Agent' });

const AgentBody = z.object({ agent: AgentDetail });

const PromptVersion = z.object({
  version: z.int(), note: z.string().nullable(), createdAt: Timestamp, active: z.boolean(), content: z.string(),
}).meta({ id: 'PromptVersion' });

const SecretKey = z.object({ key: z.string(), description: z.string() }).meta({ id: 'SecretKey' });

// ── routes ──────────────────────────────────────────────────────────────────────────────────

const idParam = ({ params }: { params: Record<string, string> }) => ({ id: params.id });

export const agentRoutes = [
  defineRoute({
    method: 'GET', path: '/agents', operationId: 'listAgents', tag: 'Agents', scope: 'read',
    summary: 'List the agents of the universe (list items), newest first (at most 1000; GraphQL `agents` pages through any number)',
    query: listAgentsQuery,
    document: `query Agents($archived: Boolean) { agents(first: 1000, archived: $archived) { edges { node { ${LIST_FIELDS} } } } }`,
    variables: ({ query }) => ({ archived: query.archived === undefined ? null : query.archived === 'true' }),
    result: (d) => ({ agents: d.agents.edges.map((e: any) => e.node) }),
    response: z.object({ agents: z.array(AgentListItem) }),
  }),
  defineRoute({
    method: 'POST', path: '/agents', operationId: 'createAgent', tag: 'Agents', scope: 'write',
    summary: 'Create an agent (an empty body makes a hermes agent with no capabilities); provisions nothing',
    body: createAgentBody,
    document: `mutation CreateAgent($input: CreateAgentInput) { createAgent(input: $input) { ${DETAIL_FIELDS} } }`,
    variables: ({ body }) => ({ input: body }),
    result: (d) => ({ agent: d.createAgent }),
    status: 201,
    idempotent: true,
    response: AgentBody,
    errors: ['invalid_request', 'invalid_spec'],
  }),
  defineRoute({
    method: 'GET', path: '/agents/{id}', operationId: 'getAgent', tag: 'Agents', scope: 'read',
    summary: 'One agent (detail)',
    document: `query Agent($id: String!) { agent(id: $id) { ${DETAIL_FIELDS} } }`,
    variables: idParam,
    result: (d) => ({ agent: d.agent }),
    response: AgentBody,
  }),
  defineRoute({
    method: 'PATCH', path: '/agents/{id}', operationId: 'updateAgent', tag: 'Agents', scope: 'write',
    summary: 'Update an agent; omitted fields are preserved; version is bumped; archived agents answer 409 conflict',
    body: patchAgentBody,
    document: `mutation UpdateAgent($id: String!, $input: UpdateAgentInput!) { updateAgent(id: $id, input: $input) { ${DETAIL_FIELDS} } }`,
    variables: ({ params, body }) => ({ id: params.id, input: body }),
    result: (d) => ({ agent: d.updateAgent }),
    response: AgentBody,
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
    summary: 'Archive an agent: read-only from then on, running sessions keep running, new sessions are rejected; idempotent',
    document: `mutation ArchiveAgent($id: String!) { archiveAgent(id: $id) { ${DETAIL_FIELDS} } }`,
    variables: idParam,
    result: (d) => ({ agent: d.archiveAgent }),
    response: AgentBody,
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
    response: z.object({ secrets: z.array(SecretKey) }),
  }),
  defineRoute({
    method: 'PUT', path: '/agents/{id}/secrets/{key}', operationId: 'setAgentSecret', tag: 'Agents', scope: 'write',
    summary: 'Create or replace a secret (write-only, encrypted at rest); key matches ^[A-Za-z_][A-Za-z0-9_]{0,127}$',
    body: putSecretBody,
    document: `mutation SetSecret($id: String!, $key: String!, $value: String!, $description: String) { setAgentSecret(agentId: $id, key: $key, value: $value, description: $description) }`,
    variables: ({ params, body }) => ({ id: params.id, key: params.key, value: body.value, description: body.description ?? null }),
    result: () => ({ ok: true }),
    response: Ok,
    errors: ['invalid_request', 'conflict'],
  }),
  defineRoute({
    method: 'DELETE', path: '/agents/{id}/secrets/{key}', operationId: 'deleteAgentSecret', tag: 'Agents', scope: 'write',
    summary: 'Delete a secret (404 when the key is not declared)',
    document: `mutation DeleteSecret($id: String!, $key: String!) { deleteAgentSecret(agentId: $id, key: $key) }`,
    variables: ({ params }) => ({ id: params.id, key: params.key }),
    result: () => ({ ok: true }),
    response: Ok,
    errors: ['invalid_request', 'conflict'],
  }),
];
