// Agents: the Agent type (list and detail fields), the `agents` connection and `agent` lookup,
// mutations, prompt versions and secrets (keys only; values are write-only). Access is by
// authScopes (read queries, write mutations, admin archive/delete); the domain rules in
// src/agents/agents.ts scope every id to the viewer's universe.
import { builder } from './builder.js';
import { AppError } from '../errors.js';
import { prisma } from '../db/client.js';
import {
  createAgent, updateAgent, archiveAgent, deleteAgent, setPrompt, listSecrets, putSecret, deleteSecret, findAgent,
} from '../agents/agents.js';
import { customDataView, instructionsView, mcpServersView, metadataView, skillsView } from '../agents/shapes.js';
import { agentDetailRow, rowCovers } from '../agents/detail-row.js';
import {
  AgentTypeEnum, ReasoningEffortEnum, AgentMcpServer, AgentSkillAttachment, AgentCustomData, AgentInstructionFile,
  CreateAgentInput, UpdateAgentInput,
} from './agent-parts.js';
import type { AgentType } from '../agents/rules.js';
import type { REASONING_EFFORT_VALUES } from '../sessions/contract.js';

type Effort = (typeof REASONING_EFFORT_VALUES)[number];
const ACTIVE_PROMPT = { promptVersions: { where: { active: true }, select: { version: true, content: true } } } as const;

export const AgentRef = builder.prismaObject('Agent', {
  fields: (t) => ({
    // List item fields.
    id: t.exposeID('id', { description: 'agent_<id>, the agent\'s only address' }),
    name: t.exposeString('name', { description: 'prompt/display label, not the handle' }),
    displayName: t.exposeString('displayName'),
    agentType: t.field({ type: AgentTypeEnum, resolve: (a) => a.agentType as AgentType }),
    llm: t.exposeString('llm'),
    harnessVersion: t.exposeString('harnessVersion', { nullable: true }),
    reasoningEffort: t.field({ type: ReasoningEffortEnum, nullable: true, description: 'null: the engine default', resolve: (a) => a.reasoningEffort as Effort | null }),
    capabilities: t.exposeStringList('capabilities'),
    version: t.exposeInt('version', { description: 'bumped on every update' }),
    archived: t.exposeBoolean('archived'),
    sessionCount: t.relationCount('sessions'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    // Detail fields.
    slug: t.exposeString('slug', { description: 'the unique handle minted from displayName at create' }),
    description: t.exposeString('description', { nullable: true }),
    prompt: t.string({ nullable: true, description: 'the active prompt version', select: ACTIVE_PROMPT, resolve: (a) => a.promptVersions[0]?.content ?? null }),
    promptVersion: t.int({ nullable: true, select: ACTIVE_PROMPT, resolve: (a) => a.promptVersions[0]?.version ?? null }),
    mcpServers: t.field({ type: [AgentMcpServer], resolve: (a) => mcpServersView(a.mcpServers) }),
    skills: t.field({ type: [AgentSkillAttachment], resolve: (a) => skillsView(a.skills) }),
    instructions: t.field({ type: [AgentInstructionFile], resolve: (a) => instructionsView(a.instructions) }),
    customData: t.field({ type: [AgentCustomData], resolve: (a) => customDataView(a.customData) }),
    metadata: t.field({ type: 'JSONObject', resolve: (a) => metadataView(a.metadata) }),
    defaultSessionId: t.exposeString('defaultSessionId', { nullable: true, description: 'the session the service verbs target when addressed by agent id' }),
    universe: t.string({ description: 'slug of the universe', select: { universe: { select: { slug: true } } }, resolve: (a) => a.universe.slug }),
  }),
});

builder.prismaObject('PromptVersion', {
  fields: (t) => ({
    version: t.exposeInt('version'),
    note: t.exposeString('note', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    active: t.exposeBoolean('active'),
    content: t.exposeString('content'),
  }),
});

const SecretKey = builder.simpleObject('SecretKey', {
  description: 'A declared agent secret; its value is never returned',
  fields: (t) => ({ key: t.string(), description: t.string() }),
});
const PromptUpdateResult = builder.simpleObject('PromptUpdateResult', {
  fields: (t) => ({
    version: t.int({ description: 'the active prompt version after the save' }),
    unchanged: t.boolean({ description: 'the content equals the active version; nothing was written' }),
  }),
});

// ── queries ─────────────────────────────────────────────────────────────────────────────────

const listWhere = (universeId: string, archived: boolean | null | undefined) => ({
  universeId, ...(archived == null ? {} : { archived }),
});

builder.queryField('agents', (t) =>
  t.prismaConnection({
    type: 'Agent',
    cursor: 'id',
    maxSize: 1000,
    defaultSize: 100,
    description: 'Agents of the universe, newest first (ids sort by creation)',
    args: { archived: t.arg.boolean({ description: 'only archived (true) or only active (false) agents; both when omitted' }) },
    authScopes: { read: true },
    totalCount: (_conn, args, ctx) => prisma.agent.count({ where: listWhere(ctx.viewer!.universe.id, args.archived) }),
    resolve: (query, _root, args, ctx) =>
      prisma.agent.findMany({ ...query, where: listWhere(ctx.viewer!.universe.id, args.archived), orderBy: { id: 'desc' } }),
  }),
);

builder.queryField('agent', (t) =>
  t.prismaField({
    type: 'Agent',
    args: { id: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (query, _root, { id }, ctx) => {
      // One statement: the universe condition masks other universes' agents as not found. A
      // selection the detail row does not carry goes through Prisma's relation loading.
      const universe = ctx.viewer!.universe;
      const agent = rowCovers(query)
        ? await agentDetailRow(universe, id)
        : await prisma.agent.findFirst({ ...query, where: { id, universeId: universe.id } });
      if (!agent) throw new AppError('not_found', 'agent not found');
      return agent;
    },
  }),
);

builder.queryField('agentPromptVersions', (t) =>
  t.prismaField({
    type: ['PromptVersion'],
    description: 'Prompt versions, newest first',
    args: { agentId: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (query, _root, { agentId }, ctx) => {
      const agent = await findAgent(ctx.viewer!, agentId);
      return prisma.promptVersion.findMany({ ...query, where: { agentId: agent.id }, orderBy: { version: 'desc' } });
    },
  }),
);

builder.queryField('agentSecrets', (t) =>
  t.field({
    type: [SecretKey],
    description: 'Declared secret keys; values are never returned',
    args: { agentId: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: (_root, { agentId }, ctx) => listSecrets(ctx.viewer!, agentId),
  }),
);

// ── mutations ───────────────────────────────────────────────────────────────────────────────

/** Re-reads a written agent with the selection the client asked for (deleted meanwhile: 404). */
async function reload<Q extends object>(query: Q, id: string) {
  const agent = await prisma.agent.findUnique({ ...query, where: { id } });
  if (!agent) throw new AppError('not_found', 'agent not found');
  return agent;
}

/** On create an explicit null means the same as omitting the field (GraphQL's optional inputs). */
const withoutNulls = (input: Record<string, unknown>) => Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null));

builder.mutationField('createAgent', (t) =>
  t.prismaField({
    type: 'Agent',
    description: 'Creates an agent (REST POST /v1/agents); provisions nothing',
    args: { input: t.arg({ type: CreateAgentInput }) },
    authScopes: { write: true },
    resolve: async (query, _root, { input }, ctx) => reload(query, (await createAgent(ctx.viewer!, withoutNulls({ ...input }))).id),
  }),
);

builder.mutationField('updateAgent', (t) =>
  t.prismaField({
    type: 'Agent',
    description: 'Updates an agent (REST PATCH /v1/agents/{id}); omitted fields are preserved; archived agents answer 409 conflict',
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: UpdateAgentInput, required: true }) },
    authScopes: { write: true },
    resolve: async (query, _root, { id, input }, ctx) => reload(query, (await updateAgent(ctx.viewer!, id, { ...input })).id),
  }),
);

