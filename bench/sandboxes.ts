// Sandboxes (issue 15): session create → `idle` for the local driver and for the Kubernetes
// driver claiming from a warm pool (against the fake API server, in a child process: a second
// service cannot share this process's singletons), and the egress proxy's added latency per
// request (keep-alive HTTP through a session's egress socket against the same request direct).
// Targets: local < 300 ms p50; warm-pool claim < 100 ms p50.
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import type { TestServer } from '../test/helpers/server.js';
import { sandboxEgress } from '../src/runtime/sandboxes.js';

const SESSIONS = Number(process.env.BENCH_SANDBOX_SESSIONS || 20);
const REQUESTS = Number(process.env.BENCH_EGRESS_REQUESTS || 500);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));

/** POST /sessions → status idle, as a client sees it (polling GET every 5 ms). */
export async function createToIdle(s: Pick<TestServer, 'api'>, agentId: string): Promise<{ id: string; ms: number }> {
  const started = performance.now();
  const created = await s.api('POST', '/sessions', { body: { agent: agentId } });
  if (created.status !== 201) throw new Error(`session create failed: ${JSON.stringify(created.body)}`);
  const id = created.body.session.id as string;
  let status = created.body.session.status as string;
  while (status !== 'idle') {
    await new Promise((r) => setTimeout(r, 5));
    status = (await s.api('GET', `/sessions/${id}`)).body.session.status;
  }
  return { id, ms: performance.now() - started };
}

async function localCreateToIdle(s: TestServer): Promise<[string, string]> {
  const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
  await createToIdle(s, agent.id); // warm-up
  const times: number[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const { id, ms: t } = await createToIdle(s, agent.id);
    times.push(t);
    await s.api('DELETE', `/sessions/${id}`);
  }
  return [`session create → idle, local driver (${SESSIONS} sessions)`, `p50 ${ms(pct(times, 50))} ms, p99 ${ms(pct(times, 99))} ms (target p50 < 300 ms)`];
}

async function kubernetesCreateToIdle(): Promise<[string, string]> {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./sandboxes-k8s.ts', import.meta.url).pathname], {
    env: { ...process.env, BENCH_SANDBOX_SESSIONS: String(SESSIONS) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  const last =
    out
      .trim()
      .split('\n')
      .reverse()
      .find((l) => l.startsWith('{"n":')) ?? '';
  if (code !== 0 || !last)
    return [
      'session create → idle, kubernetes driver, warm pool',
      `not measured (${process.getuid?.() === 0 ? 'the run failed' : 'the fake cluster needs root for its pods'})`,
    ];
  const r = JSON.parse(last) as { p50: number; p99: number; claimP50: number; podReady: number; n: number };
  return [
    `session create → idle, kubernetes driver claiming a warm pod (fake API server, ${r.n} sessions)`,
    `p50 ${ms(r.p50)} ms, p99 ${ms(r.p99)} ms; the driver's claim alone p50 ${ms(r.claimP50)} ms (target < 100 ms); a session outside the pool's shape (cold pod, no image pull here) ${ms(r.podReady)} ms`,
  ];
}

async function egressOverhead(s: TestServer): Promise<[string, string]> {
  const upstream = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const target = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/bench`;
  const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
  const { id } = await createToIdle(s, agent.id);
  const socketPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'egress-bench-')), 'egress.sock');
  await sandboxEgress()!.serveSocket(id, socketPath);
  const savedAllow = process.env.OUTBOUND_ALLOW;
  process.env.OUTBOUND_ALLOW = '127.0.0.1/32'; // the bench's upstream is on loopback

  const run = async (viaProxy: boolean) => {
    const agentOpts = viaProxy ? { keepAlive: true, maxSockets: 1, socketPath } : { keepAlive: true, maxSockets: 1 };
    const pool = new http.Agent(agentOpts as http.AgentOptions);
    const once = () =>
      new Promise<number>((resolve, reject) => {
        const t = performance.now();
        const u = new URL(target);
        // Through the proxy: absolute-form on the session's socket; direct: origin-form to the upstream.
        const options: http.RequestOptions = viaProxy
          ? { agent: pool, path: target, headers: { host: u.host } }
          : { agent: pool, host: u.hostname, port: u.port, path: u.pathname };
        const req = http.request(options, (res) => {
          res.resume();
          res.on('end', () => resolve(performance.now() - t));
        });
        req.on('error', reject);
        req.end();
      });
    for (let i = 0; i < 50; i++) await once(); // warm-up (policy cached, connections open)
    const times: number[] = [];
    for (let i = 0; i < REQUESTS; i++) times.push(await once());
    pool.destroy();
    return times;
  };
  try {
    const direct = await run(false);
    const proxied = await run(true);
    const added = pct(proxied, 50) - pct(direct, 50);
    return [
      `egress proxy added latency per request (keep-alive, ${REQUESTS} requests, loopback upstream)`,
      `p50 +${ms(added)} ms (direct ${ms(pct(direct, 50))} ms, through the proxy ${ms(pct(proxied, 50))} ms; p99 ${ms(pct(direct, 99))} → ${ms(pct(proxied, 99))} ms)`,
    ];
  } finally {
    if (savedAllow === undefined) delete process.env.OUTBOUND_ALLOW;
    else process.env.OUTBOUND_ALLOW = savedAllow;
    upstream.close();
    await s.api('DELETE', `/sessions/${id}`);
  }
}

export async function sandboxBench(s: TestServer): Promise<[string, string][]> {
  return [await localCreateToIdle(s), await kubernetesCreateToIdle(), await egressOverhead(s)];
}
