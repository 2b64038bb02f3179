// Counts requests against the limiter without one store round trip per request:
//  - batches: the requests of one credential that wait together (arrived in the same turn of the
//    event loop, or while that credential's previous count was on its way) are counted with ONE
//    `consume(key, n)`;
//  - a lease for busy credentials: when a key's previous block of counts was used up quickly, the
//    next `consume` reserves a few counts more (doubling, at most LEASE_MAX and a twentieth of the
//    limit) and the following requests take them here, until they run out or the window ends.
// The counts are the store's own sequence, handed out in arrival order, each once: a request gets
// the count it would have had alone, so the 121st request of a minute is refused as before and
// RateLimit-Remaining goes down one by one. What a lease costs: counts this process reserved but
// did not use before the window ended are lost to the credential's other processes (at most the
// lease size per process and window); a credential never gets more than its limit.
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

/** One key: its reserved counts `next` … `end` (valid until `resetAt`) and who waits for counts. */
interface KeyState {
  next: number;
  end: number;
  resetAt: number;
  /** Counts the last reservation added beyond its waiting requests. */
  extra: number;
  reservedAt: number;
  /** A reservation is on its way to the store: newcomers wait for it (one at a time per key). */
  inflight: boolean;
  waiting: Waiter[];
}

export const LEASE_MAX = 64;
/** A block used up within this time marks the key busy: the next lease doubles. */
const BUSY_MS = 1_000;
/** Leased counts are not used this close to the window's end (the store's clock may be ahead). */
const RESET_MARGIN_MS = 100;
/** Above this many keys, those whose window has ended are dropped (at most once a second). */
const MAX_KEYS = 10_000;
const PRUNE_EVERY_MS = 1_000;

export function batchedConsume(limiter: RateLimiterAbstract): ConsumeOne {
  const points = limiter.points;
  const leaseCap = Math.min(LEASE_MAX, Math.floor(points / 20));
  const keys = new Map<string, KeyState>();
  const due = new Set<string>();
  let scheduled = false;
  let prunedAt = 0;

  const decide = (count: number, msBeforeNext: number): LimitDecision => ({ allowed: count <= points, remaining: Math.max(0, points - count), msBeforeNext });
  const leased = (st: KeyState, now: number) => st.next <= st.end && now < st.resetAt - RESET_MARGIN_MS;

  /** Serves waiters from the lease while it lasts; true when none are left waiting. */
  const serveFromLease = (st: KeyState, now: number): boolean => {
    while (st.waiting.length && leased(st, now)) st.waiting.shift()!.resolve(decide(st.next++, st.resetAt - now));
    return st.waiting.length === 0;
  };

  /** The next lease's size: doubled when the last block went fast, none when the key is quiet. */
  const nextExtra = (st: KeyState, now: number): number => {
    if (leaseCap === 0 || st.reservedAt === 0 || now - st.reservedAt > BUSY_MS || now >= st.resetAt) return 0;
    return Math.min(leaseCap, Math.max(1, st.extra * 2));
  };

  const reserve = (key: string, st: KeyState) => {
    const now = Date.now();
    if (serveFromLease(st, now)) return;
    const waiters = st.waiting;
    st.waiting = [];
    const extra = nextExtra(st, now);
    st.inflight = true;
    const settle = (res: RateLimiterRes) => {
      st.inflight = false;
      const n = waiters.length;
      if (res.consumedPoints < n + extra) {
        // Refused without counting (the key is blocked): no lease.
        st.next = 1;
        st.end = 0;
        for (const w of waiters) w.resolve(decide(points + 1, res.msBeforeNext));
      } else {
        const first = res.consumedPoints - n - extra + 1;
        for (let i = 0; i < n; i++) waiters[i]!.resolve(decide(first + i, res.msBeforeNext));
        Object.assign(st, { next: first + n, end: res.consumedPoints, resetAt: now + res.msBeforeNext, extra, reservedAt: now });
      }
      if (st.waiting.length) schedule(key);
    };
    limiter.consume(key, waiters.length + extra).then(settle, (err: unknown) => {
      if (err instanceof RateLimiterRes) return settle(err);
      st.inflight = false;
      for (const w of waiters) w.reject(err);
      if (st.waiting.length) schedule(key);
    });
  };

  const flush = () => {
    scheduled = false;
    for (const key of due) {
      const st = keys.get(key);
      if (st && !st.inflight && st.waiting.length) reserve(key, st);
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
    const now = Date.now();
    if (st && !st.inflight && !st.waiting.length && leased(st, now)) return Promise.resolve(decide(st.next++, st.resetAt - now));
    if (!st) {
      if (keys.size >= MAX_KEYS && now - prunedAt > PRUNE_EVERY_MS) {
        prunedAt = now;
        for (const [k, s] of keys) if (!s.inflight && !s.waiting.length && now >= s.resetAt) keys.delete(k);
      }
      st = { next: 1, end: 0, resetAt: 0, extra: 0, reservedAt: 0, inflight: false, waiting: [] };
      keys.set(key, st);
    }
    const state = st;
    return new Promise<LimitDecision>((resolve, reject) => {
      state.waiting.push({ resolve, reject });
      if (!state.inflight) schedule(key);
    });
  };
}
