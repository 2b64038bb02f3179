// The cost of giving a /v1 request Express's request/response prototypes (`withExpress` in
// rest/router.ts), measured on the edge alone: one REST dispatcher (the real route table, an
// in-memory rate limiter) behind two servers, (a) as the server runs it, a token-carrying GET
// staying on node:http's objects, (b) the same request given Express's prototypes first, as
// every non-hot request is. `GET /v1/agents/agent_x/nope` walks origin guard → rate limit →
// input hygiene → match → 404 without a database, so only the edge's work is counted.
// autocannon runs in a child process; a and b alternate (BENCH_ROUNDS, BENCH_SECONDS) so a
// neighbour's load weighs on both. `node --import tsx bench/edge-swap.ts`
import http from 'node:http';
import { spawn } from 'node:child_process';
import express from 'express';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { buildRestDispatch } from '../rest/router.js';
import { routes } from '../rest/routes/index.js';

const SECONDS = Number(process.env.BENCH_SECONDS || 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 4);
const PATH = '/v1/agents/agent_x/nope';

const app = express();
const rest = buildRestDispatch(routes, { app, limiter: new RateLimiterMemory({ points: 1e9, duration: 60 }) });

async function listen(listener: http.RequestListener): Promise<string> {
  const server = http.createServer(listener);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}${PATH}`;
}

const plain = await listen((req, res) => rest(req, res));
const swapped = await listen((req, res) => {
  Object.assign(req, { res });
  Object.assign(res, { req });
  Object.setPrototypeOf(req, app.request);
  Object.setPrototypeOf(res, app.response);
  rest(req, res);
});

/** autocannon in a child process; the server CPU (this process) per request. */
async function cannon(url: string) {
  const bin = new URL('../node_modules/autocannon/autocannon.js', import.meta.url).pathname;
  const cpu0 = process.cpuUsage();
  const args = [bin, '-j', '-c', '32', '-d', String(SECONDS), '-H', 'authorization=Bearer as_edge_bench', url];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise((r) => child.once('exit', r));
  const cpu = process.cpuUsage(cpu0);
  const result = JSON.parse(out.trim().split('\n').pop()!) as { requests: { average: number; total: number } };
  return { rps: result.requests.average, cpuUs: (cpu.user + cpu.system) / Math.max(1, result.requests.total) };
}

for (const url of [plain, swapped]) {
  const res = await fetch(url, { headers: { authorization: 'Bearer as_edge_bench' } });
  if (res.status !== 404) throw new Error(`expected 404, got ${res.status}`);
  await cannon(url); // warm-up
}
const runs = { node: [] as Awaited<ReturnType<typeof cannon>>[], express: [] as Awaited<ReturnType<typeof cannon>>[] };
for (let i = 0; i < ROUNDS; i++) {
  runs.node.push(await cannon(plain));
  runs.express.push(await cannon(swapped));
}
const mean = (xs: { rps: number; cpuUs: number }[], k: 'rps' | 'cpuUs') => xs.reduce((s, r) => s + r[k], 0) / xs.length;
console.log('| edge alone (404 without a database) | req/s | server CPU µs/request |\n|---|---|---|');
for (const [name, xs] of [
  ['node:http objects (hot path)', runs.node],
  ["Express's prototypes", runs.express],
] as const) {
  console.log(
    `| ${name} | ${mean(xs, 'rps').toFixed(0)} (${xs.map((r) => r.rps.toFixed(0)).join(', ')}) | ${mean(xs, 'cpuUs').toFixed(1)} (${xs.map((r) => r.cpuUs.toFixed(1)).join(', ')}) |`,
  );
}
process.exit(0);
