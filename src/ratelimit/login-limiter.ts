// Sign-in attempts are limited against password guessing (rate-limiter-flexible, in Redis when
// configured so every process shares the count): failures per email and address, and failures
// per address over all emails. A successful sign-in clears its email's count.
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { createHash } from 'node:crypto';
import { config } from '../config.js';
import { redis, type RedisConnections } from '../redis.js';

export const LOGIN_FAILURES_PER_EMAIL = 5;
export const LOGIN_FAILURES_PER_ADDRESS = 50;
const WINDOW_S = 15 * 60;

// Built for the composition's Redis connections and queue prefix; rebuilt when either changes.
let limiters: { perEmail: RateLimiterAbstract; perAddress: RateLimiterAbstract; store: RedisConnections | null; prefix: string } | null = null;

function build(points: number, kind: string, store: RedisConnections | null, prefix: string): RateLimiterAbstract {
  const opts = { points, duration: WINDOW_S, keyPrefix: `${prefix}:login:${kind}` };
  return store ? new RateLimiterRedis({ ...opts, storeClient: store.shared, insuranceLimiter: new RateLimiterMemory(opts) }) : new RateLimiterMemory(opts);
}

function get() {
  const store = redis();
  const prefix = config().queuePrefix;
  if (!limiters || limiters.store !== store || limiters.prefix !== prefix) {
    limiters = {
      perEmail: build(LOGIN_FAILURES_PER_EMAIL, 'email', store, prefix),
      perAddress: build(LOGIN_FAILURES_PER_ADDRESS, 'ip', store, prefix),
      store,
      prefix,
    };
  }
  return limiters;
}

const emailKey = (email: string, address: string) => createHash('sha256').update(`${email.trim().toLowerCase()}\0${address}`).digest('hex').slice(0, 32);

function waitIfSpent(res: RateLimiterRes | null, points: number): number | null {
  if (!res || res.consumedPoints < points) return null;
  return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
}

function longest(waits: (number | null)[]): number | null {
  const set = waits.filter((w): w is number => w !== null);
  return set.length ? Math.max(...set) : null;
}

/** Seconds to wait when sign-in is blocked for this email and address; null when allowed. */
export async function loginBlockedFor(email: string, address: string): Promise<number | null> {
  const { perEmail, perAddress } = get();
  const [e, a] = await Promise.all([perEmail.get(emailKey(email, address)), perAddress.get(address)]);
  return longest([waitIfSpent(e, LOGIN_FAILURES_PER_EMAIL), waitIfSpent(a, LOGIN_FAILURES_PER_ADDRESS)]);
}

/** Counts a failed sign-in; returns the seconds to wait when this failure used up a limit. */
export async function recordLoginFailure(email: string, address: string): Promise<number | null> {
  const { perEmail, perAddress } = get();
  const settle = (p: Promise<RateLimiterRes>) =>
    p.catch((err: unknown) => {
      if (err instanceof RateLimiterRes) return err;
      throw err;
    });
  const [e, a] = await Promise.all([settle(perEmail.consume(emailKey(email, address))), settle(perAddress.consume(address))]);
  return longest([waitIfSpent(e, LOGIN_FAILURES_PER_EMAIL), waitIfSpent(a, LOGIN_FAILURES_PER_ADDRESS)]);
}

export async function recordLoginSuccess(email: string, address: string): Promise<void> {
  await get().perEmail.delete(emailKey(email, address));
}