builder.mutationField('archiveAgent', (t) =>
  t.prismaField({
    type: 'Agent',
    description: 'Archives an agent: read-only from then on; running sessions keep running, new sessions are rejected. Idempotent',
    args: { id: t.arg.string({ required: true }) },
    authScopes: { admin: true },
    resolve: async (query, _root, { id }, ctx) => reload(query, (await archiveAgent(ctx.viewer!, id)).id),
  }),
);

builder.mutationField('deleteAgent', (t) =>
  t.boolean({
    description: 'Deletes an agent with no sessions (409 agent_has_sessions otherwise)',
    args: { id: t.arg.string({ required: true }) },
    authScopes: { admin: true },
    resolve: async (_root, { id }, ctx) => {
      await deleteAgent(ctx.viewer!, id);
      return true;
    },
  }),
);

builder.mutationField('setAgentPrompt', (t) =>
  t.field({
    type: PromptUpdateResult,
    description: 'Saves the prompt; a changed prompt becomes a new version used by sessions started after the save',
    args: { agentId: t.arg.string({ required: true }), prompt: t.arg.string({ required: true }), note: t.arg.string() },
    authScopes: { write: true },
    resolve: (_root, args, ctx) => setPrompt(ctx.viewer!, args.agentId, { prompt: args.prompt, ...(args.note != null ? { note: args.note } : {}) }),
  }),
);

builder.mutationField('setAgentSecret', (t) =>
  t.boolean({
    description: 'Creates or replaces a write-only secret (encrypted at rest, never returned)',
    args: {
      agentId: t.arg.string({ required: true }),
      key: t.arg.string({ required: true }),
      value: t.arg.string({ required: true }),
      description: t.arg.string(),
    },
    authScopes: { write: true },
    resolve: async (_root, args, ctx) => {
      await putSecret(ctx.viewer!, args.agentId, args.key, { value: args.value, ...(args.description != null ? { description: args.description } : {}) });
      return true;
    },
  }),
);

builder.mutationField('deleteAgentSecret', (t) =>
  t.boolean({
    args: { agentId: t.arg.string({ required: true }), key: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_root, args, ctx) => {
      await deleteSecret(ctx.viewer!, args.agentId, args.key);
      return true;
    },
  }),
);
