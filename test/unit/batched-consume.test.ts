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
  ...(redis
    ? [
        [
          'redis',
          (points, duration = 60) => new RateLimiterRedis({ points, duration, keyPrefix: `rl-test-${randomBytes(4).toString('hex')}`, storeClient: redis }),
        ] as [string, MakeLimiter],
      ]
    : []),
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
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
      [false, 0],
    ]);
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

describe.each(limiters)('two processes on one store (%s)', (_name, make) => {
  it('count exactly the requests they served: a key busy on both is refused at its 121st, not before', async () => {
    // One store, two limiters as two processes build them; a busy key alternates between them.
    const store = make(120);
    const a = batchedConsume(store);
    const b = batchedConsume(store);
    const decisions: boolean[] = [];
    for (let i = 0; i < 60; i++) {
      const [x, y] = await Promise.all([a('busy'), b('busy')]);
      decisions.push(x.allowed, y.allowed);
    }
    expect(decisions.every(Boolean)).toBe(true);
    expect((await a('busy')).allowed).toBe(false);
    expect((await b('busy')).allowed).toBe(false);
  });
});
