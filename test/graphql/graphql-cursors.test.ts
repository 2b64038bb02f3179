// GraphQL connection arguments: a cursor the service did not hand out, a negative `first` or
// `last`, `before` with `first` are the caller's mistakes (invalid_request, HTTP 400, in
// GraphQL's error shape), never a masked internal error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s?.stop());

describe('connection cursors', () => {
  it('a garbage `after` answers invalid_request with status 400', async () => {
    const res = await s.gql<{ agents: unknown }>(`{ agents(first: 5, after: "garbage%00") { edges { cursor } } }`);
    expect(res.body.errors?.[0]?.extensions?.code).toBe('invalid_request');
    expect(res.body.errors?.[0]?.message).toMatch(/cursor/);
    expect(res.status).toBe(400);
  });

  it.each([
    ['agents(first: -1)', '{ agents(first: -1) { totalCount } }'],
    ['skills(last: -3)', '{ skills(last: -3) { edges { cursor } } }'],
    ['vaults(first: -1)', '{ vaults(first: -1) { edges { cursor } } }'],
    ['environments(first: -1)', '{ environments(first: -1) { edges { cursor } } }'],
    ['routines(first: -1)', '{ routines(first: -1) { edges { cursor } } }'],
    ['walletEntries(first, before)', '{ walletEntries(first: 2, before: "x") { edges { cursor } } }'],
    ['walletEntries(last, after)', '{ walletEntries(last: 2, after: "x") { edges { cursor } } }'],
  ])('%s answers invalid_request with status 400', async (_name, query) => {
    const res = await s.gql(query);
    expect(res.status).toBe(400);
    expect(res.body.errors?.length).toBeGreaterThan(0);
    for (const error of res.body.errors!) {
      expect(error.extensions?.code).toBe('invalid_request');
      expect(typeof error.message).toBe('string');
    }
  });

  it.each([
    ['an Int over 32 bits', '{ agents(first: $n) { totalCount } }', 'query($n: Int)', { n: 2 ** 31 }],
    ['a null non-null variable', '{ agent(id: $id) { id } }', 'query($id: String!)', { id: null }],
    ['a variable of the wrong type', '{ agent(id: $id) { id } }', 'query($id: String!)', { id: { a: 1 } }],
  ])('%s answers invalid_request with status 400 (was 500 internal_error)', async (_name, selection, head, variables) => {
    const res = await s.gql(`${head} ${selection}`, variables);
    expect(res.status).toBe(400);
    expect(res.body.errors?.[0]?.extensions?.code).toBe('invalid_request');
    expect(res.body.errors?.[0]?.message).toMatch(/Variable/);
  });
});
