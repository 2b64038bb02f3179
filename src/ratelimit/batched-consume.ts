// Counts requests against the limiter without one store round trip per request: the requests of
// one credential that wait together (arrived in the same turn of the event loop, or while that
// credential's previous count was on its way) are counted with ONE `consume(key, n)`.
// The counts are the store's own sequence, handed out in arrival order, each once: a request gets
// the count it would have had alone, so the 121st request of a minute is refused and
// RateLimit-Remaining goes down one by one. Nothing is reserved ahead: several processes sharing
// one Redis count exactly the requests they served (a lease of counts would lose its unused ones
// to the credential's other processes and refuse them early).
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

/** One key: whether its count is on its way to the store, and who waits for the next one. */
interface KeyState {
  inflight: boolean;
  waiting: Waiter[];
}

export function batchedConsume(limiter: RateLimiterAbstract): ConsumeOne {
  const points = limiter.points;
  const keys = new Map<string, KeyState>();
  const due = new Set<string>();
  let scheduled = false;

  const decide = (count: number, msBeforeNext: number): LimitDecision => ({ allowed: count <= points, remaining: Math.max(0, points - count), msBeforeNext });

  const count = (key: string, st: KeyState) => {
    const waiters = st.waiting;
    st.waiting = [];
    st.inflight = true;
    const next = () => {
      st.inflight = false;
      if (st.waiting.length) schedule(key);
      else keys.delete(key); // nothing kept between bursts: the store holds the count
    };
    const settle = (res: RateLimiterRes) => {
      const n = waiters.length;
      if (res.consumedPoints < n) {
        // Refused without counting (the key is blocked).
        for (const w of waiters) w.resolve(decide(points + 1, res.msBeforeNext));
      } else {
        const first = res.consumedPoints - n + 1;
        for (let i = 0; i < n; i++) waiters[i]!.resolve(decide(first + i, res.msBeforeNext));
      }
      next();
    };
    limiter.consume(key, waiters.length).then(settle, (err: unknown) => {
      if (err instanceof RateLimiterRes) return settle(err);
      for (const w of waiters) w.reject(err);
      next();
    });
  };

  const flush = () => {
    scheduled = false;
    for (const key of due) {
      const st = keys.get(key);
      if (st && !st.inflight && st.waiting.length) count(key, st);
    }
    due.clear();
  };

  const schedule = (key: string) => {
    due.add(key);
    if (!scheduled) {
      scheduled = true;
      // After the poll phase: every request read in this turn of the loop joins the batch.
      setImmediate(flush);
    }
  };

  return (key) => {
    let st = keys.get(key);
    if (!st) {
      st = { inflight: false, waiting: [] };
      keys.set(key, st);
    }
    const state = st;
    return new Promise<LimitDecision>((resolve, reject) => {
      state.waiting.push({ resolve, reject });
      if (!state.inflight) schedule(key);
    });
  };
}
