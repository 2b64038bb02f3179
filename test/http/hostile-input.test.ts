// Hostile input over real HTTP: what used to crash the process or answer 500 now answers a 4xx
// in the envelope, the process keeps serving, and refused uploads leave no blob behind.
// (Fuzzing of every route: test/rest/fuzz.test.ts; limits at their boundaries: test/http/limits.test.ts.)
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type ApiResponse } from '../helpers/server.js';
import { expectError } from '../helpers/agents.js';
import { config } from '../../src/config.js';
import { prisma } from '../../src/db/client.js';
import { blobStore } from '../../src/blobs/blob-store.js';
import { newId } from '../../src/ids.js';
import { isRequestScoped, installProcessSafetyNet } from '../../src/process-safety.js';
import { findJsonProblem, jsonDepthExceeds } from '../../src/http/input-hygiene.js';
import { MAX_ANSWER_CHARS, MAX_DOCUMENT_FIELDS, MAX_RESOLVED_FIELDS } from '../../src/graphql/operation-limits.js';
import { getIntrospectionQuery } from 'graphql';

let s: TestServer;
let port: number;
beforeAll(async () => {
  s = await startTestServer();
  port = Number(new URL(s.url).port);
});
afterAll(async () => {
  await s?.stop();
});

const ENVELOPE = { error: { code: expect.any(String), message: expect.any(String) } };

/** fetch without the test helper's JSON encoding (raw bytes, any content type). */
async function send(method: string, p: string, body?: Buffer | string, headers: Record<string, string> = {}): Promise<ApiResponse> {
  const res = await fetch(s.base + p, {
    method,
    headers: { authorization: `Bearer ${s.adminToken}`, ...headers },
    body: typeof body === 'string' ? body : body && new Uint8Array(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* keep the text */
  }
  return { status: res.status, body: parsed, headers: res.headers, bytes: new Uint8Array() };
}

/** Writes a raw HTTP request on a socket; returns what came back (or '' when we hang up first). */
function rawRequest(request: Buffer | string, opts: { hangUpAfterMs?: number; waitMs?: number } = {}): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let out = '';
    socket.on('data', (d) => (out += d.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(out));
    socket.write(request);
    if (opts.hangUpAfterMs !== undefined) setTimeout(() => socket.destroy(), opts.hangUpAfterMs);
    setTimeout(() => socket.destroy(), opts.waitMs ?? 5_000);
  });
}

const multipartHead = (p: string, length: number) =>
  `POST /v1${p} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.adminToken}\r\nContent-Type: multipart/form-data; boundary=XX\r\nContent-Length: ${length}\r\n\r\n`;
const filePart = (name: string, filename: string, data: string) =>
  `--XX\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n${data}`;

function blobFiles(): string[] {
  const root = path.join(config().dataDir, 'blobs');
  if (!fs.existsSync(root)) return [];
  return fs
    .readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.join(d.parentPath, d.name));
}

