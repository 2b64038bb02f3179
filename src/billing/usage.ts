// Usage per turn and per session (issue #31): the sum of the metered model calls (ModelUsage
// rows, written by the gateway's one metering point for hermes and CLI engines alike) and the
// tool calls that produced a result. Costs stay exact nano-dollars; the API shows whole cents.
import { prisma } from '../db/client.js';
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
