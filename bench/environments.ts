// Environments (issue 17): session create → idle with an environment of three small packages
// (two npm packages and one Debian package), the first session (installing) and later ones
// (the cached version mounted as it is), against sessions without an environment.
// Target: the cached start within 20% of a session without an environment (p50).
// Alone: `node --import tsx bench/environments.ts`.
import { pathToFileURL } from 'node:url';
import type { TestServer } from '../test/helpers/server.js';

const SESSIONS = Number(process.env.BENCH_ENVIRONMENT_SESSIONS || 15);
const PACKAGES = { npm: ['left-pad@1.3.0', 'is-number@7.0.0'], apt: ['sl'] };

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));

/** POST /sessions → status idle, as a client sees it (polling GET every 5 ms); the session is deleted after. */
async function createToIdle(s: Pick<TestServer, 'api'>, body: Record<string, unknown>): Promise<number> {
  const started = performance.now();
  const created = await s.api('POST', '/sessions', { body });
  if (created.status !== 201) throw new Error(`session create failed: ${JSON.stringify(created.body)}`);
  const id = created.body.session.id as string;
  let status = created.body.session.status as string;
  while (status !== 'idle') {
    await new Promise((r) => setTimeout(r, 5));
    status = (await s.api('GET', `/sessions/${id}`)).body.session.status;
  }
  const took = performance.now() - started;
  await s.api('DELETE', `/sessions/${id}`);
  return took;
}

export async function environmentBench(s: Pick<TestServer, 'api'>): Promise<[string, string][]> {
  const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
  const env = (await s.api('POST', '/environments', { body: { name: `bench-${Date.now()}`, packages: PACKAGES } })).body;
  await createToIdle(s, { agent: agent.id }); // warm-up (jail probe, egress listener)
  const first = await createToIdle(s, { agent: agent.id, environment_id: env.id });
  // Interleaved, so drift on a shared machine hits both series alike.
  const none: number[] = [];
  const cached: number[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    none.push(await createToIdle(s, { agent: agent.id }));
    cached.push(await createToIdle(s, { agent: agent.id, environment_id: env.id }));
  }
  const ratio = pct(cached, 50) / pct(none, 50);
  return [
    [
      'session create → idle, environment of 3 packages, first (installing)',
      `${ms(first)} ms (npm ${PACKAGES.npm.join(', ')}; apt ${PACKAGES.apt.join(', ')})`,
    ],
    [`session create → idle, same environment cached (${SESSIONS} sessions)`, `p50 ${ms(pct(cached, 50))} ms, p99 ${ms(pct(cached, 99))} ms`],
    [`session create → idle, no environment (${SESSIONS} sessions, interleaved)`, `p50 ${ms(pct(none, 50))} ms, p99 ${ms(pct(none, 99))} ms`],
    ['ratio cached / no environment, p50 (target ≤ 1.20)', ratio.toFixed(2)],
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { startTestServer } = await import('../test/helpers/server.js');
  const s = await startTestServer();
  try {
    for (const [what, value] of await environmentBench(s)) console.log(`${what}: ${value}`);
  } finally {
    await s.stop();
  }
}
