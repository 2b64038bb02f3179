// The many-sessions bench (issue #29; CLI and knobs in bench/concurrency.ts, a part of
// `npm run bench`): per level, the service, then its limit, then the service as several
// processes, one after the other on the same fake provider and client, so that a neighbour's
// load weighs on each side alike. First untimed rounds on every side: one at C = 10 (the first
// level measured cold was mostly JIT warm-up: first frame at C = 10 ≈ 95–112 ms cold, 30–55 ms
// warm), then BENCH_WARMUP (default 3) at the highest level, at most 200 (the service's code takes
// hundreds of turns to be optimized: compiling it was ≈ 20 % of its CPU in a round of 200 turns
// after a few hundred). Then each level three times on each side: a round that reads the memory
// (after full GCs), an untimed one, and the timed one. A forced full GC deoptimizes the code that
// embeds what it frees; re-optimizing the service's code cost ≈ 0.5 s of CPU in a round of 200
// turns right after one (the limit's far less), so the untimed round takes that cost. The timed
// round still re-optimizes what natural GCs and new object shapes deoptimize (≈ 20 % of its CPU
// after ≈ 1,400 turns, docs/benchmarks.md), as a long-running process does.
import { startFakeProvider } from '../test/fake-provider/server.js';
import { pct } from './concurrency-client.js';
import { level, PROVIDER_MS, type LevelResult } from './concurrency-level.js';
import { startLimit, startService, type Side } from './concurrency-sides.js';

const WARM_UP = 10;

const HEADER = [
  '| C | side | first frame p50 / p99 | send → idle p50 / p99 | overhead p99 (− 1000 ms) | turns/s | events/s | CPU per turn | ratio (target) | statements per turn | RSS | per 100 idle sessions (RSS / heap) | per 100 open streams (RSS / heap) | errors | stream ≠ history | not end_turn / session.error / errors logged | machine cores busy |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
];

const turnsPerSecond = (r: LevelResult) => r.c / (r.wall / 1000);
const cpuPerTurn = (r: LevelResult) => r.cpu / r.c;
const overhead = (r: LevelResult) => (pct(r.idles, 99) - PROVIDER_MS) / 1000;
const mb = (bytes: number) => `${((bytes * 100) / 2 ** 20).toFixed(1)}`;

function tableRow(side: Side, r: LevelResult, ratio: string): string {
  const logged = [...r.logged.values()].reduce((a, b) => a + b, 0);
  return `| ${r.c} | ${side.label} | ${pct(r.firsts, 50).toFixed(0)} / ${pct(r.firsts, 99).toFixed(0)} ms | ${(pct(r.idles, 50) / 1000).toFixed(2)} / ${(pct(r.idles, 99) / 1000).toFixed(2)} s | ${overhead(r).toFixed(2)} s | ${turnsPerSecond(r).toFixed(1)} | ${(r.events / (r.wall / 1000)).toFixed(0)} | ${cpuPerTurn(r).toFixed(1)} ms | ${ratio} | ${r.statements.total.toFixed(1)} | ${r.rss.toFixed(0)} MB | ${mb(r.memory.idleSession.rss)} / ${mb(r.memory.idleSession.heap)} MB | ${mb(r.memory.openStream.rss)} / ${mb(r.memory.openStream.heap)} MB | ${r.errors} | ${r.mismatches} | ${r.notEndTurn} / ${r.sessionErrors} / ${logged} | ${(100 * r.machineBusy).toFixed(0)} % |`;
}

/** The summary line of one side's level for `npm run bench`'s table. */
const summary = (r: LevelResult) =>
  `first frame p50 / p99 ${pct(r.firsts, 50).toFixed(0)} / ${pct(r.firsts, 99).toFixed(0)} ms, send → idle p99 ${(pct(r.idles, 99) / 1000).toFixed(2)} s (overhead ${overhead(r).toFixed(2)} s), ${turnsPerSecond(r).toFixed(1)} turns/s, ${(r.events / (r.wall / 1000)).toFixed(0)} events/s, CPU ${cpuPerTurn(r).toFixed(1)} ms and ${r.statements.total.toFixed(1)} statements per turn, errors ${r.errors}, stream ≠ history ${r.mismatches}, not end_turn ${r.notEndTurn}`;

