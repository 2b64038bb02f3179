// Shared by the stopping and crash-recovery tests: child-process environments on PGlite (a
// data directory that outlives the process) or PostgreSQL + Redis, fixed free ports (the
// instance identity of a restarted process), raw SSE reading, and a webhook receiver whose
// answers the test scripts per path.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { api, startChildServer, type ChildServer } from './child-server.js';

export const DB = process.env.TEST_DATABASE_URL;
export const REDIS = process.env.TEST_REDIS_URL;

/** The configurations to run: always PGlite; PostgreSQL + Redis when the suite has them. */
export const CONFIGS = [{ name: 'PGlite', postgres: false }, ...(DB && REDIS ? [{ name: 'PostgreSQL + Redis', postgres: true }] : [])] as const;

const schemas: string[] = [];

/** A deployment's environment: one data dir and database for every process started with it. */
export function deploymentEnv(opts: { postgres: boolean; providerUrl: string; extra?: Record<string, string> }) {
  const suffix = randomBytes(5).toString('hex');
  const token = `ast_dur_${randomBytes(16).toString('hex')}`;
  const env: Record<string, string> = {
    ADMIN_EMAIL: 'owner@example.test',
    ADMIN_PASSWORD: 'a long enough password',
    ADMIN_TOKEN: token,
    SECRET_KEY: randomBytes(32).toString('hex'),
    ANTHROPIC_API_KEY: 'sk-ant-test',
    ANTHROPIC_BASE_URL: opts.providerUrl,
    RATE_LIMIT_PER_MINUTE: '100000',
    DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'durability-')),
    ...opts.extra,
  };
  if (opts.postgres) {
    const schema = `dur_${suffix}`;
    schemas.push(schema);
    Object.assign(env, { DATABASE_URL: `${DB}?schema=${schema}`, REDIS_URL: REDIS!, QUEUE_PREFIX: schema });
  }
  return { env, token };
}

export async function dropSchemas(): Promise<void> {
  if (!DB || !schemas.length) return;
  const client = new pg.Client({ connectionString: DB });
  await client.connect();
  for (const schema of schemas.splice(0)) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}

export interface CrashDeployments {
  /** The file's fake provider (started before all). */
  readonly fake: FakeProvider;
  /**
   * A deployment on the fake provider at a fixed free port (a restarted process is the same
   * instance), whose runners never go stale in the test: a restart ends a lost turn at once.
   */
  deployment(postgres: boolean): Promise<{ env: Record<string, string>; token: string }>;
  /** A child server of the deployment, killed with SIGKILL after all if still running. */
  start(env: Record<string, string>): Promise<ChildServer>;
}

/**
 * The kill -9 tests' harness, as hooks: one fake provider for the file; after all, every child
 * server started through it is SIGKILLed, the provider closed and the deployments' schemas dropped.
 */
export function withCrashDeployments(): CrashDeployments {
  let fake: FakeProvider | undefined;
  const children: ChildServer[] = [];
  beforeAll(async () => {
    fake = await startFakeProvider();
  });
  afterAll(async () => {
    await Promise.all(children.map((c) => c.kill('SIGKILL')));
    await fake?.close();
    await dropSchemas();
  });
  return {
    get fake() {
      return fake!;
    },
    async deployment(postgres) {
      const port = await freePort();
      return deploymentEnv({ postgres, providerUrl: fake!.anthropicBaseUrl, extra: { PORT: String(port), RUNNER_STALE_MS: '600000' } });
    },
    async start(env) {
      const child = await startChildServer(env);
      children.push(child);
      return child;
    },
  };
}

/** A port free right now (the child binds it; a restart binds it again). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Whether nothing listens on 127.0.0.1:port any more (no orphan holds it). */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

export async function history(base: string, token: string, sessionId: string): Promise<any[]> {
  return (await api(base, token, 'GET', `/sessions/${sessionId}/events?limit=1000`)).body.events;
}

export async function waitForHistory(base: string, token: string, sessionId: string, pred: (events: any[]) => boolean, timeoutMs = 20_000): Promise<any[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await history(base, token, sessionId);
    if (pred(events)) return events;
    if (Date.now() > deadline) throw new Error(`history never matched: ${JSON.stringify(events.map((e) => e.type))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function idleSession(base: string, token: string) {
  const agent = (await api(base, token, 'POST', '/agents', {})).body.agent;
  const session = (await api(base, token, 'POST', '/sessions', { agent: agent.id })).body.session;
  for (let i = 0; i < 200; i++) {
    if ((await api(base, token, 'GET', `/sessions/${session.id}`)).body.session.status === 'idle') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { agent, session };
}

export const say = (base: string, token: string, sessionId: string, text: string) =>
  api(base, token, 'POST', `/sessions/${sessionId}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });

/** Reads a session's SSE stream raw until the server ends it; `onData` sees the text so far. */
export async function readStreamUntilEnd(url: string, token: string, onData: (text: string) => void, timeoutMs = 30_000): Promise<string> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(timeoutMs) });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
    onData(text);
  }
}

export function sseFrames(text: string): { event: string; data: any }[] {
  return text.split('\n\n').flatMap((block) => {
    const event = /^event: (.*)$/m.exec(block)?.[1];
    const data = /^data: (.*)$/m.exec(block)?.[1];
    return event && data ? [{ event, data: JSON.parse(data) }] : [];
  });
}

export interface Delivery {
  at: number;
  path: string;
  deliveryId: string;
  eventId: string;
  type: string;
  answered: number | null;
}

/**
 * A webhook receiver on loopback. `plan(path, n)` says what the n-th request (0-based) to a
 * path gets: a status code, or 'hang' (never answered).
 */
export async function startReceiver(plan: (path: string, n: number) => number | 'hang') {
  const deliveries: Delivery[] = [];
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const p = req.url ?? '';
      const n = counts.get(p) ?? 0;
      counts.set(p, n + 1);
      const answer = plan(p, n);
      const parsed = JSON.parse(body || '{}');
      deliveries.push({
        at: Date.now(),
        path: p,
        deliveryId: String(req.headers['x-service-delivery']),
        eventId: parsed.id,
        type: parsed.type,
        answered: answer === 'hang' ? null : answer,
      });
      if (answer !== 'hang') res.writeHead(answer).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    deliveries,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
