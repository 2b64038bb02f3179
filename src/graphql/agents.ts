// Agents: the Agent type (list and detail fields), connection, mutations, prompt versions and
// secrets (keys only; values are write-only).
import { builder } from './builder.js';
import { AppError } from '../errors.js';
import { prisma } from '../db/client.js';
import { createAgent, updateAgent, archiveAgent, deleteAgent, setPrompt, listSecrets, putSecret, deleteSecret, findAgent } from '../agents/agents.js';

const PROMPT_SELECT = { promptVersions: { where: { active: true }, select: { version: true, content: true } } } as const;

export const AgentType = builder.prismaObject('Agent', {
  fields: (t) => ({
    id: t.exposeID('id'),
    slug: t.exposeString('slug', { description: 'The unique addressable handle minted from displayName' }),
    name: t.exposeString('name'),
    displayName: t.exposeString('displayName'),
    description: t.exposeString('description', { nullable: true }),
    agentType: t.exposeString('agentType'),
    llm: t.exposeString('llm'),
    harnessVersion: t.exposeString('harnessVersion', { nullable: true }),
    reasoningEffort: t.exposeString('reasoningEffort', { nullable: true }),
    capabilities: t.exposeStringList('capabilities'),
    version: t.exposeInt('version'),
    archived: t.exposeBoolean('archived'),
    sessionCount: t.relationCount('sessions'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    prompt: t.string({ nullable: true, select: PROMPT_SELECT, resolve: (a) => a.promptVersions[0]?.content ?? null }),
    promptVersion: t.int({ nullable: true, select: PROMPT_SELECT, resolve: (a) => a.promptVersions[0]?.version ?? null }),
    mcpServers: t.field({ type: ['JSONObject'], resolve: (a) => a.mcpServers as Record<string, unknown>[] }),
    skills: t.field({ type: ['JSONObject'], resolve: (a) => a.skills as Record<string, unknown>[] }),
    instructions: t.field({ type: ['JSONObject'], resolve: (a) => a.instructions as Record<string, unknown>[] }),
    customData: t.field({ type: ['JSONObject'], resolve: (a) => a.customData as Record<string, unknown>[] }),
    metadata: t.field({ type: 'JSONObject', resolve: (a) => a.metadata as Record<string, unknown> }),
    defaultSessionId: t.exposeString('defaultSessionId', { nullable: true }),
    universe: t.string({ select: { universe: { select: { slug: true } } }, resolve: (a) => a.universe.slug }),
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
  fields: (t) => ({ key: t.string(), description: t.string() }),
});
const PromptUpdateResult = builder.simpleObject('PromptUpdateResult', {
  fields: (t) => ({ version: t.int(), unchanged: t.boolean() }),
});

builder.queryField('agents', (t) =>
  t.prismaConnection({
    type: 'Agent',
    cursor: 'id',
    maxSize: 1000,
    defaultSize: 100,
    args: { archived: t.arg.boolean({ description: 'Only archived (true) or only active (false) agents' }) },
    authScopes: { read: true },
    resolve: (query, _root, args, ctx) =>
      prisma.agent.findMany({
        ...query,
        where: { universeId: ctx.viewer!.universe.id, ...(args.archived == null ? {} : { archived: args.archived }) },
        orderBy: { id: 'desc' },
      }),
  }),
);

builder.queryField('agent', (t) =>
  t.prismaField({
    type: 'Agent',
    args: { id: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (query, _root, { id }, ctx) => {
      // One query: the universe condition masks other universes' agents as not found.
      const agent = await prisma.agent.findFirst({ ...query, where: { id, universeId: ctx.viewer!.universe.id } });
      if (!agent) throw new AppError('not_found', 'agent not found');
      return agent;
    },
  }),
);

builder.queryField('agentPromptVersions', (t) =>
  t.prismaField({
    type: ['PromptVersion'],
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

const reload = (query: object, id: string) => prisma.agent.findUniqueOrThrow({ ...query, where: { id } });

builder.mutationField('createAgent', (t) =>
  t.prismaField({
    type: 'Agent',
    description: 'Body as REST POST /v1/agents; every field optional (an empty object makes a hermes agent with no capabilities)',
    args: { input: t.arg({ type: 'JSONObject', required: false }) },
    authScopes: { write: true },
    resolve: async (query, _root, { input }, ctx) => reload(query, (await createAgent(ctx.viewer!, input ?? {})).id),
  }),
);

builder.mutationField('updateAgent', (t) =>
  t.prismaField({
    type: 'Agent',
    description: 'Body as REST PATCH /v1/agents/{id}; omitted fields are preserved',
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: 'JSONObject', required: true }) },
    authScopes: { write: true },
    resolve: async (query, _root, { id, input }, ctx) => reload(query, (await updateAgent(ctx.viewer!, id, input)).id),
  }),
);

builder.mutationField('archiveAgent', (t) =>
  t.prismaField({
    type: 'Agent',
    args: { id: t.arg.string({ required: true }) },
    authScopes: { admin: true },
    resolve: async (query, _root, { id }, ctx) => reload(query, (await archiveAgent(ctx.viewer!, id)).id),
  }),
);

builder.mutationField('deleteAgent', (t) =>
  t.boolean({
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
    args: { agentId: t.arg.string({ required: true }), prompt: t.arg.string({ required: true }), note: t.arg.string() },
    authScopes: { write: true },
    resolve: (_root, args, ctx) => setPrompt(ctx.viewer!, args.agentId, { prompt: args.prompt, ...(args.note != null ? { note: args.note } : {}) }),
  }),
);

builder.mutationField('setAgentSecret', (t) =>
  t.boolean({
    args: { agentId: t.arg.string({ required: true }), key: t.arg.string({ required: true }), value: t.arg.string({ required: true }), description: t.arg.string() },
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
