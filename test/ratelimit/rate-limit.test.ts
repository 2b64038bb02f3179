// 120 requests per minute per token: the 121st is 429 rate_limited with Retry-After; another
// token keeps its own budget. Runs on Redis when TEST_REDIS_URL is set (shared limiter).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ rateLimitPerMinute: 120 });
});
afterAll(async () => {
  await s?.stop();
});

it('the 121st request of a token within a minute is refused with 429 and Retry-After', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 120; i++) statuses.push((await s.api('GET', '/whoami')).status);
  expect(statuses.every((st) => st === 200)).toBe(true);
  const last = await s.api('GET', '/whoami');
  expect(last.status).toBe(429);
  expect(last.body).toEqual({ error: { code: 'rate_limited', message: expect.stringContaining('requests per minute for this token') } });
  const retryAfter = Number(last.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(last.headers.get('ratelimit-limit')).toBe('120');
  expect(last.headers.get('ratelimit-remaining')).toBe('0');

  // Another token has its own count.
  const other = await s.mintToken('read');
  const ok = await s.api('GET', '/whoami', { token: other });
  expect(ok.status).toBe(200);
  expect(ok.headers.get('ratelimit-remaining')).toBe('119');
});

it('a concurrent burst of one token is counted request by request (batched per turn of the event loop)', async () => {
  const token = await s.mintToken('read');
  const answers = await Promise.all(Array.from({ length: 130 }, () => s.api('GET', '/whoami', { token })));
  const ok = answers.filter((a) => a.status === 200);
  expect(ok).toHaveLength(120);
  expect(answers.filter((a) => a.status === 429)).toHaveLength(10);
  // Every remaining count from 119 down to 0 was handed out exactly once.
  expect(ok.map((a) => Number(a.headers.get('ratelimit-remaining'))).sort((a, b) => a - b)).toEqual(Array.from({ length: 120 }, (_, i) => i));
});

it("requests without a credential share their address's budget, and the 429 says so", async () => {
  const statuses: number[] = [];
  let last: Response | undefined;
  while (statuses.length < 125) {
    last = await fetch(`${s.url}/v1/whoami`);
    statuses.push(last.status);
    if (last.status !== 401) break;
  }
  // Counted, and refused for the missing token, until the address's budget (partly spent by this
  // file's sign-ins) runs out.
  expect(statuses.slice(0, -1).every((st) => st === 401)).toBe(true);
  expect(statuses.length).toBeLessThanOrEqual(121);
  expect(last!.status).toBe(429);
  expect((await last!.json()).error.message).toContain('requests per minute for this address');
});
