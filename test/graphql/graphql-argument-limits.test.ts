// GraphQL arguments that are plain strings answer a bad value as their REST parameter does:
// 400 invalid_request (an outside fuzz found 300-character filters answered 200 with nothing on
// GraphQL and 400 on REST, and deleteMemory's expectedContentSha256 "" deleting without a check).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

const long = 'x'.repeat(300);

describe('plain string arguments', () => {
  it.each([
    ['sessions(agent:)', `{ sessions(agent: "${long}") { id } }`, '/sessions?agent=' + long],
    ['channelBindings(connectionId:)', `{ channelBindings(connectionId: "${long}") { id } }`, '/channels/bindings?connection_id=' + long],
    [
      'memoryVersions(memoryId:)',
      `{ memoryVersions(memoryStoreId: "memstore_x", memoryId: "${long}") { edges { node { id } } } }`,
      '/memory-stores/memstore_x/versions?memory_id=' + long,
    ],
    [
      'loopbackOutbox(after:)',
      `{ loopbackOutbox(connectionId: "chconn_x", after: "${long}") { id } }`,
      '/channels/connections/chconn_x/loopback/outbox?after=' + long,
    ],
    [
      'loopbackOutbox(threadId:)',
      `{ loopbackOutbox(connectionId: "chconn_x", threadId: "${'t'.repeat(256)}") { id } }`,
      '/channels/connections/chconn_x/loopback/outbox?thread_id=' + 't'.repeat(256),
    ],
  ])('%s over its REST length is 400 invalid_request on both', async (_name, query, path) => {
    const gql = await s.gql<any>(query);
    expect(gql.body.errors?.[0]?.extensions?.code, JSON.stringify(gql.body)).toBe('invalid_request');
    const rest = await s.api('GET', path);
    expect(rest.status).toBe(400);
    expect(rest.body.error.code).toBe('invalid_request');
  });

  it('deleteMemory(expectedContentSha256:) must be a content_sha256 (64 lower-case hex), as on REST', async () => {
    const store = await s.api('POST', '/memory-stores', { body: { name: 'argument-limits' } });
    expect(store.status, JSON.stringify(store.body)).toBeLessThan(300);
    const storeId = (store.body.memory_store ?? store.body).id as string;
    const created = await s.api('POST', `/memory-stores/${storeId}/memories`, { body: { path: '/notes/a.md', content: 'keep me' } });
    expect(created.status, JSON.stringify(created.body)).toBeLessThan(300);
    const memoryId = (created.body.memory ?? created.body).id as string;
    for (const bad of ['', 'zzz', 'A'.repeat(64)]) {
      const res = await s.gql<any>(
        `mutation($s: String!, $id: String!, $sha: String) { deleteMemory(memoryStoreId: $s, id: $id, expectedContentSha256: $sha) { id } }`,
        { s: storeId, id: memoryId, sha: bad },
      );
      expect(res.body.errors?.[0]?.extensions?.code, bad).toBe('invalid_request');
      const rest = await s.api('DELETE', `/memory-stores/${storeId}/memories/${memoryId}?expected_content_sha256=${bad}`);
      expect(rest.status).toBe(400);
    }
    // still there
    expect((await s.api('GET', `/memory-stores/${storeId}/memories/${memoryId}`)).status).toBe(200);
  });
});

describe('the GraphQL endpoint refuses as the rest of the API does', () => {
  it('a POST in a type it does not read is 415 unsupported_media_type in GraphQL error shape (was an empty 415)', async () => {
    for (const headers of [{ 'content-type': 'text/plain' }, {}] as Record<string, string>[]) {
      const res = await fetch(`${s.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.adminToken}`, ...headers },
        body: '{"query":"{ __typename }"}',
      });
      expect(res.status).toBe(415);
      expect((await res.json()).errors[0].extensions.code).toBe('unsupported_media_type');
    }
    expect((await s.gql('{ __typename }')).body).toEqual({ data: { __typename: 'Query' } });
  });

  it('the event type catalogs need a token like every other field (401 invalid_token without one)', async () => {
    for (const field of ['webhookEventTypes', 'channelEventTypes']) {
      const anonymous = await s.gql<any>(`{ ${field} }`, {}, { token: null });
      expect(anonymous.body.errors?.[0]?.extensions?.code, field).toBe('invalid_token');
      expect((await s.gql<any>(`{ ${field} }`)).body.data[field].length).toBeGreaterThan(0);
    }
  });

  it('channelEventTypes lists the values createChannelWebhook takes (it listed dotted names the mutation refuses)', async () => {
    const types = (await s.gql<any>('{ channelEventTypes }')).body.data.channelEventTypes as string[];
    expect(types).toContain('message_received');
    // Taken as the input's enum values (the URL may still be refused by the outbound policy here).
    const created = await s.gql<any>(
      `mutation($e: [ChannelEventType!]!) { createChannelWebhook(input: { url: "https://hooks.example.com/x", events: $e }) { events } }`,
      { e: types },
    );
    expect(JSON.stringify(created.body.errors ?? [])).not.toContain('Variable');
  });
});

describe('documents that do not parse or validate', () => {
  it('are 400 invalid_request as every other caller mistake (were coded GRAPHQL_PARSE_FAILED / GRAPHQL_VALIDATION_FAILED)', async () => {
    for (const query of ['{ whoami { nope } }', '{ whoami {', 'query { agents(first: "x") { edges { node { id } } } }']) {
      const res = await s.gql<any>(query);
      expect(res.body.errors?.[0]?.extensions?.code, query).toBe('invalid_request');
      const strict = await fetch(`${s.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.adminToken}`, 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: JSON.stringify({ query }),
      });
      expect(strict.status, query).toBe(400);
    }
  });
});
