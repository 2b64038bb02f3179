// Memory stores over HTTP (issue #30): stores CRUD, memories by path with prefix/depth/paging,
// limits (content size, bad paths) as 400 envelopes, optimistic concurrency (a stale hash is
// 409), versions with the user actor, restore, redact (content and path null, row kept),
// universe isolation (another universe's store is 404), GraphQL from the same schemas, and the
// memory.created/updated/deleted webhook events queued with each change.
process.env.OUTBOUND_ALLOW ??= '127.0.0.0/8,::1'; // the webhook receiver is on loopback
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { expectError } from '../helpers/agents.js';
import { waitFor } from '../helpers/sessions.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

const hash = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

async function store(body: Record<string, unknown> = { name: 'notes' }) {
  const res = await s.api('POST', '/memory-stores', { body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}
async function memory(storeId: string, path: string, content: string) {
  const res = await s.api('POST', `/memory-stores/${storeId}/memories`, { body: { path, content } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

describe('stores', () => {
  it('create, read, list, update, archive', async () => {
    const created = await store({ name: 'prefs', description: 'what the user likes', metadata: { team: 'a' } });
    expect(created).toEqual({
      id: expect.stringMatching(/^memstore_[0-9a-z]{26}$/),
      name: 'prefs',
      description: 'what the user likes',
      metadata: { team: 'a' },
      archived_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await s.api('GET', `/memory-stores/${created.id}`)).body).toEqual(created);
    const list = await s.api('GET', '/memory-stores?limit=100');
    expect(list.body.data.map((x: any) => x.id)).toContain(created.id);
    const patched = await s.api('PATCH', `/memory-stores/${created.id}`, { body: { description: null, name: 'preferences' } });
    expect(patched.body).toMatchObject({ name: 'preferences', description: null });
    const archived = await s.api('POST', `/memory-stores/${created.id}/archive`);
    expect(archived.body.archived_at).toEqual(expect.any(String));
    expectError(await s.api('PATCH', `/memory-stores/${created.id}`, { body: { name: 'x' } }), 409, 'conflict');
    expectError(await s.api('POST', `/memory-stores/${created.id}/memories`, { body: { path: '/a', content: 'x' } }), 409, 'conflict');
  });

  it('a wrong-shaped store, memory or version id answers 404 not_found in the envelope; without a token 401 comes first', async () => {
    const st = (await s.api('POST', '/memory-stores', { body: { name: 'shapes' } })).body;
    expectError(await s.api('GET', '/memory-stores/agent_abc'), 404, 'not_found');
    expectError(await s.api('GET', `/memory-stores/${st.id}/memories/memver_abc`), 404, 'not_found');
    expectError(await s.api('GET', `/memory-stores/${st.id}/versions/mem_abc`), 404, 'not_found');
    expectError(await s.api('GET', '/memory-stores/agent_abc', { token: '' }), 401, 'invalid_token');
  });

  it('limits: name 1–255, description ≤ 1024', async () => {
    await store({ name: 'n'.repeat(255), description: 'd'.repeat(1024) });
    expectError(await s.api('POST', '/memory-stores', { body: { name: '' } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/memory-stores', { body: { name: 'n'.repeat(256) } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/memory-stores', { body: { name: 'x', description: 'd'.repeat(1025) } }), 400, 'invalid_request');
  });
});

describe('memories', () => {
  let st: any;
  beforeAll(async () => {
    st = await store();
  });

  it('create and read by id and by path, with hash and size', async () => {
    const m = await memory(st.id, '/preferences/style.md', 'Use tabs. Ünïcödé');
    expect(m).toEqual({
      id: expect.stringMatching(/^mem_[0-9a-z]{26}$/),
      memory_store_id: st.id,
      path: '/preferences/style.md',
      content: 'Use tabs. Ünïcödé',
      content_sha256: hash('Use tabs. Ünïcödé'),
      size_bytes: Buffer.byteLength('Use tabs. Ünïcödé'),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await s.api('GET', `/memory-stores/${st.id}/memories/${m.id}`)).body).toEqual(m);
    expect((await s.api('GET', `/memory-stores/${st.id}/memory?path=${encodeURIComponent('/preferences/style.md')}`)).body).toEqual(m);
    expectError(await s.api('GET', `/memory-stores/${st.id}/memory?path=/nope`), 404, 'not_found');
    expectError(await s.api('POST', `/memory-stores/${st.id}/memories`, { body: { path: '/preferences/style.md', content: 'again' } }), 409, 'conflict');
  });

  it('limits: 100 KiB content, bad paths → 400 with the envelope', async () => {
    await memory(st.id, '/big.md', 'x'.repeat(100 * 1024));
    const post = (body: unknown) => s.api('POST', `/memory-stores/${st.id}/memories`, { body });
    expectError(await post({ path: '/too-big.md', content: 'x'.repeat(101 * 1024) }), 400, 'invalid_request');
    for (const path of ['relative.md', '/a/./b', '/a/../b', '/..', '/a//b', '/a/', '/', '', '/tab\there', '/nul\u0000', `/${'p'.repeat(1024)}`]) {
      expectError(await post({ path, content: 'x' }), 400, 'invalid_request');
    }
    await memory(st.id, `/${'p'.repeat(1023)}`, 'longest path');
  });

  it('lists by path prefix and depth, paged by path', async () => {
    const s2 = await store();
    for (const p of ['/a.md', '/dir/b.md', '/dir/c.md', '/dir/sub/d.md', '/dire.md']) await memory(s2.id, p, p);
    const paths = async (q: string) => (await s.api('GET', `/memory-stores/${s2.id}/memories${q}`)).body.data.map((m: any) => m.path);
    expect(await paths('')).toEqual(['/a.md', '/dir/b.md', '/dir/c.md', '/dir/sub/d.md', '/dire.md']);
    expect(await paths('?path_prefix=/dir/')).toEqual(['/dir/b.md', '/dir/c.md', '/dir/sub/d.md']);
    expect(await paths('?path_prefix=/dir/&depth=1')).toEqual(['/dir/b.md', '/dir/c.md']);
    expect(await paths('?depth=1')).toEqual(['/a.md', '/dire.md']);
    const first = await s.api('GET', `/memory-stores/${s2.id}/memories?limit=2`);
    expect(first.body.data.map((m: any) => m.path)).toEqual(['/a.md', '/dir/b.md']);
    expect(first.body.data[0]).not.toHaveProperty('content');
    const second = await s.api('GET', `/memory-stores/${s2.id}/memories?limit=2&page=${first.body.next_page}`);
    expect(second.body.data.map((m: any) => m.path)).toEqual(['/dir/c.md', '/dir/sub/d.md']);
    const third = await s.api('GET', `/memory-stores/${s2.id}/memories?limit=2&page=${second.body.next_page}`);
    expect(third.body).toMatchObject({ data: [{ path: '/dire.md' }], next_page: null });
    expectError(await s.api('GET', `/memory-stores/${s2.id}/memories?page=garbage`), 400, 'invalid_request');
    expectError(await s.api('GET', `/memory-stores/${s2.id}/memories?path_prefix=nope`), 400, 'invalid_request');
  });

  it('edits need the current hash: a stale one is 409 version_conflict, nothing overwritten', async () => {
    const m = await memory(st.id, '/edit.md', 'one');
    const edited = await s.api('PATCH', `/memory-stores/${st.id}/memories/${m.id}`, { body: { content: 'two', expected_content_sha256: m.content_sha256 } });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(edited.body).toMatchObject({ content: 'two', content_sha256: hash('two') });
    const stale = await s.api('PATCH', `/memory-stores/${st.id}/memories/${m.id}`, { body: { content: 'three', expected_content_sha256: m.content_sha256 } });
    expectError(stale, 409, 'version_conflict');
    expect((await s.api('GET', `/memory-stores/${st.id}/memories/${m.id}`)).body.content).toBe('two');
    expectError(await s.api('PATCH', `/memory-stores/${st.id}/memories/${m.id}`, { body: { content: 'x' } }), 400, 'invalid_request');
    const moved = await s.api('PATCH', `/memory-stores/${st.id}/memories/${m.id}`, { body: { path: '/moved/edit.md', expected_content_sha256: hash('two') } });
    expect(moved.body).toMatchObject({ id: m.id, path: '/moved/edit.md', content: 'two' });
    expectError(await s.api('DELETE', `/memory-stores/${st.id}/memories/${m.id}?expected_content_sha256=${m.content_sha256}`), 409, 'version_conflict');
    expect((await s.api('DELETE', `/memory-stores/${st.id}/memories/${m.id}`)).body).toEqual({ type: 'memory_deleted', id: m.id });
    expectError(await s.api('GET', `/memory-stores/${st.id}/memories/${m.id}`), 404, 'not_found');
  });
});

describe('versions', () => {
  it('every change a version by the user; restore; redact keeps the row', async () => {
    const st = await store();
    const me = (await s.api('GET', '/me')).body;
    const m = await memory(st.id, '/v.md', 'first');
    await s.api('PATCH', `/memory-stores/${st.id}/memories/${m.id}`, { body: { content: 'second secret', expected_content_sha256: hash('first') } });
    await s.api('DELETE', `/memory-stores/${st.id}/memories/${m.id}`);
    const list = await s.api('GET', `/memory-stores/${st.id}/versions?memory_id=${m.id}`);
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    const versions = list.body.data;
    expect(versions.map((v: any) => v.operation)).toEqual(['deleted', 'modified', 'created']);
    const userId = me.id ?? me.user?.id;
    expect(versions[2]).toEqual({
      id: expect.stringMatching(/^memver_[0-9a-z]{26}$/),
      memory_store_id: st.id,
      memory_id: m.id,
      operation: 'created',
      path: '/v.md',
      content: 'first',
      content_sha256: hash('first'),
      size_bytes: 5,
      actor: { type: 'user', user_id: expect.stringMatching(/^usr_/) },
      created_at: expect.any(String),
      redacted_at: null,
      redacted_by: null,
    });
    if (userId) expect(versions[2].actor.user_id).toBe(userId);
    expect(versions[0]).toMatchObject({ operation: 'deleted', content: null, path: '/v.md' });
    expect((await s.api('GET', `/memory-stores/${st.id}/versions/${versions[1].id}`)).body).toEqual(versions[1]);

    // Restore the first version: the deleted memory comes back with its id, as a new version.
    const restored = await s.api('POST', `/memory-stores/${st.id}/versions/${versions[2].id}/restore`);
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    expect(restored.body).toMatchObject({ id: m.id, path: '/v.md', content: 'first' });
    expectError(await s.api('POST', `/memory-stores/${st.id}/versions/${versions[0].id}/restore`), 400, 'invalid_request');

    // Redact the version holding the secret: content and path null, the audit row stays.
    const redacted = await s.api('POST', `/memory-stores/${st.id}/versions/${versions[1].id}/redact`);
    expect(redacted.body).toMatchObject({
      id: versions[1].id,
      operation: 'modified',
      content: null,
      path: null,
      content_sha256: hash('second secret'),
      redacted_at: expect.any(String),
      redacted_by: expect.stringMatching(/^usr_/),
    });
    const after = (await s.api('GET', `/memory-stores/${st.id}/versions?memory_id=${m.id}`)).body.data;
    expect(after.map((v: any) => v.operation)).toEqual(['created', 'deleted', 'modified', 'created']);
    expect(JSON.stringify(after)).not.toContain('second secret');
    expectError(await s.api('POST', `/memory-stores/${st.id}/versions/${versions[1].id}/restore`), 400, 'invalid_request');
    // The store-wide list pages newest first.
    const page1 = await s.api('GET', `/memory-stores/${st.id}/versions?limit=3`);
    expect(page1.body.data).toHaveLength(3);
    const page2 = await s.api('GET', `/memory-stores/${st.id}/versions?limit=3&page=${page1.body.next_page}`);
    expect(page2.body).toMatchObject({ data: [{ operation: 'created' }], next_page: null });
  });
});

describe('universe isolation', () => {
  it("another universe's store, memories and versions are 404", async () => {
    expect((await s.api('POST', '/universes', { body: { slug: 'mem-b', name: 'B' } })).status).toBe(201);
    const scopedB = await s.mintToken('admin', { universe: 'mem-b' });
    const mine = await store();
    const m = await memory(mine.id, '/x.md', 'x');
    const v = (await s.api('GET', `/memory-stores/${mine.id}/versions`)).body.data[0];
    const as = { token: scopedB };
    expectError(await s.api('GET', `/memory-stores/${mine.id}`, as), 404, 'not_found');
    expectError(await s.api('GET', `/memory-stores/${mine.id}/memories`, as), 404, 'not_found');
    expectError(await s.api('GET', `/memory-stores/${mine.id}/memories/${m.id}`, as), 404, 'not_found');
    expectError(
      await s.api('PATCH', `/memory-stores/${mine.id}/memories/${m.id}`, { ...as, body: { content: 'y', expected_content_sha256: hash('x') } }),
      404,
      'not_found',
    );
    expectError(await s.api('DELETE', `/memory-stores/${mine.id}/memories/${m.id}`, as), 404, 'not_found');
    expectError(await s.api('POST', `/memory-stores/${mine.id}/versions/${v.id}/redact`, as), 404, 'not_found');
    expectError(await s.api('POST', `/memory-stores/${mine.id}/archive`, as), 404, 'not_found');
    expect((await s.api('GET', '/memory-stores?limit=100', as)).body.data.map((x: any) => x.id)).not.toContain(mine.id);
    expect((await s.api('GET', `/memory-stores/${mine.id}/memories/${m.id}`)).body.content).toBe('x');
  });

  it('read scope reads, cannot write', async () => {
    const read = await s.mintToken('read');
    const st = await store();
    expect((await s.api('GET', `/memory-stores/${st.id}/memories`, { token: read })).status).toBe(200);
    expectError(await s.api('POST', `/memory-stores/${st.id}/memories`, { token: read, body: { path: '/a', content: 'b' } }), 403, 'insufficient_scope');
  });
});

describe('GraphQL', () => {
  it('the same store, memory and versions', async () => {
    const st = await store();
    const created = await s.gql(
      `mutation($id: String!) { createMemory(memoryStoreId: $id, input: { path: "/g.md", content: "hi" }) { id path contentSha256 sizeBytes } }`,
      { id: st.id },
    );
    expect(created.body.data.createMemory).toMatchObject({ path: '/g.md', contentSha256: hash('hi'), sizeBytes: 2 });
    const read = await s.gql(
      `query($id: String!) { memory(memoryStoreId: $id, path: "/g.md") { content } memoryVersions(memoryStoreId: $id) { edges { node { operation actor { ... on MemoryUserActor { type userId } } } } } }`,
      { id: st.id },
    );
    expect(read.body.data.memory.content).toBe('hi');
    expect(read.body.data.memoryVersions.edges[0].node).toMatchObject({ operation: 'created', actor: { type: 'user' } });
  });
});

describe('webhooks', () => {
  it('memory.created, memory.updated and memory.deleted go to a subscribed endpoint', async () => {
    const received: { type: string; data: { type: string; id: string } }[] = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push(JSON.parse(body));
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const endpoint = await s.api('POST', '/webhooks', { body: { url, events: ['memory.created', 'memory.updated', 'memory.deleted'] } });
      expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
      const st = await store();
      const m = await memory(st.id, '/hooked.md', 'one');
      await s.api('PATCH', `/memory-stores/${st.id}/memories/${m.id}`, { body: { content: 'two', expected_content_sha256: hash('one') } });
      await s.api('DELETE', `/memory-stores/${st.id}/memories/${m.id}`);
      await waitFor(async () => received.length >= 3, 15_000, 'three deliveries');
      expect(received.map((e) => e.type).sort()).toEqual(['memory.created', 'memory.deleted', 'memory.updated']);
      expect(received.every((e) => e.data.type === 'memory' && e.data.id === m.id)).toBe(true);
    } finally {
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });
});
