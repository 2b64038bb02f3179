// An independent check of the OpenAPI document against real traffic: Stoplight Prism in proxy
// mode (`--errors`) sits between the client and the service and validates every response
// against `/v1/openapi.json`. A handful of representative calls; each must pass through with no
// violation. A probe path the service does not serve proves Prism really reports violations.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

const PRISM = path.resolve(import.meta.dirname, '../../node_modules/@stoplight/prism-cli/dist/index.js');
const PROBE = '/prism-probe-undocumented';

let s: TestServer;
let prism: ChildProcess | undefined;
let prismUrl = '';
let output = '';
let docFile = '';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net
      .createServer()
      .once('error', reject)
      .listen(0, '127.0.0.1', () => {
        const { port } = srv.address() as net.AddressInfo;
        srv.close(() => resolve(port));
      });
  });
}

beforeAll(async () => {
  s = await startTestServer();
  const doc = (await s.api('GET', '/openapi.json')).body as { paths: Record<string, unknown> };
  // The probe: documented as answering 200, served as 404 by the service.
  doc.paths[PROBE] = {
    get: {
      operationId: 'prismProbe',
      security: [],
      responses: { 200: { description: 'never served', content: { 'application/json': { schema: { type: 'object' } } } } },
    },
  };
  docFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'prism-')), 'openapi.json');
  fs.writeFileSync(docFile, JSON.stringify(doc));
  const port = await freePort();
  // The binary directly (not npx), so this process owns it and can stop it.
  prism = spawn(process.execPath, [PRISM, 'proxy', docFile, s.base, '--errors', '--host', '127.0.0.1', '--port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  prism.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  prism.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 60_000;
  while (!/listening on/i.test(output)) {
    if (prism.exitCode !== null || Date.now() > deadline) throw new Error(`prism did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  prismUrl = `http://127.0.0.1:${port}`;
}, 90_000);

afterAll(async () => {
  if (prism && prism.exitCode === null) {
    const exited = new Promise((r) => prism!.once('exit', r));
    prism.kill('SIGTERM');
    await exited;
  }
  if (docFile) fs.rmSync(path.dirname(docFile), { recursive: true, force: true });
  await s?.stop();
});

interface Proxied {
  status: number;
  body: any;
  violations: unknown[];
}

/** A call through Prism; `violations` are what Prism found in the response (header or --errors body). */
async function viaPrism(method: string, p: string, body?: unknown, token: string | null = s.adminToken): Promise<Proxied> {
  const res = await fetch(prismUrl + p, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : null;
  const header = res.headers.get('sl-violations');
  const violations = [...(header ? (JSON.parse(header) as unknown[]) : []), ...(res.headers.get('content-type')?.includes('problem+json') ? [parsed] : [])];
  return { status: res.status, body: parsed, violations };
}

const clean = (r: Proxied, status: number) => {
  expect(r.violations, JSON.stringify(r.violations)).toEqual([]);
  expect(r.status, JSON.stringify(r.body)).toBe(status);
};

describe('Prism proxy against /v1/openapi.json', () => {
  it('reports a response the document does not describe (the probe)', async () => {
    const probe = await viaPrism('GET', PROBE, undefined, null);
    expect(probe.status).toBe(404);
    expect(JSON.stringify(probe.violations)).toContain('Unable to match the returned status code');
  });

  it('identity and agents: created, listed, read, updated, missing', async () => {
    clean(await viaPrism('GET', '/whoami'), 200);
    clean(await viaPrism('GET', '/universes'), 200);
    const created = await viaPrism('POST', '/agents', {
      displayName: 'Prism',
      prompt: 'p',
      instructions: [{ name: 'a.md', content: 'x' }],
      mcpServers: [{ type: 'url', name: 'docs', url: 'https://mcp.example.com/' }],
      metadata: { team: 'x' },
    });
    clean(created, 201);
    const id = created.body.agent.id as string;
    clean(await viaPrism('GET', '/agents'), 200);
    const read = await viaPrism('GET', `/agents/${id}`);
    clean(read, 200);
    expect(read.body.agent).toMatchObject({ id, prompt: 'p', metadata: { team: 'x' } });
    clean(await viaPrism('PATCH', `/agents/${id}`, { displayName: 'Prism 2', expectedVersion: 1 }), 200);
    clean(await viaPrism('PUT', `/agents/${id}/prompt`, { prompt: 'q' }), 200);
    clean(await viaPrism('GET', `/agents/${id}/prompt/versions`), 200);
    const missing = await viaPrism('GET', '/agents/agent_missing');
    clean(missing, 404);
    expect(missing.body.error.code).toBe('not_found');
  });

  it('lists of the other resources', async () => {
    for (const p of ['/files', '/skills', '/webhooks', '/model-subscriptions', '/routines', '/sessions']) clean(await viaPrism('GET', p), 200);
  });
});
