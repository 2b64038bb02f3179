// The one budget-stop rule (src/gateway/budget-stop.ts): what each engine sees when the gateway
// stopped a turn for the session's budget, and what it must not take for that stop.
import { describe, expect, it } from 'vitest';
import { stoppedForBudget } from '../../src/gateway/budget-stop.js';
import { BudgetReachedError, ProviderError } from '../../src/gateway/types.js';

describe('budget-stop rule', () => {
  it("hermes: the gateway's BudgetReachedError, not another failure", () => {
    expect(stoppedForBudget(new BudgetReachedError())).toBe(true);
    expect(stoppedForBudget(new Error('budget_reached'))).toBe(false);
    expect(stoppedForBudget(new ProviderError('slow down', { status: 429, retryable: true, code: 'rate_limited' }))).toBe(false);
  });

  it("a CLI's words: the in-stream code or the 402 answer's message", () => {
    expect(stoppedForBudget('stream error: budget_reached')).toBe(true);
    expect(stoppedForBudget("API Error: 402 the session's budget is reached: no more model calls in this session")).toBe(true);
    expect(stoppedForBudget('API Error: 401 invalid key')).toBe(false);
    expect(stoppedForBudget(null)).toBe(false);
  });

  it("the session's row after a CLI exits", () => {
    expect(stoppedForBudget({ budgetReachedAt: new Date() })).toBe(true);
    expect(stoppedForBudget({ budgetReachedAt: null })).toBe(false);
  });
});
