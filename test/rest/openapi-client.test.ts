// A client generated from /v1/openapi.json is usable as generated: openapi-typescript with its
// DEFAULT options (tools/openapi-typescript) writes the types, the project's TypeScript checks a
// sample program against them with --strict, and the program then runs against the service:
// it creates an agent with only a displayName, starts a session, sends a message, reads the
// history and uploads a file. (Fields with a server-side default used to come out required, so
// `{displayName}` did not type-check; a multipart file part came out `string`, so a Blob did not.)
// Event streams: a generator cannot type the frames of a text/event-stream in OpenAPI 3.1, so
// each stream names its event component (x-event-schema) and the generated client exports it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);
const GENERATOR = path.join(ROOT, 'tools/openapi-typescript/node_modules/openapi-typescript/bin/cli.js');
const TSC = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin/tsc');
const TSX = pathToFileURL(require.resolve('tsx/esm')).href;

function run(args: string[], cwd: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, args, { cwd, env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir() } });
    let out = '';
    p.stdout.on('data', (c) => (out += c));
    p.stderr.on('data', (c) => (out += c));
    p.on('close', (code) => resolve({ code, out }));
  });
}

/** What a user of the generated types writes: request bodies and answers typed from `operations`. */
const sample = (base: string, token: string) => `
import type { components, operations } from './api.js';

type CreateAgent = NonNullable<operations['createAgent']['requestBody']>['content']['application/json'];
type AgentCreated = operations['createAgent']['responses'][201]['content']['application/json'];
type CreateSession = NonNullable<operations['createSession']['requestBody']>['content']['application/json'];
type SessionCreated = operations['createSession']['responses'][201]['content']['application/json'];
type SendEvents = NonNullable<operations['sendSessionEvents']['requestBody']>['content']['application/json'];
type Sent = operations['sendSessionEvents']['responses'][202]['content']['application/json'];
type History = operations['listSessionEvents']['responses'][200]['content']['application/json'];
type Upload = operations['uploadFile']['requestBody']['content']['multipart/form-data'];
type Uploaded = operations['uploadFile']['responses'][200]['content']['application/json'];
/** What each frame of GET /sessions/{id}/events/stream carries. */
type StreamedEvent = components['schemas']['SessionEvent'];

const BASE = ${JSON.stringify(base)};
const auth = { authorization: ${JSON.stringify(`Bearer ${token}`)} };

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(BASE + path, {
    method,
    headers: body === undefined ? auth : { ...auth, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(method + ' ' + path + ': ' + res.status + ' ' + (await res.text()));
  return (await res.json()) as T;
}

const newAgent: CreateAgent = { displayName: 'Generated client' };
const { agent } = await call<AgentCreated>('POST', '/agents', newAgent);
const newSession: CreateSession = { agent: agent.id };
const { session } = await call<SessionCreated>('POST', '/sessions', newSession);
const message: SendEvents = { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hello from a generated client' }] }] };
const sent = await call<Sent>('POST', '/sessions/' + session.id + '/events', message);
const history = await call<History>('GET', '/sessions/' + session.id + '/events');
const firstEvent: StreamedEvent | undefined = history.events[0];

const upload: Upload = { file: new Blob(['hello file'], { type: 'text/plain' }), expires_in_seconds: 3600 };
const form = new FormData();
form.append('file', upload.file as Blob, 'hello.txt');
form.append('expires_in_seconds', String(upload.expires_in_seconds));
const res = await fetch(BASE + '/files', { method: 'POST', headers: auth, body: form });
if (!res.ok) throw new Error('POST /files: ' + res.status + ' ' + (await res.text()));
const uploaded = (await res.json()) as Uploaded;

console.log(JSON.stringify({
  agent: agent.id, displayName: agent.displayName, session: session.id,
  sent: sent.data.map((e) => e.type), history: history.events.map((e) => e.type), firstEvent: firstEvent?.type ?? null,
  file: { id: uploaded.id, filename: uploaded.filename, size: uploaded.size_bytes },
}));
`;

describe("a TypeScript client generated with openapi-typescript's defaults", () => {
  let s: TestServer;
  let dir: string;
  beforeAll(async () => {
    s = await startTestServer();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-client-'));
    const doc = await fetch(`${s.base}/openapi.json`);
    expect(doc.status).toBe(200);
    fs.writeFileSync(path.join(dir, 'openapi.json'), await doc.text());
    fs.writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}\n');
    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], types: [] },
        files: ['sample.ts'],
      }),
    );
    // No options: the generator's defaults are what a user gets.
    const gen = await run([GENERATOR, 'openapi.json', '-o', 'api.d.ts'], dir);
    expect(gen.code, gen.out).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await s?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('type-checks (tsc --strict) a program that creates an agent with only displayName, sends a message, reads history and uploads a file; the program runs', async () => {
    fs.writeFileSync(path.join(dir, 'sample.ts'), sample(s.base, s.adminToken));
    const check = await run([TSC, '-p', 'tsconfig.json'], dir);
    expect(check.out).toBe('');
    expect(check.code).toBe(0);

    const ran = await run(['--import', TSX, 'sample.ts'], dir);
    expect(ran.code, ran.out).toBe(0);
    const result = JSON.parse(ran.out.trim().split('\n').at(-1)!);
    expect(result).toMatchObject({ displayName: 'Generated client', sent: ['user.message'], file: { filename: 'hello.txt', size: 10 } });
    expect(result.history).toContain('user.message');
    const history = await s.api('GET', `/sessions/${result.session}/events`);
    expect(history.body.events.find((e: { type: string }) => e.type === 'user.message').content[0].text).toBe('hello from a generated client');
  }, 120_000);

  it('every event stream names its event component, and the generated client exports that type', async () => {
    const doc = JSON.parse(fs.readFileSync(path.join(dir, 'openapi.json'), 'utf8'));
    const generated = fs.readFileSync(path.join(dir, 'api.d.ts'), 'utf8');
    const streams: string[] = [];
    for (const [p, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const op of Object.values<any>(item)) {
        const media = op.responses?.['200']?.content?.['text/event-stream'];
        if (!media) continue;
        streams.push(p);
        const ref: string = media['x-event-schema']?.$ref;
        expect(ref, p).toMatch(/^#\/components\/schemas\/\w+$/);
        const name = ref.split('/').at(-1)!;
        expect(media.schema.description, p).toContain(name);
        expect(generated).toContain(`        ${name}: `);
      }
    }
    expect(streams).toEqual(expect.arrayContaining(['/sessions/{id}/events/stream']));
  });

  it('no request schema has a default (a generator would make the field required); each says its default in words', () => {
    const doc = JSON.parse(fs.readFileSync(path.join(dir, 'openapi.json'), 'utf8'));
    const found: string[] = [];
    const walk = (node: unknown, at: string) => {
      if (!node || typeof node !== 'object') return;
      if (!Array.isArray(node) && 'default' in node && typeof (node as { type?: unknown }).type !== 'undefined') found.push(at);
      for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k}`);
    };
    for (const [name, schema] of Object.entries(doc.components.schemas)) if (name.endsWith('Input')) walk(schema, `#/components/schemas/${name}`);
    for (const [p, item] of Object.entries<Record<string, any>>(doc.paths))
      for (const [m, op] of Object.entries<any>(item)) walk(op.requestBody, `${m} ${p} requestBody`);
    expect(found).toEqual([]);
    expect(doc.components.schemas.CreateAgentInput.properties.capabilities.description).toMatch(/default/i);
  });
});
