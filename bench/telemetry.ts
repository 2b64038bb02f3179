// Telemetry's cost (issue #34), side by side in one run on the same server: tracing off and on
// (an OTLP/HTTP receiver on loopback answering at once), alternating rounds, for
//  - REST GET /v1/agents/{id} throughput (autocannon in its own process, 32 connections);
//  - send (202) → first SSE frame (session.status_running) p50/p99, the fake provider answering at once;
// and the `GET /metrics` scrape time with 1,000 sessions in the database (p50/p99 of 200 scrapes).
// The SDK is started and stopped between rounds (startTracing/stopTracing: the same calls a
// server makes when OTEL_EXPORTER_OTLP_ENDPOINT is set), so nothing else differs between them.
import http from 'node:http';
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { TestServer } from '../test/helpers/server.js';
import type { FakeProvider } from '../test/fake-provider/server.js';
import { openStream, sendText } from './first-frame.js';
import { flushTracing, startTracing, stopTracing } from '../src/telemetry/tracing.js';
import { setRequestScopes } from '../src/telemetry/request-context.js';
import { config } from '../src/config.js';
import { overrideServices } from '../src/services/registry.js';
import { prisma } from '../src/db/client.js';
import { newId } from '../src/ids.js';

const DURATION = Number(process.env.BENCH_SECONDS || 5);
const ROUNDS = Number(process.env.BENCH_TELEMETRY_ROUNDS || 2);
const TURNS = Number(process.env.BENCH_FRAME_TURNS || 60);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

