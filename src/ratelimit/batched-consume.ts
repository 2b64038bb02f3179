// Counts requests against the limiter in batches: the requests of one credential that arrive in
// the same turn of the event loop are counted with ONE `consume(key, n)` (one Redis round trip
// instead of n). Each request then gets the count it would have had alone: the batch's total
// minus the requests after it, so the 121st request of a minute is refused exactly as when each
// was counted on its own, and RateLimit-Remaining goes down one by one.
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

/** What the limiter decided for one request. */
export interface LimitDecision {
  allowed: boolean;
  /** Requests left in the window after this one. */
  remaining: number;
  /** Until the window resets. */
  msBeforeNext: number;
}

export type ConsumeOne = (key: string) => Promise<LimitDecision>;

interface Waiter {
  resolve: (d: LimitDecision) => void;
  reject: (err: unknown) => void;
}

/** Spreads one batch's result over its requests, in arrival order. */
function settle(points: number, res: RateLimiterRes, waiters: Waiter[]): void {
  const n = waiters.length;
  // A count lower than the batch itself means the key was refused without counting (blocked).
  const before = res.consumedPoints >= n ? res.consumedPoints - n : points;
  for (let i = 0; i < n; i++) {
    const consumed = before + i + 1;
    waiters[i]!.resolve({ allowed: consumed <= points, remaining: Math.max(0, points - consumed), msBeforeNext: res.msBeforeNext });
  }
}

export function batchedConsume(limiter: RateLimiterAbstract): ConsumeOne {
  let pending = new Map<string, Waiter[]>();
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    const batch = pending;
    pending = new Map();
    for (const [key, waiters] of batch) {
      limiter.consume(key, waiters.length).then(
        (res) => settle(limiter.points, res, waiters),
        (err: unknown) => (err instanceof RateLimiterRes ? settle(limiter.points, err, waiters) : waiters.forEach((w) => w.reject(err))),
      );
    }
  };

  return (key) =>
    new Promise<LimitDecision>((resolve, reject) => {
      const waiters = pending.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else pending.set(key, [{ resolve, reject }]);
      if (!scheduled) {
        scheduled = true;
        // After the poll phase: every request read in this turn of the loop joins the batch.
        setImmediate(flush);
      }
    });
}
