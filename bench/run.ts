// `npm run bench`: throughput and latency numbers on loopback (embedded defaults unless
// DATABASE_URL / REDIS_URL are set). Writes a summary table to stdout.
//  1. GET /v1/agents/{id} through REST → GraphQL against the machine's limit for the same
//     answer (bare node:http + pg + one SQL statement, PostgreSQL only) and a bare Express route
//     doing the same Prisma query (autocannon in its own process), and the ratios.
//  8. MCP tool call overhead (bench/mcp.ts): a call through the service against a bare client.
// 11. engines (bench/engines.ts): session create → first agent.message per installed CLI engine
//     (warm: the CLI already in ENGINE_CACHE_DIR) and hermes.
//  9. sandboxes (bench/sandboxes.ts): session create → idle, local and Kubernetes warm pool
//     (fake API server), and the egress proxy's added latency per request.
// 10. environments (bench/environments.ts): session create → idle with three packages, first
//     (installing) and cached, against no environment.
//  5. channels (bench/channels.ts): inbound acknowledgement under load, message → user.message
//     stored → reply posted through the loopback platform.
// 12. dashboard (bench/dashboard.ts): first load in a fresh Chromium context beside a bare page's.
// 13. long sessions (bench/long-sessions.ts): a 20-turn hermes session's list input cost with and
//     without prompt caching; compaction's own latency beyond the summary call. BENCH_ONLY=long-sessions.
// 14. outcomes (bench/outcomes.ts): evaluation overhead beside a plain turn's end → idle.
// 15. telemetry (bench/telemetry.ts): tracing off vs on side by side (REST throughput, send → first
//     frame) and the /metrics scrape with 1,000 sessions; BENCH_ONLY=telemetry runs only it.
// 16. fork (bench/fork.ts): a session with 10,000 events and a 50 MiB workspace forked, beside
//     session create → idle and `cp -a` of the same files. BENCH_ONLY=fork runs only this one.
// 17. memory stores (bench/memory-stores.ts): session create → idle with a mounted store of 1,000
//     memories against none, the first turn's write-in, the read-back of 100 changed memories.
// 18. multiagent (bench/multiagent.ts): delegate → specialist's first model request, two parallel
//     1 s specialists' wall time, beside a turn's start and one specialist alone. BENCH_ONLY=multiagent.
// 19. many sessions at once (bench/concurrency.ts): C = 10, 50, 200 (BENCH_CONCURRENCY for others,
//     1000 included) sessions turning together, the service beside its limit for the same event
//     volume and as two processes on one PostgreSQL + Redis; its own processes. BENCH_ONLY=concurrency.
//  BENCH_ONLY=rest runs only the first measurement; BENCH_ONLY=hot the first two; BENCH_ONLY=engines
//  only the engines' (BENCH_ENGINES=opencode,pi narrows them); BENCH_ONLY=<part> runs one part: dashboard,
//  outcomes, long-sessions, telemetry, fork, memory-stores, multiagent, concurrency.
//  2. send (202) → first SSE frame latency, p50/p99, the fake provider answering at once, beside
//     the machine's limit for the same work on PostgreSQL + Redis (bench/first-frame-limit.ts).
//  3. event throughput of one session reaching a subscriber.
//  4. fan-out: N concurrent SSE subscribers on one session: p99 delivery delay of one event,
//     and memory per open stream.
import http from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import { spawn } from 'node:child_process';
import express from 'express';
import { startTestServer } from '../test/helpers/server.js';
import { startLimitServer } from './limit-server.js';
import { splitSchema } from '../src/db/client.js';

// TEST_DATABASE_URL / TEST_REDIS_URL run the bench on PostgreSQL and Redis.
import { startFakeProvider } from '../test/fake-provider/server.js';
import { channelBench } from './channels.js';
import { memoryBench } from './memory.js';
import { outcomeBench } from './outcomes.js';
import { prisma } from '../src/db/client.js';
import { commitEvents, type NewEvent } from '../src/events/store.js';
import { fuzzBench } from './fuzz-throughput.js';
import { mcpBench } from './mcp.js';
import { sandboxBench } from './sandboxes.js';
import { engineBench } from './engines.js';
import { dashboardBench } from './dashboard.js';
import { longSessionBench } from './long-sessions.js';
import { multiagentBench } from './multiagent.js';
import { environmentBench } from './environments.js';
import { memoryStoreBench } from './memory-stores.js';
import { firstFrameBench, openStream, startFrameLimit } from './first-frame.js';
import { telemetryBench } from './telemetry.js';
import { forkBench } from './fork.js';
import { concurrencyBench } from './concurrency-bench.js';

const DURATION = Number(process.env.BENCH_SECONDS || 8);
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS || 1000);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(2));

