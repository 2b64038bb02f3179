// GraphQL connection cursors are opaque: one the service did not hand out is the caller's
// mistake (invalid_request, HTTP 400), never a masked internal error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers/server.js';

let s: TestServer;
beforeAll(async () => { s = await startTestServer(); });
afterAll(async () => s?.stop());

describe('connection cursors', () => {
  it('a garbage `after` answers invalid_request with status 400', async () => {
    const res = await s.gql<{ agents: unknown }>(`{ agents(first: 5, after: "garbage%00") { edges { cursor } } }`);
    expect(res.body.errors?.[0]?.extensions?.code).toBe('invalid_request');
    expect(res.body.errors?.[0]?.message).toMatch(/cursor/);
    expect(res.status).toBe(400);
  });
});