/** Prints the full table line by line through `print`; answers the summary rows for `npm run bench`. */
export async function concurrencyBench(print: (line: string) => void): Promise<[string, string][]> {
  const levels = (process.env.BENCH_CONCURRENCY || '10,50,200').split(',').map(Number);
  const db = process.env.TEST_DATABASE_URL;
  const shared = Boolean(db && process.env.TEST_REDIS_URL);
  const processes = Number(process.env.BENCH_PROCESSES || (shared ? 2 : 1));
  if (processes > 1 && !shared) throw new Error('BENCH_PROCESSES > 1 needs TEST_DATABASE_URL and TEST_REDIS_URL (processes share them)');
  const fake = await startFakeProvider();
  const sides: Side[] = [];
  const rows: [string, string][] = [];
  try {
    const service = await startService(fake, 1, true);
    sides.push(service);
    const limit = db ? await startLimit(fake, db) : null;
    if (limit) sides.push(limit);
    const several = processes > 1 ? await startService(fake, processes, false) : null;
    if (several) sides.push(several);
    for (const side of sides) await level(side, fake, WARM_UP, false);
    // Then BENCH_WARMUP rounds (default 3) at the highest level (at most 200) on each side: the
    // service's code takes hundreds of turns to be first optimized. (Re-optimizing after
    // deoptimizations goes on after any warm-up: that part is measured, as a running process pays it.)
    const warmC = Math.min(200, Math.max(...levels));
    for (let i = 0; i < Number(process.env.BENCH_WARMUP ?? 3); i++) for (const side of sides) await level(side, fake, warmC, false);
    // The memory round, an untimed one that re-optimizes what its full GCs deoptimized, then the
    // timed one, reported with the memory of the first.
    const round = async (side: Side, c: number): Promise<LevelResult> => {
      const { memory } = await level(side, fake, c, true);
      await level(side, fake, c, false);
      return { ...(await level(side, fake, c, false)), memory };
    };

    HEADER.forEach((line) => print(line));
    const kinds: string[] = [];
    for (const c of levels) {
      const one = await round(service, c);
      print(tableRow(service, one, '—'));
      if (process.env.BENCH_DEBUG)
        console.error(`C=${c}: send → the model request p50 / p99 ${pct(one.atProvider, 50).toFixed(0)} / ${pct(one.atProvider, 99).toFixed(0)} ms`);
      rows.push([`many sessions at once, C = ${c}: service`, summary(one)]);
      const measured: [Side, LevelResult][] = [[service, one]];
      if (limit) {
        const l = await round(limit, c);
        const ratio = cpuPerTurn(one) / cpuPerTurn(l);
        print(tableRow(limit, l, `service CPU ÷ limit's: ${ratio.toFixed(2)} (≤ 2)`));
        rows.push([`C = ${c}: limit (node:http + pg, one batched INSERT per tick)`, summary(l)]);
        rows.push([`C = ${c}: service CPU per turn ÷ limit's (target ≤ 2 at C = 200)`, ratio.toFixed(2)]);
        measured.push([limit, l]);
      }
      if (several) {
        const m = await round(several, c);
        const ratio = turnsPerSecond(m) / turnsPerSecond(one);
        print(tableRow(several, m, `turns/s ÷ one process's: ${ratio.toFixed(2)} (≥ 1.6)`));
        rows.push([`C = ${c}: ${several.label} (sends split, each stream on the other process)`, summary(m)]);
        rows.push([`C = ${c}: turns/s of ${processes} processes ÷ one process's (target ≥ 1.6)`, ratio.toFixed(2)]);
        measured.push([several, m]);
      }
      for (const [side, r] of measured) {
        for (const [msg, n] of r.logged) console.error(`C=${c}: ${side.label} logged "${msg}" ${n}×`);
        kinds.push(`C=${c}, ${side.label}: ${r.statements.kinds.map(([k, n]) => `${k} ${n.toFixed(2)}`).join(', ')}`);
      }
    }
    if (!limit) {
      print('\nNo limit rows: the limit server needs PostgreSQL (set TEST_DATABASE_URL).');
      rows.push(['many sessions at once: limit', 'PostgreSQL only: set TEST_DATABASE_URL']);
    }
    if (process.env.BENCH_STATEMENTS) print(`\nstatements per turn by kind:\n${kinds.join('\n')}`);
  } finally {
    for (const side of sides) await side.close();
    await fake.close();
  }
  return rows;
}
