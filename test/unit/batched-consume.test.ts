// Rate-limit batching (src/ratelimit/batched-consume.ts): the requests of one key in one turn of
// the event loop are counted with one consume(key, n), and each gets the count it would have had
// alone. Runs on the memory limiter, and on Redis too when TEST_REDIS_URL is set.
import { afterAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { batchedConsume } from '../../src/ratelimit/batched-consume.js';

const redis = process.env.TEST_REDIS_URL ? new Redis(process.env.TEST_REDIS_URL) : null;
afterAll(async () => {
  await redis?.quit();
});

type MakeLimiter = (points: number, duration?: number) => RateLimiterAbstract;
const limiters: [string, MakeLimiter][] = [
  ['memory', (points, duration = 60) => new RateLimiterMemory({ points, duration, keyPrefix: 'rl-test' })],
  ...(redis ? [['redis', (points, duration = 60) => new RateLimiterRedis({ points, duration, keyPrefix: `rl-test-${randomBytes(4).toString('hex')}`, storeClient: redis })] as [string, MakeLimiter]] : []),
];

describe.each(limiters)('batched consume (%s)', (_name, make) => {
  it('counts a burst of one key as if one by one: the limit falls inside the batch', async () => {
    const limiter = make(3);
    const consume = batchedConsume(limiter);
    let calls = 0;
    const original = limiter.consume.bind(limiter);
    limiter.consume = (key, points) => (calls++, original(key, points));
    const decisions = await Promise.all(Array.from({ length: 5 }, () => consume('k')));
    expect(calls).toBe(1);
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([[true, 2], [true, 1], [true, 0], [false, 0], [false, 0]]);
    expect(decisions.every((d) => d.msBeforeNext > 0 && d.msBeforeNext <= 60_000)).toBe(true);
    // The next turn's request continues the count: still refused.
    expect((await consume('k')).allowed).toBe(false);
    expect(calls).toBe(2);
  });

  it('keeps keys apart within one batch and continues a key across batches', async () => {
    const consume = batchedConsume(make(4));
    const [a1, b1, a2] = await Promise.all([consume('a'), consume('b'), consume('a')]);
    expect([a1.remaining, a2.remaining, b1.remaining]).toEqual([3, 2, 3]);
    expect((await consume('a')).remaining).toBe(1);
  });
});

it('a store failure that is not a refusal rejects every request of the batch', async () => {
  const limiter = new RateLimiterMemory({ points: 5, duration: 60 });
  limiter.consume = () => Promise.reject(new Error('store down'));
  const consume = batchedConsume(limiter);
  const results = await Promise.allSettled([consume('x'), consume('x'), consume('y')]);
  expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
});

describe.each(limiters)('leases for a busy key (%s)', (_name, make) => {
  it('a busy key reserves counts ahead: fewer store calls, the same counts one by one', async () => {
    const limiter = make(200); // lease at most 10 (a twentieth)
    const consume = batchedConsume(limiter);
    let calls = 0;
    const original = limiter.consume.bind(limiter);
    limiter.consume = (key, points) => (calls++, original(key, points));
    const remaining: number[] = [];
    for (let i = 0; i < 40; i++) remaining.push((await consume('busy')).remaining);
    expect(remaining).toEqual(Array.from({ length: 40 }, (_, i) => 199 - i));
    expect(calls).toBeLessThan(15);
  });

  it('leased counts end with the window: the next window starts from its own first count', async () => {
    const limiter = make(200, 1); // a one-second window
    const consume = batchedConsume(limiter);
    for (let i = 0; i < 10; i++) await consume('w');
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await consume('w')).remaining).toBe(199);
  });
});
