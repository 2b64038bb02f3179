// The GraphQL-over-HTTP audit suite (graphql-http's auditServer) against /graphql with a token.
// MUST audits have to pass; SHOULD/MAY are reported, and none of them may fail either.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { auditServer } from 'graphql-http';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

it('passes every graphql-http audit', async () => {
  const authedFetch = (input: RequestInfo | URL, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${s.adminToken}`);
    return fetch(input, { ...init, headers });
  };
  const results = await auditServer({ url: `${s.url}/graphql`, fetchFn: authedFetch });
  const failures = results.filter((r) => r.status !== 'ok').map((r) => `${r.id} ${r.name}: ${(r as { reason?: string }).reason ?? ''}`);
  expect(failures).toEqual([]);
});
