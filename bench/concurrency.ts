// Many sessions at once (issue: turn overhead flat as concurrent turns grow). The service runs
// as its own process (src/main.ts, as `npm start`), so the client below does not share its
// event loop; the fake provider streams each answer as 10 words over ≈ 1 s. For each level C:
// C sessions with one SSE stream each, then C sends at once; per turn the send → first frame
// (session.status_running) and send → session.status_idle times, and the service's CPU time.
// The service runs with bench/statement-counter.ts preloaded: SQL statements per turn (by kind)
// and its memory after a full GC, from which the memory per idle session and per open stream.
// BENCH_CONCURRENCY=10,50,200,1000 picks the levels; BENCH_CPU_PROF=dir writes the service's CPU
// profile there (node --cpu-prof). TEST_DATABASE_URL / TEST_REDIS_URL: PostgreSQL and Redis.
// BENCH_STATEMENTS=1 also prints each level's statements per turn by kind.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startChildServer, type ChildServer } from '../test/helpers/child-server.js';
import { startFakeProvider, type FakeProvider } from '../test/fake-provider/server.js';

const LEVELS = (process.env.BENCH_CONCURRENCY || '10,50,200').split(',').map(Number);
const PROVIDER_MS = 1000;
const WORDS = 10;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function call(base: string, token: string, method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  const data = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}${p}`,
      {
        method,
        agent,
        headers: { authorization: `Bearer ${token}`, ...(data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

interface Watch {
  ids: string[];
  /** The turn's stop reason (from its session.status_idle) and the session.error frames seen. */
  stop: string | null;
  sessionErrors: number;
  running: Promise<number>;
  idle: Promise<number>;
  close: () => void;
}

/** One session's stream: every frame id kept (gap and duplicate checks), the turn's first and last frames timed. */
function watch(base: string, token: string, sessionId: string): Promise<Watch> {
  let onRunning: (t: number) => void = () => undefined;
  let onIdle: (t: number) => void = () => undefined;
  const running = new Promise<number>((r) => (onRunning = r));
  const idle = new Promise<number>((r) => (onIdle = r));
  const ids: string[] = [];
  const w = { stop: null as string | null, sessionErrors: 0 };
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}/sessions/${sessionId}/events/stream`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk: string) => {
        const at = performance.now();
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) !== -1) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const id = /^id: (.+)$/m.exec(frame)?.[1];
          if (id) ids.push(id);
          const type = /^event: (.+)$/m.exec(frame)?.[1];
          if (type === 'session.status_running') onRunning(at);
          if (type === 'session.error') w.sessionErrors++;
          if (type === 'session.status_idle' && ids.length > 1) {
            w.stop = (JSON.parse(/^data: (.+)$/m.exec(frame)?.[1] ?? '{}') as { stop_reason?: { type?: string } }).stop_reason?.type ?? '?';
            onIdle(at);
          }
        }
      });
      res.on('error', () => undefined);
      resolve(Object.assign(w, { ids, running, idle, close: () => req.destroy() }) as Watch);
    });
    req.on('error', reject);
  });
}

interface Snapshot {
  seq: number;
  rss: number;
  heapUsed: number;
  statements: Record<string, number>;
  texts?: Record<string, number>;
}

/** The service's statement counts and memory (after a full GC), written on SIGUSR2 by the preloaded counter. */
async function snapshot(server: ChildServer, file: string): Promise<Snapshot> {
  const before = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Snapshot).seq : 0;
  server.process.kill('SIGUSR2');
  for (let i = 0; i < 500; i++) {
    await new Promise((r) => setTimeout(r, 10));
    if (!fs.existsSync(file)) continue;
    const s = JSON.parse(fs.readFileSync(file, 'utf8')) as Snapshot;
    if (s.seq > before) return s;
  }
  throw new Error('the service wrote no statement counts');
}

const totalOf = (s: Snapshot) => Object.values(s.statements).reduce((a, b) => a + b, 0);
function perTurn(a: Snapshot, b: Snapshot, turns: number): [string, number][] {
  return Object.entries(b.statements)
    .map(([kind, n]): [string, number] => [kind, (n - (a.statements[kind] ?? 0)) / turns])
    .filter(([, n]) => n > 0)
    .sort((x, y) => y[1] - x[1]);
}

function cpuOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(stat[11]) + Number(stat[12])) * (1000 / 100); // utime + stime, clock ticks of 10 ms
}

