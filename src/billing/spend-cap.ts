// The consumed-cost ceiling of one turn of a session: the session's own budget (its cap) and,
// for the turn a routine fire started, the fire's allowance (the spec: "granted as a per-fire
// delta allowance on top of consumed cost"), whichever is lower. The allowance never replaces
// the session's cap: a session keeps the budget its user set, or none.
import { centsToNano } from '../money.js';

export interface SpendCapRow {
  budgetMaxCents: bigint | null;
  fireTurn: number | null;
  fireCapNanoUsd: bigint | null;
}

/** The columns `turnCapNano` reads (a Prisma select). */
export const SPEND_CAP_COLUMNS = { budgetMaxCents: true, fireTurn: true, fireCapNanoUsd: true } as const;

/** Null: nothing caps this turn. */
export function turnCapNano(row: SpendCapRow, turn: number): bigint | null {
  const session = row.budgetMaxCents === null ? null : centsToNano(row.budgetMaxCents);
  const fire = row.fireTurn === turn ? row.fireCapNanoUsd : null;
  if (session === null) return fire;
  if (fire === null) return session;
  return fire < session ? fire : session;
}
