// The one budget-stop rule: when a turn ends `budget_reached`. The gateway decides
// (metering.ts: openMeter refuses a call, meteredModelStream cuts a stream, both throw
// BudgetReachedError; the usage recorded sets Session.budgetReachedAt; http-endpoint.ts gives a
// CLI the API's own error with the code `budget_reached`). Every engine asks this file whether
// what it saw is that stop: hermes the error a model call threw, a CLI engine's adapter the
// CLI's words about a failed call, the CLI engine the session's row once the CLI has exited.
import { BudgetReachedError } from './types.js';

/** The stop reason of a turn the gateway stopped for the session's budget. */
export const BUDGET_STOP = { type: 'budget_reached' } as const;

/**
 * Whether the gateway stopped the turn for the budget, from what the engine saw: the error a
 * model call threw in the service; a CLI's words about the gateway's answer (its code
 * `budget_reached`, in-stream, or the 402 answer's message, which CLIs print without the code);
 * or the session's row read after the turn's calls (its `budgetReachedAt`).
 */
export function stoppedForBudget(seen: unknown): boolean {
  if (seen instanceof BudgetReachedError) return true;
  if (typeof seen === 'string') return /budget_reached|session's budget is reached/.test(seen);
  return !!seen && typeof seen === 'object' && 'budgetReachedAt' in seen && !!seen.budgetReachedAt;
}
