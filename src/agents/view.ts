// Agents as the spec shows them (the detail; list items are its first fields). One agent comes
// from the one-statement detail row; a list of any length costs three queries.
import { prisma } from '../db/client.js';
import type { Agent } from '../generated/prisma/client.js';
import type { AgentDetailRow } from './detail-row.js';
import type { AgentView } from './contract.js';
import { multiagentView } from './roster.js';
import { customDataView, instructionsView, mcpServersView, metadataView, skillsView } from './shapes.js';

export function agentView(a: AgentDetailRow): AgentView {
  const prompt = a.promptVersions[0] ?? null;
  return {
    id: a.id,
    name: a.name,
    displayName: a.displayName,
    agentType: a.agentType as AgentView['agentType'],
    llm: a.llm,
    harnessVersion: a.harnessVersion,
    reasoningEffort: a.reasoningEffort as AgentView['reasoningEffort'],
    capabilities: a.capabilities,
    version: a.version,
    archived: a.archived,
    sessionCount: a._count.sessions,
    createdAt: a.createdAt.toISOString(),
    slug: a.slug,
    description: a.description,
    prompt: prompt?.content ?? null,
    promptVersion: prompt?.version ?? null,
    mcpServers: mcpServersView(a.mcpServers),
    skills: skillsView(a.skills),
    instructions: instructionsView(a.instructions),
    customData: customDataView(a.customData),
    metadata: metadataView(a.metadata),
    defaultSessionId: a.defaultSessionId,
    universe: a.universe.slug,
    multiagent: multiagentView(a.multiagent),
  };
}

/** Views of agents of one universe, in their order: their active prompts and session counts in two queries. */
export async function agentViews(universeSlug: string, agents: Agent[]): Promise<AgentView[]> {
  if (!agents.length) return [];
  const ids = agents.map((a) => a.id);
  const [prompts, counts] = await Promise.all([
    prisma.promptVersion.findMany({ where: { agentId: { in: ids }, active: true }, select: { agentId: true, version: true, content: true } }),
    prisma.session.groupBy({ by: ['agentId'], where: { agentId: { in: ids }, parentSessionId: null }, _count: { _all: true } }),
  ]);
  const promptOf = new Map(prompts.map((p) => [p.agentId, p]));
  const countOf = new Map(counts.map((c) => [c.agentId, c._count._all]));
  return agents.map((a) => {
    const prompt = promptOf.get(a.id);
    return agentView({
      ...a,
      promptVersions: prompt ? [{ version: prompt.version, content: prompt.content }] : [],
      universe: { slug: universeSlug },
      _count: { sessions: countOf.get(a.id) ?? 0 },
    });
  });
}
