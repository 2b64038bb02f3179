// send (202) → first SSE frame of the turn (session.status_running), p50/p99 over
// BENCH_FRAME_TURNS turns after 10 warm-up turns (each sent 10 ms after the previous idle frame),
// the fake provider answering at once, with this process's CPU time over the same span. The
// client shares the server's event loop, so it is kept as light as a separate client would be:
// node:http with a keep-alive agent (undici's fetch costs ≈ 1 ms of CPU per request here, on the
// loop the server needs), no response validation, the stream read as raw SSE frames.
import http from 'node:http';
import type { TestServer } from '../test/helpers/server.js';
import { openSessionStream } from '../test/helpers/streams.js';
import type { FakeProvider } from '../test/fake-provider/server.js';
import { prisma, splitSchema } from '../src/db/client.js';
import { startFrameLimitServer } from './first-frame-limit.js';

const TURNS = Number(process.env.BENCH_FRAME_TURNS || 100);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(2));

const keepAlive = new http.Agent({ keepAlive: true });

/** Opens the session's SSE stream; `onFrame` gets each frame's event type, arrival time and data. */
export function openStream(s: TestServer, sessionId: string, onFrame: (type: string, at: number, data: string) => void): Promise<() => void> {
  return openSessionStream(s.base, s.adminToken, sessionId, (frame, at) => {
    if (frame.type) onFrame(frame.type, at, frame.data ?? '');
  });
}