/** Blob files appear and disappear asynchronously around a refused upload: wait for a steady count. */
async function settledBlobCount(expected: number): Promise<number> {
  const until = Date.now() + 3_000;
  while (blobFiles().length !== expected && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  return blobFiles().length;
}

async function stillServing(): Promise<void> {
  const health = await fetch(`${s.url}/healthz`);
  expect(health.status).toBe(200);
  expect((await s.api('GET', '/whoami')).status).toBe(200);
}

describe('JSON bodies', () => {
  it('a NUL byte in a value or a key answers 400 naming the field', async () => {
    const value = await s.api('POST', '/agents', { body: { name: 'a\u0000b' } });
    expectError(value, 400, 'invalid_request');
    expect(value.body.error.message).toBe('name contains a NUL character');
    const key = await s.api('POST', '/agents', { body: { metadata: { ['k\u0000']: 'v' } } });
    expectError(key, 400, 'invalid_request');
    expect(key.body.error.message).toBe('a key of metadata contains a NUL character');
    const deep = await s.api('POST', '/agents', { body: { mcpServers: [{ name: 'm', url: 'https://m.example', tools: { include: ['ok', 'bad\u0000'] } }] } });
    expect(deep.body.error.message).toBe('mcpServers[0].tools.include[1] contains a NUL character');
  });

  it('lone surrogates in values and keys answer 400; a valid pair passes', async () => {
    expectError(await s.api('POST', '/agents', { raw: '{"description":"x\\ud800y"}' }), 400, 'invalid_request');
    const key = await s.api('POST', '/agents', { raw: '{"metadata":{"\\udc00":"v"}}' });
    expect(key.body.error.message).toBe('a key of metadata contains an unpaired UTF-16 surrogate');
    const pair = await s.api('POST', '/agents', { raw: '{"description":"emoji \\ud83d\\ude00"}' });
    expect(pair.status).toBe(201);
    expect(pair.body.agent.description).toBe('emoji \u{1F600}');
  });

  it('bytes that are not UTF-8 answer 400', async () => {
    const res = await send('POST', '/agents', Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), {
      'content-type': 'application/json',
    });
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.message).toBe('the body is not valid UTF-8');
  });

  it('JSON nested 10,000 levels deep answers 400 at once; 64 levels is allowed', async () => {
    const deep = '{"metadata":' + '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_001);
    const started = Date.now();
    const res = await s.api('POST', '/agents', { raw: deep });
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.message).toBe('JSON nested deeper than 64 levels');
    expect(Date.now() - started).toBeLessThan(2_000);
    const arrays = await s.api('POST', '/agents', { raw: '['.repeat(100_000) });
    expect(arrays.body.error.message).toBe('JSON nested deeper than 64 levels');
    // 64 levels (the body object and 63 below it) are stored as sent; 65 are refused
    const nested = '{"a":'.repeat(63) + '"x"' + '}'.repeat(63);
    const ok = await s.api('POST', '/agents', { raw: `{"metadata":${nested}}` });
    expect(ok.status).toBe(201);
    expect(ok.body.agent.metadata).toEqual(JSON.parse(nested));
    expectError(await s.api('POST', '/agents', { raw: `{"metadata":{"b":${nested}}}` }), 400, 'invalid_request');
  });

  it('a body over 1 MiB answers 413 in the envelope', async () => {
    const res = await s.api('POST', '/agents', { raw: JSON.stringify({ prompt: 'p'.repeat(1024 * 1024) }) });
    expectError(res, 413, 'payload_too_large');
  });

  it('a body that is not JSON answers 415 and creates nothing (it used to create a default agent)', async () => {
    const before = (await s.api('GET', '/agents')).body.agents.length;
    const xml = await send('POST', '/agents', '<agent><name>x</name></agent>', { 'content-type': 'application/xml' });
    expectError(xml, 415, 'unsupported_media_type');
    expectError(await send('POST', '/agents', '{"name":"x"}', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type');
    expectError(await send('POST', '/agents', '{"name":"x"}', { 'content-type': 'application/json; charset=latin1' }), 415, 'unsupported_media_type');
    expectError(await send('POST', '/agents', 'name=x', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type');
    expect((await s.api('GET', '/agents')).body.agents.length).toBe(before);
    // no body at all is still a request with defaults; +json types are JSON
    expect((await send('POST', '/agents')).status).toBe(201);
    expect((await send('POST', '/agents', '{"displayName":"Merge"}', { 'content-type': 'application/merge-patch+json' })).status).toBe(201);
  });

  it('a JSON null body answers 400 and creates or changes nothing (it used to read as {})', async () => {
    const before = (await s.api('GET', '/agents')).body.agents.length;
    for (const raw of ['null', ' null ', '[]', '"x"', '42']) expectError(await s.api('POST', '/agents', { raw }), 400, 'invalid_request');
    expect((await s.api('GET', '/agents')).body.agents.length).toBe(before);
    const agent = (await s.api('POST', '/agents', { body: { displayName: 'Null' } })).body.agent;
    const session = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body.session;
    for (const p of [`/agents/${agent.id}`, `/sessions/${session.id}`]) expectError(await s.api('PATCH', p, { raw: 'null' }), 400, 'invalid_request');
    expectError(await s.api('POST', '/sessions', { raw: 'null' }), 400, 'invalid_request');
    expect((await s.api('GET', `/agents/${agent.id}`)).body.agent.version).toBe(agent.version);
  });

  it("an integer over 2^31-1 (GraphQL's Int, which the core takes) answers 400, not 500", async () => {
    const agent = (await s.api('POST', '/agents', { body: { displayName: 'Int' } })).body.agent;
    for (const expectedVersion of [2 ** 31, 2 ** 53 - 1, -(2 ** 31) - 1]) {
      expectError(await s.api('PATCH', `/agents/${agent.id}`, { body: { displayName: 'x', expectedVersion } }), 400, 'invalid_request');
    }
    expect((await s.api('PATCH', `/agents/${agent.id}`, { body: { displayName: 'y', expectedVersion: agent.version } })).status).toBe(200);
  });

  it('__proto__ keys are refused; constructor/prototype keys pollute nothing', async () => {
    const proto = await s.api('POST', '/agents', { raw: '{"metadata":{"__proto__":{"polluted":"yes"}}}' });
    expectError(proto, 400, 'invalid_request');
    expect(proto.body.error.message).toBe('metadata has a key "__proto__", which is not allowed');
    expectError(await s.api('POST', '/agents', { raw: '{"__proto__":{"polluted":"yes"}}' }), 400, 'invalid_request');
    const agent = await s.api('POST', '/agents', { body: { metadata: { constructor: 'c', prototype: 'p' } } });
    expect(agent.status).toBe(201);
    const patched = await s.api('PATCH', `/agents/${agent.body.agent.id}`, { raw: '{"metadata":{"constructor":{"prototype":{"polluted":"yes"}}}}' });
    expect(patched.status).toBeLessThan(500);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('the checks are pure functions too', () => {
    expect(jsonDepthExceeds('{"a":"[[[[[[[[[[[[["}', 2)).toBe(false); // brackets inside strings do not count
    expect(jsonDepthExceeds('[[[]]]', 2)).toBe(true);
    expect(findJsonProblem({ a: [{ 'b c': 'x\u0000' }] })).toBe('a[0]["b c"] contains a NUL character');
    expect(findJsonProblem({ ok: ['fine', { nested: 'yes' }] })).toBeNull();
  });
});

describe('query strings, path ids, cursors', () => {
  it('NUL, control characters and invalid UTF-8 in a query string answer 400', async () => {
    expectError(await s.api('GET', '/whoami?x=%00'), 400, 'invalid_request');
    expectError(await s.api('GET', '/whoami?x=%0a'), 400, 'invalid_request');
    expectError(await s.api('GET', '/whoami?%00=x'), 400, 'invalid_request');
    expectError(await s.api('GET', '/whoami?x=%ff%fe'), 400, 'invalid_request');
    expectError(await s.api('GET', '/whoami?x=%ed%a0%80'), 400, 'invalid_request'); // an encoded lone surrogate
    expect((await s.api('GET', '/whoami?x=%E2%9C%93')).status).toBe(200);
  });

  it('path ids of the wrong shape answer 404 before the database, after the token check (no token: 401)', async () => {
    const paths = [
      '/files/file_%00/content',
      '/routines/rtn_%00/runs',
      '/sessions/sess_01abc/resources/sesrsc_%00',
      '/agents/agent_%00',
      '/agents/x%ff',
      '/skills/skill_ABC',
      '/webhooks/rtn_abc',
      '/universes/%00%00%00',
      '/sessions/file_abc',
      `/agents/agent_${'a'.repeat(65)}`,
      '/sessions/0',
    ];
    for (const p of paths) {
      expectError(await s.api('GET', p), 404, 'not_found');
      // the spec: a missing (or unknown) token is 401, whatever the path names
      expectError(await s.api('GET', p, { token: null }), 401, 'invalid_token');
      expectError(await s.api('GET', p, { token: 'ast_unknown' }), 401, 'invalid_token');
    }
    expectError(await s.api('DELETE', '/agents/agent_%00', { token: null }), 401, 'invalid_token');
    expectError(await s.api('POST', '/files/file_%00/content', { token: null }), 405, 'method_not_allowed');
    expectError(await s.api('GET', '/agents/agent_01abc', { token: null }), 401, 'invalid_token');
    // other parameters: control characters refused, anything printable reaches the route's rules
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    expectError(await s.api('PUT', `/agents/${agent.id}/secrets/K%00`, { body: { value: 'v' } }), 404, 'not_found');
    expectError(await s.api('PUT', `/agents/${agent.id}/secrets/bad-key`, { body: { value: 'v' } }), 400, 'invalid_request');
  });

  it('garbage cursors and page tokens answer 400, never 500', async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const sid = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body.session.id;
    for (const p of [
      '/skills?cursor=%00',
      '/skills?cursor=garbage',
      '/skills?cursor=R1BDOlM6Li4v',
      '/files?page=garbage%00',
      '/files?page=garbage',
      '/files?page=file_01abc',
      `/sessions/${sid}/resources?page=x`,
      `/sessions/${sid}/resources?limit=1&page=${Buffer.from('files:file_1').toString('base64url')}`,
    ]) {
      expectError(await s.api('GET', p), 400, 'invalid_request');
    }
  });
});

describe('the token first', () => {
  // Spec: a missing, unknown, revoked or expired token gives 401, whatever else is wrong with the
  // request; a token without the operation's scope 403. The edge's refusals (content type, body,
  // query, path id) are answered only after that.
  const bad: { what: string; method: string; path: string; body?: string; headers?: Record<string, string>; status: number; code: string }[] = [
    {
      what: 'a content type the route does not read',
      method: 'POST',
      path: '/agents',
      body: 'x',
      headers: { 'content-type': 'text/plain' },
      status: 415,
      code: 'unsupported_media_type',
    },
    {
      what: 'malformed JSON',
      method: 'POST',
      path: '/agents',
      body: '{bad',
      headers: { 'content-type': 'application/json' },
      status: 400,
      code: 'invalid_request',
    },
    {
      what: 'a NUL in the body',
      method: 'POST',
      path: '/agents',
      body: '{"name":"a\\u0000b"}',
      headers: { 'content-type': 'application/json' },
      status: 400,
      code: 'invalid_request',
    },
    {
      what: 'a body over the limit',
      method: 'POST',
      path: '/agents',
      body: `{"name":"${'x'.repeat(2 << 20)}"}`,
      headers: { 'content-type': 'application/json' },
      status: 413,
      code: 'payload_too_large',
    },
    { what: 'a control character in the query', method: 'GET', path: '/sessions?limit=%00', status: 400, code: 'invalid_request' },
    { what: 'a path id that cannot exist', method: 'DELETE', path: '/agents/0', status: 404, code: 'not_found' },
  ];

  it.each(bad)('$what: 401 without a token or with an unknown one, 403 without the scope, then the refusal itself', async (c) => {
    const headers = c.headers ?? {};
    expectError(await send(c.method, c.path, c.body, { ...headers, authorization: '' }), 401, 'invalid_token');
    expectError(await send(c.method, c.path, c.body, { ...headers, authorization: 'Bearer ast_not_a_real_token_0123456789' }), 401, 'invalid_token');
    if (c.method !== 'GET') {
      const read = await s.mintToken('read');
      expectError(await send(c.method, c.path, c.body, { ...headers, authorization: `Bearer ${read}` }), 403, 'insufficient_scope');
    }
    expectError(await send(c.method, c.path, c.body, headers), c.status, c.code);
  });
});

describe('multipart uploads', () => {
  it('a body that ends before its closing boundary answers 400 and the process keeps serving (it used to exit)', async () => {
    const blobs = blobFiles().length;
    for (const target of ['/files', '/skills']) {
      const body = filePart(target === '/files' ? 'file' : 'files', 'SKILL.md', 'hello');
      const answer = await rawRequest(multipartHead(target, body.length) + body);
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(answer.slice(answer.indexOf('{')))).toEqual({
        error: { code: 'invalid_request', message: 'malformed multipart body: Unexpected end of form' },
      });
    }
    await stillServing();
    expect(await settledBlobCount(blobs)).toBe(blobs);
  });

  it('a body cut mid-part, a client that disconnects mid-upload, a huge part header: no blob left, still serving', async () => {
    const blobs = blobFiles().length;
    // cut mid-part: the socket closes with most of the declared length missing
    await rawRequest(multipartHead('/files', 5_000_000) + filePart('file', 'a.bin', 'x'.repeat(200_000)), { hangUpAfterMs: 300 });
    await rawRequest(multipartHead('/skills', 5_000_000) + filePart('files', 'SKILL.md', 'x'.repeat(200_000)), { hangUpAfterMs: 300 });
    // a client that streams slowly and then goes away
    const slow = new Promise<string>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.on('close', () => resolve('closed'));
      socket.write(multipartHead('/files', 10_000_000) + filePart('file', 'slow.bin', ''));
      let n = 0;
      const t = setInterval(() => {
        socket.write(Buffer.alloc(64 * 1024, 1));
        if (++n === 10) {
          clearInterval(t);
          socket.destroy();
        }
      }, 20);
    });
    await slow;
    const huge = `--XX\r\nContent-Disposition: form-data; name="file"; filename="a"\r\nX-Pad: ${'p'.repeat(40_000)}\r\n\r\nabc\r\n--XX--\r\n`;
    const answer = await rawRequest(multipartHead('/files', huge.length) + huge);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"code":"invalid_request"');
    expect(await settledBlobCount(blobs)).toBe(blobs);
    await stillServing();
  });

  it('no boundary, a NUL in display_name, a file over the limit among parts: 4xx in the envelope', async () => {
    expectError(await send('POST', '/skills', 'x', { 'content-type': 'multipart/form-data' }), 400, 'invalid_request');
    expectError(await send('POST', '/files', 'x', { 'content-type': 'multipart/form-data' }), 400, 'invalid_request');
    const form = new FormData();
    form.append('files', new Blob(['---\nname: n\ndescription: d\n---\n']), 'SKILL.md');
    form.append('display_name', 'a\u0000b');
    const res = await s.api('POST', '/skills', { form });
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.message).toBe('display_name contains a NUL character');
    expectError(await s.api('POST', '/skills/skill_nothere/revisions', { form }), 400, 'invalid_request');
  });

  it('expires_in_seconds sent as a part with a filename (as python-requests sends fields) is read, and checked', async () => {
    const upload = (expires: string) => {
      const form = new FormData();
      form.append('file', new Blob(['a,b\n']), 'e.csv');
      form.append('expires_in_seconds', new Blob([expires]), 'expires_in_seconds');
      return s.api('POST', '/files', { form });
    };
    const ok = await upload('7200');
    expect(ok.status).toBe(200);
    expect(ok.body.expires_at).not.toBeNull();
    // two hours after creation (the two timestamps are taken a moment apart)
    expect(Math.abs(Date.parse(ok.body.expires_at) - Date.parse(ok.body.created_at) - 7_200_000)).toBeLessThan(60_000);
    for (const bad of ['12', 'soon', '9'.repeat(100)]) expectError(await upload(bad), 400, 'invalid_request');
  });

  it('twenty hostile uploads at once leave the process serving and no blob behind', async () => {
    const blobs = blobFiles().length;
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const body = filePart('file', `f${i}`, 'y'.repeat(10_000 * (i + 1)));
        return i % 2
          ? rawRequest(multipartHead('/files', body.length) + body)
          : rawRequest(multipartHead('/files', body.length * 2) + body, { hangUpAfterMs: 100 });
      }),
    );
    expect(await settledBlobCount(blobs)).toBe(blobs);
    await stillServing();
  });
});

