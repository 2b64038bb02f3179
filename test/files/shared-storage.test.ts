// Shared blob storage: the S3-compatible store (@aws-sdk/client-s3) against a local S3 server
// (s3rver): streamed puts with the size limit applied before anything reaches the bucket,
// replace-in-place for snapshots, a missing object reported as ENOENT; and two API processes
// with separate DATA_DIRs on one PostgreSQL + Redis + bucket: a file uploaded through one is
// downloaded and attached to a session through the other.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import pg from 'pg';
import S3rver from 's3rver';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3BlobStore, loadS3Settings } from '../../src/blobs/s3-blob-store.js';
import { BlobTooLargeError, type BlobStore } from '../../src/blobs/blob-store.js';
import { startChildServer, api, type ChildServer } from '../helpers/child-server.js';
import { blobSnapshots } from '../../src/sandbox/kubernetes/snapshots.js';

const DB = process.env.TEST_DATABASE_URL;
const REDIS = process.env.TEST_REDIS_URL;
const BUCKET = 'agent-blobs';

let s3server: S3rver;
let endpoint: string;
let store: BlobStore;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 's3rver-'));
const children: ChildServer[] = [];
const schemas: string[] = [];

const s3env = () => ({
  BLOB_STORE: 's3',
  S3_BUCKET: BUCKET,
  S3_ENDPOINT: endpoint,
  S3_ACCESS_KEY_ID: 'S3RVER',
  S3_SECRET_ACCESS_KEY: 'S3RVER',
  S3_PREFIX: 'blobs/',
});

beforeAll(async () => {
  s3server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: BUCKET, configs: [] }] });
  const address = (await s3server.run()) as { port: number };
  endpoint = `http://127.0.0.1:${address.port}`;
  store = s3BlobStore(loadS3Settings(s3env()));
});

afterAll(async () => {
  await Promise.all(children.map((c) => c.kill('SIGKILL')));
  await s3server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
  if (DB && schemas.length) {
    const client = new pg.Client({ connectionString: DB });
    await client.connect();
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
});

async function objectKeys(): Promise<string[]> {
  const s3 = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  return ((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }))).Contents ?? []).map((o) => o.Key!);
}

const drain = async (stream: NodeJS.ReadableStream) => {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks);
};

describe('the S3 blob store', () => {
  it('puts a stream, reads it back whole and streamed, deletes it', async () => {
    const data = randomBytes(300_000);
    const blob = await store.put(Readable.from([data.subarray(0, 1000), data.subarray(1000)]));
    expect(blob).toEqual({ key: expect.stringMatching(/^[a-f0-9]{32}$/), size: 300_000, sha256: expect.stringMatching(/^[a-f0-9]{64}$/) });
    expect(await objectKeys()).toContain(`blobs/${blob.key}`);
    expect(Buffer.compare(await store.read(blob.key), data)).toBe(0);
    expect(Buffer.compare(await drain(store.get(blob.key)), data)).toBe(0);
    await store.delete(blob.key);
    await expect(store.read(blob.key)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(drain(store.get(blob.key))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses an oversized stream before anything reaches the bucket', async () => {
    const before = await objectKeys();
    await expect(store.put(Readable.from([Buffer.alloc(600), Buffer.alloc(600)]), { maxBytes: 1000 })).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(await objectKeys()).toEqual(before);
  });

  it('putAt replaces a blob in place (workspace snapshots live there)', async () => {
    const snaps = blobSnapshots(() => store);
    expect(await snaps.open('sess_s3')).toBeNull();
    await snaps.save('sess_s3', async (out) => void out.end('first'), 1000);
    await snaps.save('sess_s3', async (out) => void out.end('second'), 1000);
    expect((await drain((await snaps.open('sess_s3'))!)).toString()).toBe('second');
    await snaps.remove('sess_s3');
    expect(await snaps.open('sess_s3')).toBeNull();
  });
});

describe.skipIf(!DB || !REDIS)('two API processes, separate DATA_DIRs, one PostgreSQL + Redis + bucket', () => {
  it('a file uploaded through one is attached through the other, and its session copy downloads through the first', async () => {
    const schema = `s3_${randomBytes(5).toString('hex')}`;
    schemas.push(schema);
    const token = `ast_s3_${randomBytes(16).toString('hex')}`;
    const shared = {
      ADMIN_EMAIL: 'owner@example.test',
      ADMIN_PASSWORD: 'a long enough password',
      ADMIN_TOKEN: token,
      SECRET_KEY: randomBytes(32).toString('hex'),
      RATE_LIMIT_PER_MINUTE: '100000',
      DATABASE_URL: `${DB}?schema=${schema}`,
      REDIS_URL: REDIS!,
      QUEUE_PREFIX: schema,
      ...s3env(),
    };
    const a = await startChildServer({ ...shared, DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'shared-a-')) });
    children.push(a);
    const b = await startChildServer({ ...shared, DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'shared-b-')) });
    children.push(b);
    // At start-up each says what it still keeps to itself (sandboxes) and not what it shares (blobs).
    for (const child of [a, b]) {
      expect(child.output()).toMatch(/sandboxes are local .*SANDBOX_DRIVER=kubernetes/);
      expect(child.output()).not.toMatch(/blobs are local/);
    }

    const form = new FormData();
    form.append('file', new Blob(['id,name\n1,shared\n'], { type: 'text/csv' }), 'shared.csv');
    const uploaded = await (await fetch(`${a.base}/files`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form })).json();
    expect(uploaded.id).toMatch(/^file_/);

    // Attached through the other process: its per-session copy reads the upload's bytes from the bucket.
    const agent = (await api(b.base, token, 'POST', '/agents', {})).body.agent;
    const session = await api(b.base, token, 'POST', '/sessions', {
      agent: agent.id,
      resources: [{ type: 'file', file_id: uploaded.id, mount_path: '/data/shared.csv' }],
    });
    expect(session.status, JSON.stringify(session.body)).toBe(201);
    // The copy is downloadable (session files are) through the first process again.
    const resources = await api(a.base, token, 'GET', `/sessions/${session.body.session.id}/resources`);
    expect(resources.body.data[0]).toMatchObject({ type: 'file', mount_path: '/workspace/data/shared.csv' });
    const copyId = resources.body.data[0].file_id;
    expect(copyId).not.toBe(uploaded.id);
    const download = await fetch(`${a.base}/files/${copyId}/content`, { headers: { authorization: `Bearer ${token}` } });
    expect(download.status).toBe(200);
    expect(await download.text()).toBe('id,name\n1,shared\n');
    for (let i = 0; i < 200; i++) {
      if ((await api(b.base, token, 'GET', `/sessions/${session.body.session.id}`)).body.session.status === 'idle') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const events = await api(a.base, token, 'GET', `/sessions/${session.body.session.id}/events`);
    expect(events.body.events.filter((e: { type: string }) => e.type === 'session.error')).toEqual([]);
  }, 120_000);
});