/** autocannon in a child process, so the load generator does not share the servers' event loop. */
async function cannon(url: string, headers: Record<string, string>) {
  const bin = new URL('../node_modules/autocannon/autocannon.js', import.meta.url).pathname;
  const args = [bin, '-j', '-c', '32', '-d', String(DURATION), ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}=${v}`]), url];
  const cpu0 = process.cpuUsage();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise((resolve) => child.once('exit', resolve));
  const cpu = process.cpuUsage(cpu0);
  const result = JSON.parse(out.trim().split('\n').pop()!) as {
    requests: { average: number; total: number };
    latency: { p99: number };
    errors: number;
    non2xx: number;
  };
  // CPU of this process (the servers under test run here) per request served: less sensitive to
  // a neighbour's load than req/s.
  const cpuUs = (cpu.user + cpu.system) / Math.max(1, result.requests.total);
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.non2xx, cpuUs };
}

/** A marker event the streams carry (agent.status), appended by the bench itself. */
const statusEvent = (text: string): NewEvent => ({ type: 'agent.status', fields: { part: { type: 'status', index: 0, level: 'working', text } } });

const fake = await startFakeProvider();
// The rate limit stays on (counted in Redis when configured) with a budget the REST rounds do not
// exhaust: at ~3,500 req/s the tests' 100,000 a minute ran out and the rounds measured 429s.
const s = await startTestServer({
  anthropicApiKey: 'bench',
  anthropicBaseUrl: fake.anthropicBaseUrl,
  openaiApiKey: 'bench',
  openaiBaseUrl: fake.openaiBaseUrl,
  rateLimitPerMinute: 10_000_000,
});
const rows: [string, string][] = [];
if (process.env.BENCH_ONLY === 'engines') {
  rows.push(...(await engineBench(s)));
  await finishEarly();
}
if (process.env.BENCH_ONLY === 'outcomes') {
  rows.push(...(await outcomeBench(s, fake)));
  await finishEarly();
}
if (process.env.BENCH_ONLY === 'fork') {
  rows.push(...(await forkBench(s)));
  await finishEarly();
}
if (process.env.BENCH_ONLY === 'multiagent') {
  rows.push(...(await multiagentBench(s, fake)));
  await finishEarly();
}
if (process.env.BENCH_ONLY === 'dashboard') {
  rows.push(...(await dashboardBench(s)));
  await finishEarly();
}
if (process.env.BENCH_ONLY === 'long-sessions') {
  rows.push(...(await longSessionBench(s, fake)));
  await finishEarly();
}
if (process.env.BENCH_ONLY === 'telemetry') {
  rows.push(...(await telemetryBench(s, fake)));
  await finishEarly();
}
if (process.env.BENCH_ONLY === 'memory-stores') {
  rows.push(...(await memoryStoreBench(s)));
  await finishEarly();
}
if (process.env.BENCH_ONLY === 'concurrency') {
  rows.push(...(await concurrencyBench((line) => console.log(line))));
  await finishEarly();
}

// 1. REST over GraphQL vs bare route
const agent = (await s.api('POST', '/agents', { body: { displayName: 'Bench', prompt: 'p' } })).body.agent;
const universeId = (await prisma.agent.findUniqueOrThrow({ where: { id: agent.id } })).universeId;
const bare = express();
bare.get('/agents/:id', async (req, res) => {
  const a = await prisma.agent.findFirst({
    where: { id: req.params.id, universeId },
    include: {
      promptVersions: { where: { active: true }, select: { version: true, content: true } },
      universe: { select: { slug: true } },
      _count: { select: { sessions: true } },
    },
  });
  res.json({ agent: a });
});
const bareServer = http.createServer(bare);
await new Promise<void>((r) => bareServer.listen(0, '127.0.0.1', r));
const barePort = (bareServer.address() as { port: number }).port;
const auth = { authorization: `Bearer ${s.adminToken}` };
// The limit: same answer from node:http + pg, one SQL statement; checked equal before measuring.
const pgUrl = process.env.TEST_DATABASE_URL;
const schema = pgUrl ? (await prisma.$queryRaw<{ schema: string }[]>`SELECT current_schema() AS schema`)[0]!.schema : undefined;
const limitServer = pgUrl ? await startLimitServer(splitSchema(pgUrl).url, schema) : null;
if (limitServer) {
  const viaRest = (await s.api('GET', `/agents/${agent.id}`)).body;
  const viaLimit = await (await fetch(`${limitServer.url}/v1/agents/${agent.id}`, { headers: auth })).json();
  if (!isDeepStrictEqual(viaRest, viaLimit)) throw new Error(`limit server answers differently:\n${JSON.stringify(viaRest)}\n${JSON.stringify(viaLimit)}`);
}
await cannon(`${s.base}/agents/${agent.id}`, auth); // warm-up
if (limitServer) await cannon(`${limitServer.url}/v1/agents/${agent.id}`, auth);
// REST and the limit alternate (BENCH_ROUNDS rounds): a neighbour's load on the shared machine
// then weighs on both sides of each ratio alike.
const REST_ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const restRuns: Awaited<ReturnType<typeof cannon>>[] = [];
const limitRuns: Awaited<ReturnType<typeof cannon>>[] = [];
for (let round = 0; round < REST_ROUNDS; round++) {
  restRuns.push(await cannon(`${s.base}/agents/${agent.id}`, auth));
  if (limitServer) limitRuns.push(await cannon(`${limitServer.url}/v1/agents/${agent.id}`, auth));
}
const mean = (runs: typeof restRuns) => ({
  rps: runs.reduce((a, r) => a + r.rps, 0) / runs.length,
  p99: Math.max(...runs.map((r) => r.p99)),
  errors: runs.reduce((a, r) => a + r.errors, 0),
  cpuUs: runs.reduce((a, r) => a + r.cpuUs, 0) / runs.length,
});
const rest = mean(restRuns);
const limit = limitServer ? mean(limitRuns) : null;
const direct = await cannon(`http://127.0.0.1:${barePort}/agents/${agent.id}`, {});
rows.push([
  'GET /v1/agents/{id} (REST → GraphQL)',
  `${fmt(rest.rps)} req/s (mean of ${REST_ROUNDS} rounds), p99 ${rest.p99} ms, errors ${rest.errors}, server CPU ${rest.cpuUs.toFixed(0)} µs/request`,
]);
if (limit) {
  rows.push([
    'limit: node:http + pg, one SQL statement (token by hash), same JSON',
    `${fmt(limit.rps)} req/s, p99 ${limit.p99} ms, errors ${limit.errors}, server CPU ${limit.cpuUs.toFixed(0)} µs/request`,
  ]);
  rows.push([
    'ratio REST / limit (target ≥ 0.6)',
    `${(rest.rps / limit.rps).toFixed(2)} (rounds: ${restRuns.map((r, i) => (r.rps / limitRuns[i]!.rps).toFixed(2)).join(', ')})`,
  ]);
} else {
  rows.push(['limit: node:http + pg', 'PostgreSQL only: set TEST_DATABASE_URL']);
}
rows.push(['bare Express route, same Prisma query (no auth)', `${fmt(direct.rps)} req/s, p99 ${direct.p99} ms`]);
rows.push(['ratio REST / bare Express', (rest.rps / direct.rps).toFixed(2)]);
bareServer.close();
await limitServer?.close();
/** BENCH_ONLY=rest|hot|engines|dashboard: print what was measured so far and stop. */
async function finishEarly(): Promise<never> {
  console.log('\n| measurement | result |\n|---|---|');
  for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
  await s.stop();
  await fake.close();
  process.exit(0);
}
if (process.env.BENCH_ONLY === 'rest') await finishEarly();

// 2. send → first SSE frame (bench/first-frame.ts)
const frameLimit = await startFrameLimit(s, agent.id);
rows.push(...(await firstFrameBench(s, fake, agent.id, frameLimit)));
await frameLimit?.close();
if (process.env.BENCH_ONLY === 'hot') await finishEarly();
const sess = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body.session;
// 3. event throughput of one session to one subscriber
const N = 2000;
let received = 0;
let allIn: (() => void) | null = null;
const closeT = await openStream(s, sess.id, (type) => {
  if (type === 'agent.status' && ++received === N) allIn?.();
});
await new Promise((r) => setTimeout(r, 200));
const tThroughput = performance.now();
const all = new Promise<void>((r) => (allIn = r));
for (let i = 0; i < N; i += 20)
  await commitEvents(
    sess.id,
    Array.from({ length: 20 }, () => statusEvent('tick')),
  );
await all;
const seconds = (performance.now() - tThroughput) / 1000;
closeT();
rows.push(['events of one session reaching a subscriber', `${fmt(N / seconds)} events/s (${N} events, batches of 20)`]);

// 4. fan-out, with the subscribers in another process
const agent2 = (await s.api('POST', '/agents', { body: {} })).body.agent;
const fan = (await s.api('POST', '/sessions', { body: { agent: agent2.id } })).body.session;
global.gc?.();
await new Promise((r) => setTimeout(r, 500));
const memBefore = process.memoryUsage();
const clients = spawn(
  process.execPath,
  [new URL('./sse-clients.mjs', import.meta.url).pathname, `${s.base}/sessions/${fan.id}/events/stream`, s.adminToken, String(SUBSCRIBERS), 'agent.status'],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const arrivals: number[] = [];
let opened: (() => void) | null = null;
let allGot: (() => void) | null = null;
let lineBuf = '';
clients.stdout!.on('data', (chunk: Buffer) => {
  lineBuf += chunk.toString();
  let k: number;
  while ((k = lineBuf.indexOf('\n')) !== -1) {
    const msg = JSON.parse(lineBuf.slice(0, k));
    lineBuf = lineBuf.slice(k + 1);
    if (msg.open) opened?.();
    if (msg.at) {
      arrivals.push(msg.at);
      if (arrivals.length === SUBSCRIBERS) allGot?.();
    }
  }
});
await new Promise<void>((r) => (opened = r));
await new Promise((r) => setTimeout(r, 1500));
global.gc?.();
const memAfter = process.memoryUsage();
// Steady state: a few warm-up events (JIT, buffers), then ROUNDS measured events; the delay
// of every (event, subscriber) pair counts.
const ROUNDS = 10;
const delays: number[] = [];
for (let round = -3; round < ROUNDS; round++) {
  arrivals.length = 0;
  const everyone = new Promise<void>((r) => (allGot = r));
  const tSend = performance.timeOrigin + performance.now();
  await commitEvents(fan.id, [statusEvent('fanout')]);
  await everyone;
  if (round >= 0) delays.push(...arrivals.map((a) => a - tSend));
  await new Promise((r) => setTimeout(r, 100));
}
rows.push([
  `fan-out to ${SUBSCRIBERS} SSE subscribers (append → received; ${ROUNDS} events after 3 warm-up)`,
  `p50 ${fmt(pct(delays, 50))} ms, p99 ${fmt(pct(delays, 99))} ms`,
]);
const perStream = (k: 'rss' | 'heapUsed') => fmt((memAfter[k] - memBefore[k]) / SUBSCRIBERS / 1024);
rows.push(['server memory per open stream (delta / streams, after GC)', `heap ${perStream('heapUsed')} KB, RSS ${perStream('rss')} KB`]);
clients.kill();

// 5. channels: inbound acknowledgement, message → user.message stored → reply posted (bench/channels.ts).
rows.push(...(await channelBench(s, fake)));

// 6. memory and file descriptors: 5 parallel 30 MiB uploads, 1,000 dropped SSE connections (bench/memory.ts).
rows.push(...(await memoryBench(s)));

// 13. long sessions: caching vs none over 20 turns, compaction latency (bench/long-sessions.ts).
rows.push(...(await longSessionBench(s, fake)));
// 14. outcomes: agent turn end → evaluation_started, verdict → revision turn's first frame (bench/outcomes.ts).
rows.push(...(await outcomeBench(s, fake)));

// 7. fuzz throughput: the fuzz suite's generated requests, every answer checked (bench/fuzz-throughput.ts).
rows.push(...(await fuzzBench(s)));

// 8. MCP tool call overhead: service → MCP server → result event against a bare SDK client (bench/mcp.ts).
rows.push(...(await mcpBench(s, fake)));

// 9. sandboxes: session create → idle (local; kubernetes warm pool on the fake API server), egress proxy overhead (bench/sandboxes.ts).
rows.push(...(await sandboxBench(s)));

// 10. environments: create → idle with packages, first (installing) and cached, vs none (bench/environments.ts).
rows.push(...(await environmentBench(s)));

// 17. memory stores: create → idle with a mounted store of 1,000 memories vs none, the first
//     turn's write-in, the read-back of 100 changed memories (bench/memory-stores.ts).
rows.push(...(await memoryStoreBench(s)));
// 18. multiagent: delegation overhead and two parallel specialists (bench/multiagent.ts).
rows.push(...(await multiagentBench(s, fake)));

// 11. CLI engines: session create → first agent.message per installed engine (warm), hermes alongside (bench/engines.ts).
rows.push(...(await engineBench(s)));

// 12. the dashboard's first load in Chromium beside a bare page's (bench/dashboard.ts).
rows.push(...(await dashboardBench(s)));

// 15. telemetry: tracing off vs on (REST throughput, first frame), the /metrics scrape (bench/telemetry.ts).
rows.push(...(await telemetryBench(s, fake)));
// 16. fork of a session with 10,000 events and a 50 MiB workspace, beside create → idle and cp -a (bench/fork.ts).
rows.push(...(await forkBench(s)));
// 19. many sessions at once, beside the limit and as two processes (bench/concurrency.ts): its own processes.
rows.push(...(await concurrencyBench((line) => console.log(line))));

console.log('\n| measurement | result |\n|---|---|');
for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
await s.stop();
await fake.close();
process.exit(0);