async function cannon(url: string, headers: Record<string, string>) {
  const bin = new URL('../node_modules/autocannon/autocannon.js', import.meta.url).pathname;
  const args = [bin, '-j', '-c', '32', '-d', String(DURATION), ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}=${v}`]), url];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise((resolve) => child.once('exit', resolve));
  const result = JSON.parse(out.trim().split('\n').pop()!) as { requests: { average: number }; errors: number; non2xx: number };
  return { rps: result.requests.average, errors: result.errors + result.non2xx };
}

/** An OTLP/HTTP receiver that reads each export and answers 200 at once. */
async function startReceiver(): Promise<{ url: string; exports: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    exports: () => count,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** send → first frame over `turns` turns (each after the previous idle frame). */
async function firstFrames(s: TestServer, fake: FakeProvider, sessionId: string, turns: number): Promise<number[]> {
  let waiting: { sentAt: number; onRunning: (ms: number) => void; onIdle: () => void } | null = null;
  let ranAt = 0;
  const close = await openStream(s, sessionId, (type, at) => {
    if (!waiting) return;
    if (type === 'session.status_running' && !ranAt) {
      ranAt = at;
      waiting.onRunning(at - waiting.sentAt);
    }
    if (type === 'session.status_idle' && ranAt) waiting.onIdle();
  });
  const out: number[] = [];
  for (let i = 0; i < turns; i++) {
    fake.enqueue({ kind: 'text', text: 'ok' });
    ranAt = 0;
    await new Promise<void>((resolve) => {
      waiting = { sentAt: performance.now(), onRunning: (ms) => out.push(ms), onIdle: () => resolve() };
      void sendText(s, sessionId, `turn ${i}`);
    });
    waiting = null;
    await new Promise((r) => setTimeout(r, 10));
  }
  close();
  return out;
}

/** `GET /metrics` `n` times in a row on one keep-alive connection; milliseconds each. */
async function scrapes(url: string, token: string, n: number): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      http
        .get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
          if (res.statusCode !== 200) reject(new Error(`/metrics answered ${res.statusCode}`));
          res.resume();
          res.on('end', () => resolve());
        })
        .on('error', reject);
    });
    out.push(performance.now() - t0);
  }
  agent.destroy();
  return out;
}

/** Sessions copied from one real session's row, up to `total` in the database. */
async function fillSessions(sessionId: string, total: number): Promise<number> {
  const have = await prisma.session.count();
  if (have >= total) return have;
  const row = await prisma.session.findUniqueOrThrow({ where: { id: sessionId } });
  const { id: _id, ...rest } = row as Record<string, unknown>;
  const data = Array.from({ length: total - have }, () => {
    const copy: Record<string, unknown> = { ...rest, id: newId('sess') };
    for (const [k, v] of Object.entries(copy)) if (v === null) delete copy[k];
    return copy;
  });
  await prisma.session.createMany({ data: data as never });
  return prisma.session.count();
}

export async function telemetryBench(s: TestServer, fake: FakeProvider): Promise<[string, string][]> {
  const rows: [string, string][] = [];
  const receiver = await startReceiver();
  const instance = 'bench';
  const agent = (await s.api('POST', '/agents', { body: { displayName: 'Telemetry bench', prompt: 'p' } })).body.agent;
  const session = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body.session;
  for (let i = 0; i < 100; i++) {
    if ((await s.api('GET', `/sessions/${session.id}`)).body.session.status === 'idle') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const auth = { authorization: `Bearer ${s.adminToken}` };
  const on = () => startTracing({ url: receiver.url, instance });
  const off = async () => {
    await flushTracing();
    await stopTracing();
  };

  // REST throughput, alternating off/on.
  await cannon(`${s.base}/agents/${agent.id}`, auth); // warm-up
  const rest = { bare: [] as number[], off: [] as number[], on: [] as number[], errors: 0 };
  for (let r = 0; r < ROUNDS; r++) {
    // No request-id scope at all (no AsyncLocalStorage in the process): as before request ids.
    setRequestScopes(false);
    const z = await cannon(`${s.base}/agents/${agent.id}`, auth);
    setRequestScopes(true);
    rest.bare.push(z.rps);
    const a = await cannon(`${s.base}/agents/${agent.id}`, auth);
    on();
    const b = await cannon(`${s.base}/agents/${agent.id}`, auth);
    await off();
    rest.off.push(a.rps);
    rest.on.push(b.rps);
    rest.errors += a.errors + b.errors;
  }
  const restRatio = mean(rest.on) / mean(rest.off);
  rows.push([
    'telemetry: GET /v1/agents/{id}, no request-id scope (as before #34) / tracing off',
    `${mean(rest.bare).toFixed(0)} / ${mean(rest.off).toFixed(0)} req/s, off/none ${(mean(rest.off) / mean(rest.bare)).toFixed(3)}`,
  ]);
  rows.push([
    'telemetry: GET /v1/agents/{id}, tracing off / on',
    `${mean(rest.off).toFixed(0)} / ${mean(rest.on).toFixed(0)} req/s (mean of ${ROUNDS} alternating rounds of ${DURATION} s), on/off ${restRatio.toFixed(3)} (target ≥ 0.95), errors ${rest.errors}`,
  ]);

  // send → first frame, alternating off/on.
  await firstFrames(s, fake, session.id, 10); // warm-up
  const frames = { bare: [] as number[], off: [] as number[], on: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    setRequestScopes(false);
    frames.bare.push(...(await firstFrames(s, fake, session.id, TURNS)));
    setRequestScopes(true);
    frames.off.push(...(await firstFrames(s, fake, session.id, TURNS)));
    on();
    frames.on.push(...(await firstFrames(s, fake, session.id, TURNS)));
    await off();
  }
  const frameRatio = pct(frames.on, 50) / pct(frames.off, 50);
  rows.push([
    'telemetry: send → first frame p50 (p99), tracing off / on',
    `${pct(frames.off, 50).toFixed(2)} (${pct(frames.off, 99).toFixed(2)}) / ${pct(frames.on, 50).toFixed(2)} (${pct(frames.on, 99).toFixed(2)}) ms over ${frames.off.length} turns each, on/off p50 ${frameRatio.toFixed(3)} (target ≤ 1.05)`,
  ]);
  rows.push([
    'telemetry: send → first frame p50, no request-id scope / tracing off',
    `${pct(frames.bare, 50).toFixed(2)} / ${pct(frames.off, 50).toFixed(2)} ms, off/none ${(pct(frames.off, 50) / pct(frames.bare, 50)).toFixed(3)}`,
  ]);
  rows.push(['telemetry: OTLP exports received while on', String(receiver.exports())]);

  // The /metrics scrape with 1,000 sessions.
  const token = 'bench-metrics-token';
  const cfg = config();
  overrideServices({ config: { ...cfg, metricsToken: token } });
  const sessions = await fillSessions(session.id, 1000);
  await scrapes(`${s.url}/metrics`, token, 20); // warm-up
  const scrape = await scrapes(`${s.url}/metrics`, token, 200);
  const size = (await (await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text()).length;
  overrideServices({ config: cfg });
  rows.push([
    'telemetry: GET /metrics scrape',
    `p50 ${pct(scrape, 50).toFixed(2)} ms, p99 ${pct(scrape, 99).toFixed(2)} ms (target < 10 ms) with ${sessions} sessions, ${(size / 1024).toFixed(0)} KiB of text`,
  ]);
  await receiver.close();
  return rows;
}