describe('downloads', () => {
  async function downloadable(bytes: Buffer, opts: { missing?: boolean } = {}) {
    const universe = await prisma.universe.findFirstOrThrow({ where: { slug: (await s.api('GET', '/whoami')).body.universe.slug } });
    const blob = await blobStore().put(Readable.from([bytes]));
    if (opts.missing) await blobStore().delete(blob.key);
    return prisma.file.create({
      data: {
        id: newId('file'),
        universeId: universe.id,
        filename: 'd.bin',
        mimeType: 'application/octet-stream',
        sizeBytes: blob.size,
        sha256: blob.sha256,
        blobKey: blob.key,
        downloadable: true,
      },
    });
  }
  const openFds = () => fs.readdirSync('/proc/self/fd').length;

  it('clients that leave mid-download close the file at once (no descriptor leak)', async () => {
    const file = await downloadable(Buffer.alloc(8 * 1024 * 1024, 3));
    const full = await fetch(`${s.base}/files/${file.id}/content`, { headers: { authorization: `Bearer ${s.adminToken}` } });
    expect((await full.arrayBuffer()).byteLength).toBe(8 * 1024 * 1024);
    const before = openFds();
    for (let i = 0; i < 20; i++) {
      const ctl = new AbortController();
      const res = await fetch(`${s.base}/files/${file.id}/content`, { headers: { authorization: `Bearer ${s.adminToken}` }, signal: ctl.signal });
      const reader = res.body!.getReader();
      await reader.read();
      ctl.abort();
      await reader.closed.catch(() => undefined);
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(openFds()).toBeLessThanOrEqual(before + 2);
    await stillServing();
  });

  it('a blob missing from storage answers the envelope instead of a reset', async () => {
    const file = await downloadable(Buffer.from('gone'), { missing: true });
    const res = await send('GET', `/files/${file.id}/content`);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: { code: 'internal_error', message: 'the file content cannot be read' } });
    await stillServing();
  });
});

