// Multiagent (issue #32): a coordinator agent's roster. Checked when saved (create, PATCH) and
// resolved again when a session starts, where each roster agent's version is snapshotted into the
// session (as the session does for its own agent): threads then run that snapshot.
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import type { Agent } from '../generated/prisma/client.js';
import type { MultiagentInput, MultiagentView } from './contract.js';
import type { RosterMember } from '../runtime/threads.js';

export type { RosterMember };

const refused = (message: string) => new AppError('invalid_request', message);

/**
 * The roster to store on the agent (names resolved), or null. Refused (400 invalid_request):
 * an agent not of this universe (another universe's agent does not exist here), an archived one,
 * one with a roster of its own (one level only), a duplicate name.
 */
export async function checkRoster(universeId: string, selfId: string | null, input: MultiagentInput | null | undefined): Promise<MultiagentView | null> {
  if (!input) return null;
  const ids = [...new Set(input.agents.flatMap((e) => (e.type === 'agent' && e.id !== selfId ? [e.id] : [])))];
  const agents = await prisma.agent.findMany({ where: { id: { in: ids }, universeId }, select: { id: true, slug: true, archived: true, multiagent: true } });
  const byId = new Map(agents.map((a) => [a.id, a]));
  const entries: MultiagentView['agents'] = [];
  const names = new Set<string>();
  for (const e of input.agents) {
    let name: string;
    if (e.type === 'self' || e.id === selfId) {
      if (!selfId && e.type === 'agent') throw refused(`multiagent: agent ${e.id} not found in this universe`);
      name = e.name ?? 'self';
      entries.push(e.type === 'self' ? { type: 'self', name } : { type: 'agent', id: e.id, name });
    } else {
      const a = byId.get(e.id);
      if (!a) throw refused(`multiagent: agent ${e.id} not found in this universe`);
      if (a.archived) throw refused(`multiagent: agent ${e.id} is archived`);
      if (a.multiagent) throw refused(`multiagent: agent ${e.id} has a roster of its own (one level of delegation only)`);
      name = e.name ?? a.slug.slice(0, 64);
      entries.push({ type: 'agent', id: e.id, name });
    }
    if (names.has(name)) throw refused(`multiagent: the name ${name} is used twice; give the entries distinct names`);
    names.add(name);
  }
  return { type: 'coordinator', agents: entries };
}

/** The stored roster of an agent as shown (null when none). */
export function multiagentView(stored: unknown): MultiagentView | null {
  return stored && typeof stored === 'object' && Array.isArray((stored as MultiagentView).agents) ? (stored as MultiagentView) : null;
}

/**
 * The roster resolved for a new session of `agent` (null when it has none), each member's version
 * snapshotted. An entry that became archived, vanished or got a roster of its own since it was
 * saved refuses the session start (400 invalid_request). `self` runs the session's own model.
 */
export async function rosterForNewSession(agent: Agent, sessionLlm: string): Promise<RosterMember[] | null> {
  const roster = multiagentView(agent.multiagent);
  if (!roster) return null;
  const ids = roster.agents.flatMap((e) => (e.type === 'agent' ? [e.id] : []));
  const rows = await prisma.agent.findMany({
    where: { id: { in: ids }, universeId: agent.universeId },
    include: { promptVersions: { where: { active: true }, select: { version: true } } },
  });
  const selfPrompt = await prisma.promptVersion.findFirst({ where: { agentId: agent.id, active: true }, select: { version: true } });
  const byId = new Map(rows.map((a) => [a.id, a]));
  return roster.agents.map((e): RosterMember => {
    if (e.type === 'self' || e.id === agent.id)
      return {
        name: e.name,
        agentId: agent.id,
        self: true,
        version: agent.version,
        agentType: agent.agentType,
        llm: sessionLlm,
        reasoningEffort: agent.reasoningEffort,
        promptVersion: selfPrompt?.version ?? null,
      };
    const a = byId.get(e.id);
    if (!a) throw refused(`the roster agent ${e.id} no longer exists; PATCH the agent's multiagent roster`);
    if (a.archived) throw refused(`the roster agent ${e.id} (${e.name}) is archived; PATCH the agent's multiagent roster`);
    if (a.multiagent) throw refused(`the roster agent ${e.id} (${e.name}) has a roster of its own (one level of delegation only)`);
    return {
      name: e.name,
      agentId: a.id,
      self: false,
      version: a.version,
      agentType: a.agentType,
      llm: a.llm,
      reasoningEffort: a.reasoningEffort,
      promptVersion: a.promptVersions[0]?.version ?? null,
    };
  });
}
