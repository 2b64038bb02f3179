// One level of the many-sessions bench (bench/concurrency.ts) against one side: C fresh
// sessions with one SSE stream each, then C sends at once, the fake provider streaming 10 words
// over ≈ 1 s per turn. Per turn the send → first frame (session.status_running) and send →
// session.status_idle times; for the side, its CPU time, statements and memory; then every
// stream checked against its session's history. With several processes, session i is sent to
// process i % n and streamed from process (i + 1) % n: every stream is served by another
// process than the one its send went to.
import fs from 'node:fs';
import type { FakeProvider } from '../test/fake-provider/server.js';
import { call, watch, type Watch } from './concurrency-client.js';
import { cpuOf, rssOf, snapshot, type Side, type Snapshot } from './concurrency-sides.js';

/** The machine's CPU time so far (all cores, /proc/stat jiffies): busy and total. */
function machineTicks(): { busy: number; total: number } {
  const [, ...fields] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const n = fields.map(Number);
  const idle = (n[3] ?? 0) + (n[4] ?? 0); // idle + iowait
  const total = n.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

export const PROVIDER_MS = 1000;
const WORDS = Number(process.env.BENCH_WORDS || 10); // streamed chunks per turn (BENCH_WORDS: what a chunk costs)

const totalOf = (s: Snapshot) => Object.values(s.statements).reduce((a, b) => a + b, 0);
function perTurn(a: Snapshot, b: Snapshot, turns: number): [string, number][] {
  return Object.entries(b.statements)
    .map(([kind, n]): [string, number] => [kind, (n - (a.statements[kind] ?? 0)) / turns])
    .filter(([, n]) => n > 0)
    .sort((x, y) => y[1] - x[1]);
}

export type LevelResult = Awaited<ReturnType<typeof level>>;

/**
 * `memory`: the side's memory is read after a full GC around the round (the memory figures; the
 * forced GCs deoptimize code, so such a round warms up the next one rather than being timed).
 */
export async function level(side: Side, fake: FakeProvider, c: number, memory: boolean) {
  const { procs, token } = side;
  const at = (i: number) => procs[i % procs.length]!.base;
  const streamAt = (i: number) => procs[(i + 1) % procs.length]!.base;
  if (memory) {
    // The garbage of earlier rounds collected and its pages given back first: the RSS deltas are
    // the sessions' and streams' own.
    await snapshot(side, true);
    await new Promise((r) => setTimeout(r, 1000));
  }
  const bare = await snapshot(side, memory);
  const sessions: string[] = [];
  for (let i = 0; i < c; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(20, c - i) }, (_, k) => call(at(i + k), token, 'POST', '/sessions', { agent: side.agentId })),
    );
    sessions.push(...batch.map((r) => r.body.session.id as string));
  }
  for (const [i, id] of sessions.entries()) {
    for (let k = 0; k < 200 && (await call(at(i), token, 'GET', `/sessions/${id}`)).body.session.status !== 'idle'; k++)
      await new Promise((r) => setTimeout(r, 20));
  }
  const idleSessions = await snapshot(side, memory);
  const streams: Watch[] = [];
  for (let i = 0; i < c; i += 100) streams.push(...(await Promise.all(sessions.slice(i, i + 100).map((id, k) => watch(streamAt(i + k), token, id)))));
  await new Promise((r) => setTimeout(r, 200)); // every stream's replay done
  const text = Array.from({ length: WORDS }, (_, i) => `word${i}`).join(' ');
  for (let i = 0; i < c; i++) fake.enqueue({ kind: 'text', text, chunks: WORDS, delayMs: PROVIDER_MS / WORDS });
  fake.requests.length = 0;
  const before = await snapshot(side, memory);
  const outputAt = procs.map((p) => p.output().length);
  const cpu0 = cpuOf(side);
  const machine0 = machineTicks();
  const frames0 = streams.reduce((n, w) => n + w.ids.length, 0);
  const t0 = performance.now();
  const mono0 = process.hrtime.bigint() / 1000n; // µs, the clock of a CPU profile's timestamps
  const sends = sessions.map((id, i) =>
    call(at(i), token, 'POST', `/sessions/${id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }] }),
  );
  const answers = await Promise.all(sends);
  const firsts = (await Promise.all(streams.map((s) => s.running))).map((t) => t - t0);
  const idles = (await Promise.all(streams.map((s) => s.idle))).map((t) => t - t0);
  const wall = performance.now() - t0;
  // Stream frames delivered over the turns (every stored event the spec streams, to its one stream).
  const events = streams.reduce((n, w) => n + w.ids.length, 0) - frames0;
  // When the turns reached the model provider (its arrivals, epoch ms): the turn starts' share of the latency.
  const epoch0 = performance.timeOrigin + t0;
  const atProvider = fake.arrivals.filter((a) => a >= epoch0 - 1).map((a) => a - epoch0);
  if ((process.env.BENCH_CPU_PROF || process.env.BENCH_DEBUG) && side.label === 'service')
    console.error(
      `C=${c}: turns between ${mono0} and ${process.hrtime.bigint() / 1000n} µs (CLOCK_MONOTONIC: a CPU profile's clock, and perf record -k mono's)`,
    );
  const cpu = cpuOf(side) - cpu0;
  const machine1 = machineTicks();
  // The whole machine's cores busy over the turns (every process: the side, PostgreSQL, Redis, this client and fake provider).
  const machineBusy = (machine1.busy - machine0.busy) / Math.max(1, machine1.total - machine0.total);
  const rss = rssOf(side);
  const after = await snapshot(side, memory);
  // Correctness: each stream equals the session's history (less user.message and system.message,
  // which the spec keeps off the stream), no gap, no duplicate.
  let mismatches = 0;
  for (let i = 0; i < c; i++) {
    const history = await call(at(i), token, 'GET', `/sessions/${sessions[i]}/events?limit=1000`);
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
  // Errors the side logged meanwhile (pino's JSON lines, level ≥ 50), by message.
  const logged = new Map<string, number>();
  for (const [k, p] of procs.entries())
    for (const line of p.output().slice(outputAt[k]).split('\n')) {
      const m = /^\{"level":(\d+).*"msg":"([^"]*)"/.exec(line);
      if (m && Number(m[1]) >= 50) logged.set(m[2]!, (logged.get(m[2]!) ?? 0) + 1);
    }
  const perUnit = {
    idleSession: { rss: (idleSessions.rss - bare.rss) / c, heap: (idleSessions.heapUsed - bare.heapUsed) / c },
    openStream: { rss: (before.rss - idleSessions.rss) / c, heap: (before.heapUsed - idleSessions.heapUsed) / c },
  };
  const statements = { total: (totalOf(after) - totalOf(before)) / c, kinds: perTurn(before, after, c) };
  if (after.texts)
    for (const [t, n] of Object.entries(after.texts)) {
      const d = (n - (before.texts?.[t] ?? 0)) / c;
      if (d > 0) console.error(`C=${c}: ${d.toFixed(2)} per turn  ${t.replace(/\s+/g, ' ')}`);
    }
  return {
    c,
    firsts,
    atProvider,
    idles,
    wall,
    events,
    cpu,
    machineBusy,
    rss,
    errors,
    mismatches,
    memory: perUnit,
    statements,
    notEndTurn,
    sessionErrors,
    logged,
  };
}