async function level(server: ChildServer, fake: FakeProvider, token: string, agentId: string, c: number, countsFile: string) {
  const bare = await snapshot(server, countsFile);
  const sessions: string[] = [];
  for (let i = 0; i < c; i += 20) {
    const batch = await Promise.all(Array.from({ length: Math.min(20, c - i) }, () => call(server.base, token, 'POST', '/sessions', { agent: agentId })));
    sessions.push(...batch.map((r) => r.body.session.id as string));
  }
  for (const id of sessions) {
    for (let i = 0; i < 200 && (await call(server.base, token, 'GET', `/sessions/${id}`)).body.session.status !== 'idle'; i++)
      await new Promise((r) => setTimeout(r, 20));
  }
  const idleSessions = await snapshot(server, countsFile);
  const streams: Watch[] = [];
  for (let i = 0; i < c; i += 100) streams.push(...(await Promise.all(sessions.slice(i, i + 100).map((id) => watch(server.base, token, id)))));
  await new Promise((r) => setTimeout(r, 200)); // every stream's replay done
  const text = Array.from({ length: WORDS }, (_, i) => `word${i}`).join(' ');
  for (let i = 0; i < c; i++) fake.enqueue({ kind: 'text', text, chunks: WORDS, delayMs: PROVIDER_MS / WORDS });
  fake.requests.length = 0;
  const before = await snapshot(server, countsFile);
  const outputAt = server.output().length;
  const cpu0 = cpuOf(server.process.pid!);
  const rss0 = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${server.process.pid}/status`, 'utf8'))![1]) / 1024;
  const t0 = performance.now();
  const mono0 = process.hrtime.bigint() / 1000n; // µs, the clock of a CPU profile's timestamps
  const sends = sessions.map((id) =>
    call(server.base, token, 'POST', `/sessions/${id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }] }),
  );
  const answers = await Promise.all(sends);
  const firsts = (await Promise.all(streams.map((s) => s.running))).map((t) => t - t0);
  const idles = (await Promise.all(streams.map((s) => s.idle))).map((t) => t - t0);
  const wall = performance.now() - t0;
  if (process.env.BENCH_CPU_PROF) console.error(`C=${c}: turns between ${mono0} and ${process.hrtime.bigint() / 1000n} µs (monotonic, as in the CPU profile)`);
  const cpu = cpuOf(server.process.pid!) - cpu0;
  const rss = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${server.process.pid}/status`, 'utf8'))![1]) / 1024;
  const after = await snapshot(server, countsFile);
  // Correctness: each stream equals the session's history (less user.message and system.message,
  // which the spec keeps off the stream), no gap, no duplicate.
  let mismatches = 0;
  for (let i = 0; i < c; i++) {
    const history = await call(server.base, token, 'GET', `/sessions/${sessions[i]}/events?limit=1000`);
    const historyIds = (history.body.events as { id: string; type: string }[]).filter((e) => !/^(user|system)\.message$/.test(e.type)).map((e) => e.id);
    if (historyIds.join() !== streams[i]!.ids.join()) {
      mismatches++;
      if (process.env.BENCH_DEBUG && mismatches === 1)
        console.error(
          JSON.stringify({ history: (history.body.events as { id: string; type: string }[]).map((e) => `${e.id} ${e.type}`), stream: streams[i]!.ids }),
        );
    }
  }
  streams.forEach((s) => s.close());
  const errors = answers.filter((a) => a.status !== 202).length;
  const notEndTurn = streams.filter((w) => w.stop !== 'end_turn').length;
  const sessionErrors = streams.reduce((n, w) => n + w.sessionErrors, 0);
  // Errors the service logged meanwhile (pino's JSON lines, level ≥ 50), by message.
  const logged = new Map<string, number>();
  for (const line of server.output().slice(outputAt).split('\n')) {
    const m = /^\{"level":(\d+).*"msg":"([^"]*)"/.exec(line);
    if (m && Number(m[1]) >= 50) logged.set(m[2]!, (logged.get(m[2]!) ?? 0) + 1);
  }
  const memory = {
    idleSession: { rss: (idleSessions.rss - bare.rss) / c, heap: (idleSessions.heapUsed - bare.heapUsed) / c },
    openStream: { rss: (before.rss - idleSessions.rss) / c, heap: (before.heapUsed - idleSessions.heapUsed) / c },
  };
  const statements = { total: (totalOf(after) - totalOf(before)) / c, kinds: perTurn(before, after, c) };
  if (after.texts)
    for (const [t, n] of Object.entries(after.texts)) {
      const d = (n - (before.texts?.[t] ?? 0)) / c;
      if (d > 0) console.error(`C=${c}: ${d.toFixed(2)} per turn  ${t.replace(/\s+/g, ' ')}`);
    }
  return { c, firsts, idles, wall, cpu, rss0, rss, errors, mismatches, memory, statements, notEndTurn, sessionErrors, logged };
}

async function main() {
  const fake = await startFakeProvider();
  const token = `ast_bench_${randomBytes(16).toString('hex')}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-conc-'));
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const db = process.env.TEST_DATABASE_URL;
  const profDir = process.env.BENCH_CPU_PROF;
  const countsFile = path.join(dataDir, 'statements.json');
  const server = await startChildServer(
    {
      ADMIN_TOKEN: token,
      ADMIN_PASSWORD: 'bench password here',
      DATA_DIR: dataDir,
      ANTHROPIC_API_KEY: 'sk-ant-bench',
      ANTHROPIC_BASE_URL: fake.anthropicBaseUrl,
      RATE_LIMIT_PER_MINUTE: '1000000',
      LOG_LEVEL: 'warn',
      STARTING_CREDITS_CENTS: '100000000',
      ...(process.env.DATABASE_POOL_SIZE ? { DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE } : {}),
      ...(db ? { DATABASE_URL: `${db}${db.includes('?') ? '&' : '?'}schema=${schema}` } : {}),
      ...(process.env.TEST_REDIS_URL ? { REDIS_URL: process.env.TEST_REDIS_URL } : {}),
      BENCH_STATEMENTS_FILE: countsFile,
    },
    [
      '--expose-gc',
      '--import',
      'tsx',
      '--import',
      path.join(import.meta.dirname, 'statement-counter.ts'),
      ...(profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []),
      ...(process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []),
    ],
  );
  try {
    const agentRes = await call(server.base, token, 'POST', '/agents', { displayName: 'bench' });
    const agentId = agentRes.body.agent.id as string;
    console.log(
      `| C | first frame p50 / p99 | send → idle p50 / p99 | overhead p99 (− ${PROVIDER_MS} ms) | turns/s | service CPU per turn | statements per turn | RSS | per 100 idle sessions (RSS / heap) | per 100 open streams (RSS / heap) | errors | stream ≠ history | not end_turn / session.error / errors logged |`,
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    const kinds: string[] = [];
    const mb = (bytes: number) => `${((bytes * 100) / 2 ** 20).toFixed(1)}`;
    for (const c of LEVELS) {
      const r = await level(server, fake, token, agentId, c, countsFile);
      console.log(
        `| ${c} | ${pct(r.firsts, 50).toFixed(0)} / ${pct(r.firsts, 99).toFixed(0)} ms | ${(pct(r.idles, 50) / 1000).toFixed(2)} / ${(pct(r.idles, 99) / 1000).toFixed(2)} s | ${((pct(r.idles, 99) - PROVIDER_MS) / 1000).toFixed(2)} s | ${(c / (r.wall / 1000)).toFixed(1)} | ${(r.cpu / c).toFixed(1)} ms | ${r.statements.total.toFixed(1)} | ${r.rss.toFixed(0)} MB | ${mb(r.memory.idleSession.rss)} / ${mb(r.memory.idleSession.heap)} MB | ${mb(r.memory.openStream.rss)} / ${mb(r.memory.openStream.heap)} MB | ${r.errors} | ${r.mismatches} | ${r.notEndTurn} / ${r.sessionErrors} / ${[...r.logged.values()].reduce((a, b) => a + b, 0)} |`,
      );
      for (const [msg, n] of r.logged) console.error(`C=${c}: the service logged "${msg}" ${n}×`);
      kinds.push(`C=${c}: ${r.statements.kinds.map(([k, n]) => `${k} ${n.toFixed(2)}`).join(', ')}`);
    }
    if (process.env.BENCH_STATEMENTS) console.log(`\nstatements per turn by kind:\n${kinds.join('\n')}`);
  } finally {
    await server.kill('SIGINT');
    await fake.close();
    if (db) {
      const client = new pg.Client({ connectionString: db });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  }
}

await main();
process.exit(0);