/** POST /sessions/{id}/events with one user.message, without response validation. */
export function sendText(s: TestServer, sessionId: string, text: string): Promise<void> {
  const body = JSON.stringify({ events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${s.base}/sessions/${sessionId}/events`,
      {
        method: 'POST',
        agent: keepAlive,
        headers: { authorization: `Bearer ${s.adminToken}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let answer = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (answer += c));
        res.on('end', () => (res.statusCode === 202 ? resolve() : reject(new Error(`send answered ${res.statusCode}: ${answer}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface Client {
  base: string;
  adminToken: string;
}

/** A session's stream, opened once (a stream opened later would replay the earlier turns' frames). */
async function watchTurns(c: Client, sessionId: string) {
  let waiting: ((t: number) => void) | null = null;
  let idle: (() => void) | null = null;
  const close = await openStream(c as TestServer, sessionId, (type, at) => {
    if (type === 'session.status_running' && waiting) waiting(at);
    if (type === 'session.status_idle' && idle) idle();
  });
  return {
    close,
    /** Promises for the next status_running frame's arrival and the next status_idle frame. */
    next: () => ({ running: new Promise<number>((r) => (waiting = r)), idle: new Promise<void>((r) => (idle = r)) }),
  };
}

/** One frame-latency loop on an idle session: `prepare` readies a turn, `settled` waits until the next may start. */
async function measureFrames(
  c: Client,
  sessionId: string,
  watch: Awaited<ReturnType<typeof watchTurns>>,
  turns: number,
  warmUp: number,
  opts: { prepare: () => void; settled: (untilIdle: Promise<void>) => Promise<void> },
) {
  const latencies: number[] = [];
  const cpu: number[] = [];
  for (let i = -warmUp; i < turns; i++) {
    opts.prepare();
    const next = watch.next();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    // The first frame can beat the 202 to the client: measure from when the send was made.
    await sendText(c as TestServer, sessionId, 'hi');
    const at = await next.running;
    const used = process.cpuUsage(cpu0);
    if (i >= 0) {
      latencies.push(at - t0);
      cpu.push((used.user + used.system) / 1000);
    }
    await opts.settled(next.idle);
    // The runner's bookkeeping after the idle frame (release) is not part of the next send.
    await new Promise((r) => setTimeout(r, 10));
  }
  return { latencies, cpu };
}

const ROUND = 50;

/** The limit server on the service's database and Redis, with a session of its own (PostgreSQL and Redis only; else null). */
export async function startFrameLimit(s: TestServer, agentId: string) {
  const pgUrl = process.env.TEST_DATABASE_URL;
  const redisUrl = process.env.TEST_REDIS_URL;
  if (!pgUrl || !redisUrl) return null;
  const schema = (await prisma.$queryRaw<{ schema: string }[]>`SELECT current_schema() AS schema`)[0]!.schema;
  const server = await startFrameLimitServer({ databaseUrl: splitSchema(pgUrl).url, schema, redisUrl, token: s.adminToken });
  const sessionId: string = (await s.api('POST', '/sessions', { body: { agent: agentId } })).body.session.id;
  return { base: server.base, sessionId, close: () => server.close() };
}

/**
 * The server must have the fake provider as its Anthropic upstream. On PostgreSQL with Redis
 * the machine's limit (bench/first-frame-limit.ts) is measured beside it, in alternating rounds
 * of 50 turns each (a neighbour's load on the shared machine falls on both).
 */
export async function firstFrameBench(
  s: TestServer,
  fake: FakeProvider,
  agentId: string,
  limit?: { base: string; sessionId: string } | null,
): Promise<[string, string][]> {
  const sess = (await s.api('POST', '/sessions', { body: { agent: agentId } })).body.session;
  // Provisioning announces no event: poll the status until idle.
  for (let i = 0; i < 200; i++) {
    if ((await s.api('GET', `/sessions/${sess.id}`)).body.session.status === 'idle') break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const ours = { latencies: [] as number[], cpu: [] as number[] };
  const bare = { latencies: [] as number[], cpu: [] as number[] };
  const serviceTurns = {
    prepare: () => fake.enqueue({ kind: 'text', text: 'ok', chunks: 1 }),
    settled: async (untilIdle: Promise<void>) => {
      await untilIdle;
      // The fake provider keeps every request it got; a turn's carries the whole conversation, so
      // kept they would make each scavenge of this shared process copy a growing history.
      fake.requests.length = 0;
    },
  };
  // The limit runs no turn: its next send may go once the frame and the 202 are in.
  const limitTurns = { prepare: () => undefined, settled: async () => undefined };
  const limitClient = limit ? { base: limit.base, adminToken: s.adminToken } : null;
  const watchOurs = await watchTurns(s, sess.id);
  const watchLimit = limit && limitClient ? await watchTurns(limitClient, limit.sessionId) : null;
  try {
    for (let done = 0, round = 0; done < TURNS; done += ROUND, round++) {
      const n = Math.min(ROUND, TURNS - done);
      const a = await measureFrames(s, sess.id, watchOurs, n, round === 0 ? 10 : 2, serviceTurns);
      ours.latencies.push(...a.latencies);
      ours.cpu.push(...a.cpu);
      if (limit && limitClient && watchLimit) {
        const b = await measureFrames(limitClient, limit.sessionId, watchLimit, n, round === 0 ? 10 : 2, limitTurns);
        bare.latencies.push(...b.latencies);
        bare.cpu.push(...b.cpu);
      }
    }
  } finally {
    watchOurs.close();
    watchLimit?.close();
  }
  const line = (m: typeof ours) => `p50 ${fmt(pct(m.latencies, 50))} ms, p99 ${fmt(pct(m.latencies, 99))} ms, max ${fmt(Math.max(...m.latencies))} ms`;
  const rows: [string, string][] = [
    ['send (answered 202) → first SSE frame of the turn (target p99 < 15 ms)', `${line(ours)} (${TURNS} turns)`],
    ['  of which CPU of this process (server and client) until the frame', `p50 ${fmt(pct(ours.cpu, 50))} ms, p99 ${fmt(pct(ours.cpu, 99))} ms`],
  ];
  if (limit) {
    rows.push([
      'limit: node:http + Redis count + one SQL statement appending the two events, frame, 202',
      `${line(bare)} (${TURNS} sends), CPU p50 ${fmt(pct(bare.cpu, 50))} ms`,
    ]);
    rows.push([
      'ratio first frame / limit',
      `p50 ${(pct(ours.latencies, 50) / pct(bare.latencies, 50)).toFixed(2)}, p99 ${(pct(ours.latencies, 99) / pct(bare.latencies, 99)).toFixed(2)}`,
    ]);
  }
  return rows;
}
