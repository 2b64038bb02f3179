// Files over HTTP: streamed uploads with the 32 MiB limit (memory stays flat), listing and
// paging, ids[], soft delete, content rules, and message attachments becoming per-session
// copies that reach the model as image blocks.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type ApiResponse } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, waitForEvents } from '../helpers/sessions.js';

let s: TestServer;
let fake: FakeProvider;
let images: http.Server;
let imageUrl: string;
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
beforeAll(async () => {
  fake = await startFakeProvider();
  s = await startTestServer({ anthropicApiKey: 'sk', anthropicBaseUrl: fake.anthropicBaseUrl });
  images = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG));
  await new Promise<void>((r) => images.listen(0, '127.0.0.1', r));
  imageUrl = `http://localhost:${(images.address() as AddressInfo).port}/pixel.png`;
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
  images?.close();
});

const expectError = (res: ApiResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
};

async function upload(content: Blob | string, filename: string, type: string, extra: Record<string, string> = {}) {
  const form = new FormData();
  form.append('file', content instanceof Blob ? content : new Blob([content], { type }), filename);
  for (const [k, v] of Object.entries(extra)) form.append(k, v);
  return s.api('POST', '/files', { form });
}

describe('upload', () => {
  it('stores a CSV and answers the File shape', async () => {
    const res = await upload('a,b\n1,2\n', 'in.csv', 'text/csv', { expires_in_seconds: '3600' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      type: 'file',
      id: expect.stringMatching(/^file_/),
      created_at: expect.any(String),
      filename: 'in.csv',
      mime_type: 'text/csv',
      size_bytes: 8,
      downloadable: false,
      expires_at: expect.any(String),
    });
    const expires = new Date(res.body.expires_at).getTime() - Date.now();
    expect(expires).toBeGreaterThan(3590_000);
    expect((await s.api('GET', `/files/${res.body.id}`)).body).toEqual(res.body);
  });

  it('a non-ASCII file name is read as UTF-8 (not Latin-1)', async () => {
    const res = await upload('hi', 'ü漢.txt', 'text/plain');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.filename).toBe('ü漢.txt');
    expect((await s.api('GET', `/files/${res.body.id}`)).body.filename).toBe('ü漢.txt');
    // A hand-written body, as curl -F 'file=@ü漢.txt' sends it: raw UTF-8 bytes in the quoted filename.
    const boundary = 'x-boundary-utf8';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="ü漢.txt"\r\nContent-Type: text/plain\r\n\r\n`, 'utf8'),
      Buffer.from('hi\r\n'),
      Buffer.from(`--${boundary}--\r\n`),
    ]);
    const raw = await s.fetch('/files', {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${s.adminToken}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    expect(raw.status).toBe(200);
    expect(((await raw.json()) as { filename: string }).filename).toBe('ü漢.txt');
  });

  it('expires_in_seconds must be 3600 to 7776000', async () => {
    expectError((await upload('x', 'x.txt', 'text/plain', { expires_in_seconds: '3599' })) as any, 400, 'invalid_request');
    expectError((await upload('x', 'x.txt', 'text/plain', { expires_in_seconds: '7776001' })) as any, 400, 'invalid_request');
    expect((await upload('x', 'x.txt', 'text/plain', { expires_in_seconds: '7776000' })).status).toBe(200);
  });

  it('refuses a body without a file part and non-multipart bodies', async () => {
    const form = new FormData();
    form.append('other', 'x');
    const res = await s.api('POST', '/files', { form });
    expectError(res, 400, 'invalid_request');
    // JSON is not what the upload route reads: 415 at the edge
    expectError(await s.api('POST', '/files', { body: { file: 'nope' } }), 415, 'unsupported_media_type');
  });

  it("a 33 MiB upload is refused with 413 while the server's memory stays flat", async () => {
    // The client is curl in another process, so this process's memory is the server's alone.
    const big = path.join(os.tmpdir(), `big-${Date.now()}.bin`);
    fs.writeFileSync(big, Buffer.alloc(33 * 1024 * 1024, 7));
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
    const out = await new Promise<string>((resolve, reject) => {
      execFile(
        'curl',
        ['-s', '-w', '\n%{http_code}', '-H', `authorization: Bearer ${s.adminToken}`, '-F', `file=@${big};type=application/octet-stream`, `${s.base}/files`],
        (err, stdout) => (err ? reject(err) : resolve(stdout)),
      );
    });
    clearInterval(sampler);
    fs.rmSync(big);
    const [body, status] = out.split('\n');
    expect(status).toBe('413');
    expect(JSON.parse(body!).error.code).toBe('file_too_large');
    // Holding the body would add at least its 33 MiB; streaming adds buffers and the runtime's
    // own noise (measured up to ≈ 17 MiB on PostgreSQL + Redis under load).
    expect(peak - before).toBeLessThan(24 * 1024 * 1024);
    const list = (await s.api('GET', '/files?limit=100')).body.data;
    expect(list.find((f: any) => f.filename.startsWith('big-'))).toBeUndefined();
  });
});

describe('list, delete, content', () => {
  it('pages newest first; ids[] returns exactly those files and refuses page/limit', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await upload(`f${i}`, `p${i}.txt`, 'text/plain')).body.id);
    const first = await s.api('GET', '/files?limit=2');
    expect(first.body.data).toHaveLength(2);
    expect(first.body.data[0].id).toBe(ids[4]);
    // next_page is opaque (base64url), valid only as this service issued it
    expect(first.body.next_page).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(first.body.next_page).not.toContain('file_');
    const second = await s.api('GET', `/files?limit=2&page=${first.body.next_page}`);
    expect(second.body.data.map((f: any) => f.id)).toEqual([ids[2], ids[1]]);
    expectError(await s.api('GET', `/files?limit=2&page=${ids[3]}`), 400, 'invalid_request');
    expectError(await s.api('GET', `/files?limit=2&page=${Buffer.from('files:../x').toString('base64url')}`), 400, 'invalid_request');
    const picked = await s.api('GET', `/files?ids[]=${ids[1]}&ids[]=${ids[3]}`);
    expect(picked.body.data.map((f: any) => f.id)).toEqual([ids[1], ids[3]]);
    const repeated = await s.api('GET', `/files?ids[]=${ids[3]}&ids[]=${ids[1]}&ids[]=${ids[3]}`);
    expect(repeated.body.data.map((f: any) => f.id)).toEqual([ids[3], ids[1]]); // each file once
    expect(picked.body.next_page).toBeNull();
    expectError(await s.api('GET', `/files?ids[]=${ids[1]}&limit=2`), 400, 'invalid_request');
    const many = Array.from({ length: 101 }, (_, i) => `ids[]=file_${i}`).join('&');
    expectError(await s.api('GET', `/files?${many}`), 400, 'invalid_request');
    expectError(await s.api('GET', '/files?limit=0'), 400, 'invalid_request');
  });

  it('uploads are not downloadable; deleted files stop resolving', async () => {
    const f = (await upload('secret-ish', 'u.txt', 'text/plain')).body;
    expectError(await s.api('GET', `/files/${f.id}/content`), 400, 'not_downloadable');
    expect((await s.api('DELETE', `/files/${f.id}`)).body).toEqual({ type: 'file_deleted', id: f.id });
    expectError(await s.api('GET', `/files/${f.id}`), 404, 'not_found');
    expectError(await s.api('DELETE', `/files/${f.id}`), 404, 'not_found');
  });

  it('an expired upload is 404', async () => {
    const f = (await upload('x', 'e.txt', 'text/plain', { expires_in_seconds: '3600' })).body;
    const { prisma } = await import('../../src/db/client.js');
    await prisma.file.update({ where: { id: f.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expectError(await s.api('GET', `/files/${f.id}`), 404, 'not_found');
  });
});

describe('an upload whose bytes are missing (another process with its own DATA_DIR)', () => {
  // Simulated by deleting the blob file: the row is shared (one database), the bytes are not.
  async function uploadWithoutBytes() {
    const f = (await upload('a,b\n', 'gone.csv', 'text/csv')).body;
    const { prisma } = await import('../../src/db/client.js');
    const { config } = await import('../../src/config.js');
    const { blobKey } = await prisma.file.findUniqueOrThrow({ where: { id: f.id } });
    fs.rmSync(path.join(config().dataDir, 'blobs', blobKey.slice(0, 2), blobKey));
    return f;
  }
  it('POST /sessions with it as a resource or in initial_events is 404 not_found naming it, not a 500; no session is left', async () => {
    const f = await uploadWithoutBytes();
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const { prisma } = await import('../../src/db/client.js');
    const before = await prisma.session.count();
    const asResource = await s.api('POST', '/sessions', { body: { agent: agent.id, resources: [{ type: 'file', file_id: f.id }] } });
    expectError(asResource, 404, 'not_found');
    expect(asResource.body.error.message).toContain(f.id);
    const asAttachment = await s.api('POST', '/sessions', {
      body: { agent: agent.id, initial_events: [{ type: 'user.message', content: [{ type: 'document', source: { type: 'file', file_id: f.id } }] }] },
    });
    expectError(asAttachment, 404, 'not_found');
    expect(await prisma.session.count()).toBe(before);
  });
});

describe('message attachments', () => {
  it('image and document sources become per-session copies; the model receives the image', async () => {
    const { session } = await readySession(s);
    const pdf = (await upload('%PDF-1.4 fake', 'report.pdf', 'application/pdf')).body;
    fake.enqueue({ kind: 'text', text: 'I see a pixel' });
    const sent = await s.api('POST', `/sessions/${session.id}/events`, {
      body: {
        events: [
          {
            type: 'user.message',
            content: [
              { type: 'text', text: 'what is this?' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } },
              { type: 'image', source: { type: 'url', url: imageUrl } },
              { type: 'document', source: { type: 'file', file_id: pdf.id }, title: 'Report' },
            ],
          },
        ],
      },
    });
    expect(sent.status).toBe(202);
    const content = sent.body.data[0].content;
    for (const block of content.slice(1)) expect(block.source).toEqual({ type: 'file', file_id: expect.stringMatching(/^file_/) });
    expect(content[3].title).toBe('Report');
    const copy = content[1].source.file_id;
    const downloaded = await s.api('GET', `/files/${copy}/content`);
    expect(downloaded.status).toBe(200);
    expect(downloaded.headers.get('content-type')).toBe('image/png');
    expect(downloaded.headers.get('content-disposition')).toContain('attachment');
    expect(Buffer.from(downloaded.bytes)).toEqual(PNG);
    const scoped = await s.api('GET', `/files?scope_id=${session.id}`);
    expect(scoped.body.data.map((f: any) => f.id).sort()).toEqual(
      content
        .slice(1)
        .map((b: any) => b.source.file_id)
        .sort(),
    );
    expect(scoped.body.data.every((f: any) => f.downloadable)).toBe(true);

    await waitForEvents(s, session.id, 'session.status_idle');
    const userMsg = fake.requests[fake.requests.length - 1]!.body.messages[0];
    expect(userMsg.content[1]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } });
    expect(userMsg.content[3]).toMatchObject({ type: 'document', source: { type: 'base64', media_type: 'application/pdf' }, title: 'Report' });
    // Deleting the upload keeps the session's copy.
    await s.api('DELETE', `/files/${pdf.id}`);
    expect((await s.api('GET', `/files/${content[3].source.file_id}`)).status).toBe(200);
  });

  it('an unknown file id is 404 and stores nothing; a blocked url is 400', async () => {
    const { session } = await readySession(s);
    expectError(
      await s.api('POST', `/sessions/${session.id}/events`, {
        body: { events: [{ type: 'user.message', content: [{ type: 'image', source: { type: 'file', file_id: 'file_missing' } }] }] },
      }),
      404,
      'not_found',
    );
    expectError(
      await s.api('POST', `/sessions/${session.id}/events`, {
        body: { events: [{ type: 'user.message', content: [{ type: 'image', source: { type: 'url', url: 'http://169.254.169.254/latest/meta-data' } }] }] },
      }),
      400,
      'invalid_request',
    );
    expect((await s.api('GET', `/sessions/${session.id}/events`)).body.events).toEqual([]);
  });
});
