// Sessions as the spec shows them, loaded in a constant number of queries however many there
// are: the sessions (with their agent's reasoning effort), then all their resources and usage at once.
import { prisma } from '../db/client.js';
import { nanoToCents } from '../money.js';
import { resourceView } from '../resources/resources.js';
import type { Prisma, SessionResource } from '../generated/prisma/client.js';
import type { SessionView } from './contract.js';
import { sessionUsageTotals, type UsageTotals } from '../billing/usage.js';

const withAgentEffort = { agent: { select: { reasoningEffort: true, defaultSessionId: true } } } satisfies Prisma.SessionInclude;
type SessionRow = Prisma.SessionGetPayload<{ include: typeof withAgentEffort }>;

const usd = (cents: bigint) => ({ amount: cents.toString(), currency: 'USD' as const });

function toView(s: SessionRow, resources: SessionResource[], usage: UsageTotals): SessionView {
  return {
    id: s.id,
    agentId: s.agentId,
    title: s.title,
    status: s.status as SessionView['status'],
    agentType: s.agentType,
    llm: s.llm,
    reasoningEffort: s.reasoningEffort ?? s.agent?.reasoningEffort ?? null,
    modelBilling: s.modelBilling as SessionView['modelBilling'],
    default: s.agent?.defaultSessionId === s.id,
    metadata: (s.metadata ?? {}) as Record<string, unknown>,
    budget:
      s.budgetMaxCents === null
        ? null
        : {
            max_list_cost: usd(s.budgetMaxCents),
            consumed_cost: usd(nanoToCents(s.consumedNanoUsd)),
            reached: s.budgetReachedAt !== null,
            reached_at: s.budgetReachedAt?.toISOString() ?? null,
          },
    resources: resources.map(resourceView),
    usage,
    forked_from: s.forkedFromSessionId ? { session_id: s.forkedFromSessionId, event_id: s.forkedFromEventId } : null,
    createdAt: s.createdAt.toISOString(),
  };
}

/** Views of the sessions matching `where`, in `orderBy` order: two queries in all. */
export async function sessionViews(where: Prisma.SessionWhereInput, orderBy: Prisma.SessionOrderByWithRelationInput = { id: 'desc' }): Promise<SessionView[]> {
  const rows = await prisma.session.findMany({ where, orderBy, include: withAgentEffort });
  if (!rows.length) return [];
  const [resources, usage] = await Promise.all([
    prisma.sessionResource.findMany({ where: { sessionId: { in: rows.map((r) => r.id) } }, orderBy: { id: 'asc' } }),
    sessionUsageTotals(rows),
  ]);
  const bySession = new Map<string, SessionResource[]>();
  for (const r of resources) bySession.set(r.sessionId, [...(bySession.get(r.sessionId) ?? []), r]);
  return rows.map((s) => toView(s, bySession.get(s.id) ?? [], usage.get(s.id)!));
}

export async function sessionView(id: string): Promise<SessionView> {
  const [view] = await sessionViews({ id });
  if (!view) throw new Error(`session ${id} vanished`);
  return view;
}