describe('routines', () => {
  it("a cron expression the scheduler's parser refuses (duplicate values) answers 400, not 500 on Redis", async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const body = {
      name: 'dup',
      target: { type: 'new_session', agent: agent.id },
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'x' }] }],
    };
    const res = await s.api('POST', '/routines', { body: { ...body, schedule: { type: 'cron', expression: '0,0 * * * *', timezone: 'UTC' } } });
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.message).toContain('duplicate');
    const ok = await s.api('POST', '/routines', { body: { ...body, schedule: { type: 'cron', expression: '0,30 9-17 * * 1-5', timezone: 'Europe/Berlin' } } });
    expect(ok.status).toBe(201);
    expectError(
      await s.api('PATCH', `/routines/${ok.body.id}`, { body: { schedule: { type: 'cron', expression: '5,5 * * * *', timezone: 'UTC' } } }),
      400,
      'invalid_request',
    );
  });
});

describe('other entry points', () => {
  it('a NUL in a sign-in (JSON or form) answers 400 (it used to exit the process)', async () => {
    const json = await fetch(`${s.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: s.url },
      body: JSON.stringify({ email: 'a\u0000b@x', password: 'p' }),
    });
    expect(json.status).toBe(400);
    expect(await json.json()).toEqual(ENVELOPE);
    const form = await fetch(`${s.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.url },
      body: 'email=a%00b&password=p',
    });
    expect(form.status).toBe(400);
    await stillServing();
  });

  it("GraphQL: NUL in variables or in a string of the document answers 400 with a GraphQL error; malformed JSON stays Yoga's answer", async () => {
    const res = await s.gql('query($id: String!) { agent(id: $id) { id } }', { id: 'agent_\u0000' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: [{ message: 'variables.id contains a NUL character', extensions: { code: 'invalid_request' } }] });
    const literal = await s.gql('{ agent(id: "agent_\\u0000") { id } }');
    expect(literal.status).toBe(400);
    expect(literal.body).toEqual({
      errors: [{ message: 'a string in the GraphQL document contains a NUL character', extensions: { code: 'invalid_request' } }],
    });
    const viaGet = await fetch(`${s.url}/graphql?query=${encodeURIComponent('{ agent(id: "x\\u0000") { id } }')}`, {
      headers: { authorization: `Bearer ${s.adminToken}` },
    });
    expect(viaGet.status).toBe(400);
    const malformed = await fetch(`${s.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${s.adminToken}` },
      body: '{"query":',
    });
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).errors[0].message).toContain('invalid JSON');
    expect((await s.gql('{ __typename }')).body).toEqual({ data: { __typename: 'Query' } });
  });

  it('GraphQL: aliases cannot multiply resolvers (3,000 aliased listings used to hold the process ~20 s): over 50 per operation is refused before anything runs', async () => {
    const roots = (n: number) => Array.from({ length: n }, (_, i) => `a${i}: agents(first: 1) { edges { node { id } } }`).join(' ');
    /** A validation failure: 200 for application/json, 400 for application/graphql-response+json (GraphQL over HTTP). */
    const refused = async (query: string, why = `at most ${MAX_RESOLVED_FIELDS} per operation`) => {
      const res = await s.gql(query);
      expect(res.body.data).toBeUndefined();
      expect(res.body.errors).toEqual([expect.objectContaining({ message: expect.stringContaining(why), extensions: { code: 'invalid_request' } })]);
      const strict = await fetch(`${s.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.adminToken}`, 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: JSON.stringify({ query }),
      });
      expect(strict.status).toBe(400);
    };
    const ok = await s.gql(`{ ${roots(MAX_RESOLVED_FIELDS)} }`);
    expect(ok.status).toBe(200);
    expect(ok.body.errors).toBeUndefined();
    expect(Object.keys(ok.body.data)).toHaveLength(MAX_RESOLVED_FIELDS);
    // GraphiQL's schema introspection (every option on) stays under the limit.
    const introspection = await s.gql(
      getIntrospectionQuery({ descriptions: true, inputValueDeprecation: true, specifiedByUrl: true, directiveIsRepeatable: true, oneOf: true }),
    );
    expect(introspection.body.errors).toBeUndefined();
    expect(introspection.body.data.__schema.queryType.name).toBe('Query');

    await refused(`{ ${roots(3000)} }`, `more than ${MAX_DOCUMENT_FIELDS} field selections`);
    await refused(`{ ${roots(MAX_RESOLVED_FIELDS + 1)} }`);
    // the same through a fragment, in a mutation (nothing created), and nested (a field with arguments)
    await refused(`query { ...F } fragment F on Query { ${roots(MAX_RESOLVED_FIELDS + 1)} }`);
    const before = (await s.api('GET', '/agents')).body.agents.length;
    await refused(`mutation { ${Array.from({ length: MAX_RESOLVED_FIELDS + 1 }, (_, i) => `m${i}: createAgent(input: {}) { id }`).join(' ')} }`);
    expect((await s.api('GET', '/agents')).body.agents.length).toBe(before);
    await refused(
      `{ webhookEndpoint(id: "whep_x") { ${Array.from({ length: MAX_RESOLVED_FIELDS }, (_, i) => `d${i}: deliveries(first: 1) { edges { node { id } } }`).join(' ')} } }`,
    );

    // /graphql/stream validates with the same rule
    const sse = await fetch(`${s.url}/graphql/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.adminToken}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: `{ ${roots(MAX_RESOLVED_FIELDS + 1)} }` }),
    });
    expect(sse.status).toBe(400);
    expect(await sse.text()).toContain(`at most ${MAX_RESOLVED_FIELDS} per operation`);
    await stillServing();
  });

  it('GraphQL: aliases of a field without arguments cannot multiply the answer (5,500 copies of a 100,000-character prompt were a 500 after seconds): documents over 1,000 field selections and answers over 16 MiB are 400', async () => {
    const agent = (await s.api('POST', '/agents', { body: { prompt: 'p'.repeat(100_000) } })).body.agent;
    const copies = (n: number) => `query($id: String!) { agent(id: $id) { ${Array.from({ length: n }, (_, i) => `p${i}: prompt`).join(' ')} } }`;
    const few = await s.gql<any>(copies(10), { id: agent.id });
    expect(few.body.errors, JSON.stringify(few.body.errors)).toBeUndefined();
    expect(few.body.data.agent.p9).toHaveLength(100_000);
    // 200 copies: ≈ 20 MB, over MAX_ANSWER_CHARS; refused, not written (HTTP 400 either way: it is an execution's answer)
    const big = await s.gql<any>(copies(Math.ceil(MAX_ANSWER_CHARS / 100_000) + 30), { id: agent.id });
    expect(big.status).toBe(400);
    expect(big.body.data ?? null).toBeNull();
    expect(big.body.errors).toEqual([
      expect.objectContaining({ message: expect.stringContaining('the answer would be larger than 16 MiB'), extensions: { code: 'invalid_request' } }),
    ]);
    // 5,500 copies: the document itself is refused as it is parsed, even without a token (introspection)
    const huge = await s.gql<any>(copies(5500), { id: agent.id });
    expect(huge.body.errors).toEqual([
      expect.objectContaining({
        message: expect.stringContaining(`more than ${MAX_DOCUMENT_FIELDS} field selections`),
        extensions: { code: 'invalid_request' },
      }),
    ]);
    const anonymous = await fetch(`${s.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: `{ __schema { ${Array.from({ length: 5000 }, (_, i) => `t${i}: types { name kind description }`).join(' ')} } }` }),
    });
    expect(anonymous.status).toBe(400);
    expect(JSON.stringify(await anonymous.json())).toContain(`more than ${MAX_DOCUMENT_FIELDS} field selections`);
    await stillServing();
  });
});

