// Idempotency-Key on GraphQL mutations (CONTRACT: every POST that creates): an outside fuzz found
// the header ignored on /graphql (two agents, two events for one key) while REST honoured it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { history, readySession } from '../helpers/sessions.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

const CREATE = `mutation($i: CreateAgentInput!) { createAgent(input: $i) { id displayName } }`;
const post = (query: string, variables: Record<string, unknown>, key: string, token?: string) =>
  fetch(`${s.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token ?? s.adminToken}`, 'idempotency-key': key },
    body: JSON.stringify({ query, variables }),
  });
const agentCount = async () => (await s.api('GET', '/agents?limit=100')).body.agents.length as number;

describe('GraphQL mutations with Idempotency-Key', () => {
  it('a retry with the same key and body gets the first answer and creates nothing', async () => {
    const before = await agentCount();
    const first = await post(CREATE, { i: { displayName: 'idem-once' } }, 'k-create');
    const again = await post(CREATE, { i: { displayName: 'idem-once' } }, 'k-create');
    const [a, b] = [await first.json(), await again.json()];
    expect(a.errors).toBeUndefined();
    expect(b).toEqual(a);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await agentCount()).toBe(before + 1);
    // The same key with another body: 400, nothing created; another token's same key is its own.
    const other = await post(CREATE, { i: { displayName: 'idem-other' } }, 'k-create');
    expect(other.status).toBe(400);
    expect((await other.json()).errors[0].extensions.code).toBe('invalid_request');
    expect(await agentCount()).toBe(before + 1);
    const write = await s.mintToken('write');
    const theirs = await (await post(CREATE, { i: { displayName: 'idem-once' } }, 'k-create', write)).json();
    expect(theirs.data.createAgent.id).not.toBe(a.data.createAgent.id);
  });

  it('a failed attempt keeps nothing: the same key runs again', async () => {
    const bad = await (await post(CREATE, { i: { displayName: '' } }, 'k-failed')).json();
    expect(bad.errors?.[0]?.extensions?.code).toBe('invalid_request');
    const before = await agentCount();
    const good = await (await post(CREATE, { i: { displayName: 'idem-after-failure' } }, 'k-failed')).json();
    expect(good.data.createAgent.displayName).toBe('idem-after-failure');
    expect(await agentCount()).toBe(before + 1);
  });

  it('sendSessionEvents retried with its key stores one event; queries ignore the header', async () => {
    const { session } = await readySession(s);
    const send = `mutation($id: String!, $in: SendSessionEventsInput!) { sendSessionEvents(sessionId: $id, input: $in) { __typename } }`;
    const vars = { id: session.id, in: { events: [{ systemMessage: { content: [{ text: 'noted once' }] } }] } };
    const one = await (await post(send, vars, 'k-send')).json();
    const two = await (await post(send, vars, 'k-send')).json();
    expect(one.errors, JSON.stringify(one.errors)).toBeUndefined();
    expect(two).toEqual(one);
    expect((await history(s, session.id)).filter((e) => e.type === 'system.message')).toHaveLength(1);
    const q1 = await (await post(`{ agents(first: 1) { edges { node { id } } } }`, {}, 'k-query')).json();
    const q2 = await post(`{ whoami { auth } }`, {}, 'k-query');
    expect(q1.errors).toBeUndefined();
    expect(q2.status).toBe(200);
    expect(q2.headers.get('idempotent-replayed')).toBeNull();
  });
});
