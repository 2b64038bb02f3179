// `node --expose-gc --import tsx bench/latency.ts`: the two latency measurements of issues #10
// and #13 alone (no REST load before them): send (202) → first SSE frame (bench/first-frame.ts)
// and hermes session create → first agent.message (bench/engines.ts, hermes only).
// TEST_DATABASE_URL / TEST_REDIS_URL run it on PostgreSQL and Redis; BENCH_ONLY=frame skips hermes;
// BENCH_ONLY=engines runs every installed CLI engine's row of bench/engines.ts (hermes alongside) alone.
import os from 'node:os';
import { startTestServer } from '../test/helpers/server.js';
import { startFakeProvider } from '../test/fake-provider/server.js';
import { firstFrameBench, startFrameLimit } from './first-frame.js';
import { engineBench, hermesBench } from './engines.js';

const fake = await startFakeProvider();
const s = await startTestServer({
  anthropicApiKey: 'bench',
  anthropicBaseUrl: fake.anthropicBaseUrl,
  openaiApiKey: 'bench',
  openaiBaseUrl: fake.openaiBaseUrl,
});
const agent = (await s.api('POST', '/agents', { body: { displayName: 'Bench', prompt: 'p' } })).body.agent;
const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(1))
    .join(' ');
const rows: [string, string][] = [['load average at start', load()]];
if (process.env.BENCH_ONLY === 'engines') rows.push(...(await engineBench(s)));
else {
  const limit = await startFrameLimit(s, agent.id);
  rows.push(...(await firstFrameBench(s, fake, agent.id, limit)));
  await limit?.close();
  if (process.env.BENCH_ONLY !== 'frame') rows.push(...(await hermesBench(s)));
}
rows.push(['load average at end', load()]);
console.log(
  `\n| measurement (${process.env.TEST_DATABASE_URL ? 'PostgreSQL' : 'PGlite'}${process.env.TEST_REDIS_URL ? ' + Redis' : ''}) | result |\n|---|---|`,
);
for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
await s.stop();
await fake.close();
process.exit(0);