describe('process safety net', () => {
  it('tells request-scoped failures from the rest', () => {
    const withCode = (code: string) => Object.assign(new Error('x'), { code });
    for (const err of [
      withCode('ECONNRESET'),
      withCode('EPIPE'),
      withCode('ERR_STREAM_PREMATURE_CLOSE'),
      withCode('HPE_INVALID_METHOD'),
      new Error('Unexpected end of form'),
      Object.assign(new Error('db'), { name: 'PrismaClientKnownRequestError' }),
    ]) {
      expect(isRequestScoped(err), String(err)).toBe(true);
    }
    for (const err of [new TypeError('Cannot read properties of undefined'), new RangeError('Maximum call stack size exceeded'), 'a string', null]) {
      expect(isRequestScoped(err), String(err)).toBe(false);
    }
  });

  it('logs and serves on for request-scoped errors and rejections; stops, then exits 1, otherwise', async () => {
    const exits: number[] = [];
    let stopped = 0;
    const before = process.listeners('uncaughtException').length;
    const uninstall = installProcessSafetyNet({ stop: async () => void stopped++, exit: (code) => void exits.push(code) });
    try {
      const onException = process.listeners('uncaughtException').at(-1)! as (err: unknown) => void;
      const onRejection = process.listeners('unhandledRejection').at(-1)! as (reason: unknown) => void;
      onException(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
      onRejection(new Error('a forgotten await'));
      await new Promise((r) => setTimeout(r, 20));
      expect(exits).toEqual([]);
      onException(new TypeError('state half-updated'));
      onException(new TypeError('and again'));
      await new Promise((r) => setTimeout(r, 20));
      expect(stopped).toBe(1);
      expect(exits).toEqual([1]);
    } finally {
      uninstall();
    }
    expect(process.listeners('uncaughtException').length).toBe(before);
  });
});
