// Usage per turn and per session (issue #31): the sum of the metered model calls (ModelUsage
// rows, written by the gateway's one metering point for hermes and CLI engines alike) and the
// tool calls that produced a result. Costs stay exact nano-dollars; the API shows whole cents.
import { prisma } from '../db/client.js';
import { sqlRows } from '../db/raw-query.js';
import { batched } from '../db/batched.js';
import { Prisma } from '../generated/prisma/client.js';
import type { TurnUsage } from '../events/types.js';
import { nanoToCents } from '../money.js';

export type UsageTotals = Omit<TurnUsage, 'duration_ms'>;

const usd = (nano: bigint) => {
  const whole = nano / 1_000_000_000n;
  const frac = (nano % 1_000_000_000n).toString().padStart(9, '0');
  return `${whole}.${frac}`;
};

function totals(
  sum: { inputTokens: number | null; outputTokens: number | null; cacheReadTokens: number | null; cacheWriteTokens: number | null; costNanoUsd: bigint | null },
  calls: number,
  tools: number,
  nano: bigint = sum.costNanoUsd ?? 0n,
): UsageTotals {
  return {
    input_tokens: sum.inputTokens ?? 0,
    output_tokens: sum.outputTokens ?? 0,
    cache_read_input_tokens: sum.cacheReadTokens ?? 0,
    cache_creation_input_tokens: sum.cacheWriteTokens ?? 0,
    cost: { amount: nanoToCents(nano).toString(), currency: 'USD' },
    cost_usd: usd(nano),
    model_calls: calls,
    tool_calls: tools,
  };
}

const SUM = { inputTokens: true, outputTokens: true, cacheReadTokens: true, cacheWriteTokens: true, costNanoUsd: true } as const;

/** One turn's usage, for its session.status_idle. */
export async function turnUsage(sessionId: string, turn: number, startedAt: number): Promise<TurnUsage> {
  const [agg, tools] = await Promise.all([
    prisma.modelUsage.aggregate({ where: { sessionId, turn }, _sum: SUM, _count: { _all: true } }),
    prisma.sessionEvent.count({ where: { sessionId, turn, type: 'agent.tool_result' } }),
  ]);
  return { ...totals(agg._sum, agg._count._all, tools), duration_ms: Math.max(0, Date.now() - startedAt) };
}

type Count = bigint | number | string;
interface TurnEndRow {
  calls: Count;
  input: Count;
  output: Count;
  cacheRead: Count;
  cacheWrite: Count;
  cost: Count;
  tools: Count;
  outcome: boolean;
}

// Turns ending together are summed in one statement (src/db/batched.ts).
const turnEndsOf = batched(async (keys: { sessionId: string; turn: number }[]): Promise<TurnEndRow[]> => {
  const rows = await sqlRows<TurnEndRow & { ord: Count }>(
    prisma,
    Prisma.sql`
    SELECT k.ord, u.*,
           (SELECT count(*) FROM "SessionEvent" e WHERE e."sessionId" = k.sid AND e."turn" = k.t AND e."type" = 'agent.tool_result') AS "tools",
           EXISTS (SELECT 1 FROM "Outcome" o JOIN "SessionEvent" d ON d."id" = o."eventId"
                    WHERE o."sessionId" = k.sid AND o."status" = 'active' AND d."turn" IS NOT NULL AND d."turn" <= k.t) AS "outcome"
      FROM unnest(${keys.map((k) => k.sessionId)}::text[], ${keys.map((k) => k.turn)}::int[]) WITH ORDINALITY AS k(sid, t, ord)
      CROSS JOIN LATERAL (
        SELECT count(*) AS "calls", COALESCE(SUM(m."inputTokens"), 0)::bigint AS "input", COALESCE(SUM(m."outputTokens"), 0)::bigint AS "output",
               COALESCE(SUM(m."cacheReadTokens"), 0)::bigint AS "cacheRead", COALESCE(SUM(m."cacheWriteTokens"), 0)::bigint AS "cacheWrite",
               COALESCE(SUM(m."costNanoUsd"), 0)::bigint AS "cost"
          FROM "ModelUsage" m WHERE m."sessionId" = k.sid AND m."turn" = k.t
      ) u`,
  );
  const byOrd = new Map(rows.map((r) => [Number(r.ord), r]));
  return keys.map((_, i) => byOrd.get(i + 1)!);
});

/**
 * The common turn end in one read: the turn's usage and whether the session has an active
 * outcome a turn up to this one took (src/runtime/outcomes.ts grades it, and the usage is read
 * again after, the grader's calls being the turn's too).
 */
export async function turnUsageAndOutcome(sessionId: string, turn: number, startedAt: number): Promise<{ usage: TurnUsage; outcomeActive: boolean }> {
  const row = await turnEndsOf({ sessionId, turn });
  const sum = {
    inputTokens: Number(row.input),
    outputTokens: Number(row.output),
    cacheReadTokens: Number(row.cacheRead),
    cacheWriteTokens: Number(row.cacheWrite),
    costNanoUsd: BigInt(row.cost),
  };
  return {
    usage: { ...totals(sum, Number(row.calls), Number(row.tools)), duration_ms: Math.max(0, Date.now() - startedAt) },
    outcomeActive: row.outcome === true,
  };
}

/** Sessions' totals in two queries however many; the cost is each session's consumed cost (the budget's one truth). */
export async function sessionUsageTotals(sessions: { id: string; consumedNanoUsd: bigint }[]): Promise<Map<string, UsageTotals>> {
  const ids = sessions.map((s) => s.id);
  if (!ids.length) return new Map();
  const [sums, tools] = await Promise.all([
    prisma.modelUsage.groupBy({ by: ['sessionId'], where: { sessionId: { in: ids } }, _sum: SUM, _count: { _all: true } }),
    prisma.sessionEvent.groupBy({ by: ['sessionId'], where: { sessionId: { in: ids }, type: 'agent.tool_result' }, _count: { _all: true } }),
  ]);
  const sumOf = new Map(sums.map((r) => [r.sessionId, r]));
  const toolsOf = new Map(tools.map((r) => [r.sessionId, r._count._all]));
  const empty = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costNanoUsd: 0n };
  return new Map(
    sessions.map((s) => {
      const r = sumOf.get(s.id);
      return [s.id, totals(r?._sum ?? empty, r?._count._all ?? 0, toolsOf.get(s.id) ?? 0, s.consumedNanoUsd)];
    }),
  );
}
