// Agents: the Agent type (list and detail fields), the `agents` connection and `agent` lookup,
// mutations, prompt versions and secrets (keys only; values are write-only). Inputs and outputs
// are derived from the zod schemas of src/agents/contract.ts (the ones REST validates with and
// OpenAPI documents); resolvers return the spec-shaped views of src/agents/view.ts. Access is by
// authScopes (read queries, write mutations, admin archive/delete); the domain rules in
// src/agents/agents.ts scope every id to the viewer's universe.
import { builder } from './builder.js';
import { AppError } from '../errors.js';
import { prisma } from '../db/client.js';
import type { Viewer } from '../auth/viewer.js';
import { createAgent, updateAgent, archiveAgent, deleteAgent, setPrompt, listSecrets, putSecret, deleteSecret, findAgent } from '../agents/agents.js';
import { agentDetailRow } from '../agents/detail-row.js';
import { agentView, agentViews } from '../agents/view.js';
import {
  agentBody,
  createAgentBody,
  patchAgentBody,
  promptUpdateResult,
  promptVersionBody,
  putPromptBody,
  putSecretBody,
  secretKeyBody,
  type AgentView,
  type PromptVersionView,
} from '../agents/contract.js';
import { inputOf, objectOf } from './graphql-types.js';
import { takeInput } from './input.js';
import { newestFirst } from './id-connection.js';

export const AgentType = objectOf(agentBody);
const PromptVersionType = objectOf(promptVersionBody);

/** The agent as answered now (deleted meanwhile: 404). One statement. */
async function agentNow(viewer: Viewer, id: string): Promise<AgentView> {
  const row = await agentDetailRow(viewer.universe, id);
  if (!row) throw new AppError('not_found', 'agent not found');
  return agentView(row);
}

// ── queries ─────────────────────────────────────────────────────────────────────────────────

const listWhere = (universeId: string, archived: boolean | null | undefined) => ({
  universeId,
  ...(archived == null ? {} : { archived }),
});

/** Each connection answered by `agents`, with how to count all its agents (only when asked). */
const totals = new WeakMap<object, () => Promise<number>>();

builder.queryField('agents', (t) =>
  t.connection(
    {
      type: AgentType,
      description: 'Agents of the universe, newest first (ids sort by creation)',
      args: { archived: t.arg.boolean({ description: 'only archived (true) or only active (false) agents; both when omitted' }) },
      authScopes: { read: true },
      resolve: async (_root, args, ctx) => {
        const universe = ctx.viewer!.universe;
        const where = listWhere(universe.id, args.archived);
        const connection = await newestFirst(args, { defaultSize: 100, maxSize: 1000 }, async (page) =>
          agentViews(universe.slug, await prisma.agent.findMany({ where: { ...where, ...page.where }, orderBy: page.orderBy, take: page.take })),
        );
        totals.set(connection, () => prisma.agent.count({ where }));
        return connection;
      },
    },
    {
      fields: (c) => ({
        totalCount: c.int({ description: 'Agents matching the filter, over all pages', resolve: (connection) => totals.get(connection)!() }),
      }),
    },
  ),
);

builder.queryField('agent', (t) =>
  t.field({
    type: AgentType,
    args: { id: t.arg.string({ required: true }) },
    authScopes: { read: true },
    // One statement: the universe condition masks other universes' agents as not found.
    resolve: (_root, { id }, ctx) => agentNow(ctx.viewer!, id),
  }),
);

builder.queryField('agentPromptVersions', (t) =>
  t.field({
    type: [PromptVersionType],
    description: 'Prompt versions, newest first',
    args: { agentId: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_root, { agentId }, ctx) => {
      const agent = await findAgent(ctx.viewer!, agentId);
      const rows = await prisma.promptVersion.findMany({ where: { agentId: agent.id }, orderBy: { version: 'desc' } });
      return rows.map(
        (v): PromptVersionView => ({ version: v.version, note: v.note, createdAt: v.createdAt.toISOString(), active: v.active, content: v.content }),
      );
    },
  }),
);

builder.queryField('agentSecrets', (t) =>
  t.field({
    type: [objectOf(secretKeyBody)],
    description: 'Declared secret keys; values are never returned',
    args: { agentId: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: (_root, { agentId }, ctx) => listSecrets(ctx.viewer!, agentId),
  }),
);

// ── mutations ───────────────────────────────────────────────────────────────────────────────

builder.mutationField('createAgent', (t) =>
  t.field({
    type: AgentType,
    description: 'Creates an agent (REST POST /v1/agents); provisions nothing. Omitted input: a hermes agent with no capabilities',
    args: { input: t.arg({ type: inputOf(createAgentBody, 'CreateAgent') }) },
    authScopes: { write: true },
    resolve: async (_root, { input }, ctx) => agentNow(ctx.viewer!, (await createAgent(ctx.viewer!, takeInput(ctx, createAgentBody, input ?? {}))).id),
  }),
);

builder.mutationField('updateAgent', (t) =>
  t.field({
    type: AgentType,
    description: 'Updates an agent (REST PATCH /v1/agents/{id}); omitted fields are preserved; archived agents answer 409 conflict',
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: inputOf(patchAgentBody, 'UpdateAgent'), required: true }) },
    authScopes: { write: true },
    resolve: async (_root, { id, input }, ctx) => agentNow(ctx.viewer!, (await updateAgent(ctx.viewer!, id, takeInput(ctx, patchAgentBody, input))).id),
  }),
);

builder.mutationField('archiveAgent', (t) =>
  t.field({
    type: AgentType,
    description: 'Archives an agent: read-only from then on; running sessions keep running, new sessions are rejected. Idempotent',
    args: { id: t.arg.string({ required: true }) },
    authScopes: { admin: true },
    resolve: async (_root, { id }, ctx) => agentNow(ctx.viewer!, (await archiveAgent(ctx.viewer!, id)).id),
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
    type: objectOf(promptUpdateResult),
    description: 'Saves the prompt; a changed prompt becomes a new version used by sessions started after the save',
    args: { agentId: t.arg.string({ required: true }), input: t.arg({ type: inputOf(putPromptBody, 'PutAgentPrompt'), required: true }) },
    authScopes: { write: true },
    resolve: (_root, { agentId, input }, ctx) => setPrompt(ctx.viewer!, agentId, takeInput(ctx, putPromptBody, input)),
  }),
);

builder.mutationField('setAgentSecret', (t) =>
  t.boolean({
    description: 'Creates or replaces a write-only secret (encrypted at rest, never returned)',
    args: {
      agentId: t.arg.string({ required: true }),
      key: t.arg.string({ required: true, description: 'matches ^[A-Za-z_][A-Za-z0-9_]{0,127}$' }),
      input: t.arg({ type: inputOf(putSecretBody, 'PutAgentSecret'), required: true }),
    },
    authScopes: { write: true },
    resolve: async (_root, { agentId, key, input }, ctx) => {
      await putSecret(ctx.viewer!, agentId, key, takeInput(ctx, putSecretBody, input));
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
