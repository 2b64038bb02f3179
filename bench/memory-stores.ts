// Memory stores (issue #30): session create → idle with one mounted store of 1,000 memories
// against the same session without the store (target: p50 within 20 %; the store is written in
// before the first turn, whose write-in is measured too), and the read-back of
// 100 memories a turn changed (the sync after a turn, `syncMemoryMountsBack`: the mount's files
// compared with what it was given, 100 new versions by the session in one transaction; target
// p50 < 200 ms on the embedded defaults). The files are changed in the sandbox's workspace as a
// tool would, between two read-backs.
// Alone: `node --import tsx bench/memory-stores.ts`.
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TestServer } from '../test/helpers/server.js';
import { sandboxDriver } from '../src/sandbox/current-driver.js';
import { syncMemoryMountsBack, syncMemoryMountsIn } from '../src/memory/mount.js';
import { prisma } from '../src/db/client.js';

const SESSIONS = Number(process.env.BENCH_MEMORY_SESSIONS || 15);
const MEMORIES = 1000;
const CHANGED = 100;
const SYNC_ROUNDS = Number(process.env.BENCH_MEMORY_SYNC_ROUNDS || 15);
const WRITE_INS = Number(process.env.BENCH_MEMORY_WRITE_INS || 5);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));

/** POST /sessions → status idle, as a client sees it (polling GET every 5 ms); returns the time and the session. */
async function createToIdle(s: Pick<TestServer, 'api'>, body: Record<string, unknown>): Promise<{ took: number; id: string }> {
  const started = performance.now();
  const created = await s.api('POST', '/sessions', { body });
  if (created.status !== 201) throw new Error(`session create failed: ${JSON.stringify(created.body)}`);
  const id = created.body.session.id as string;
  let status = created.body.session.status as string;
  while (status !== 'idle') {
    await new Promise((r) => setTimeout(r, 5));
    status = (await s.api('GET', `/sessions/${id}`)).body.session.status;
  }
  return { took: performance.now() - started, id };
}

/** A note of about 300 bytes, like an agent's. */
const note = (i: number, round: number) => `# note ${i}\n\nround ${round}: ${'the user prefers short answers and tabs. '.repeat(7)}\n`;

export async function memoryStoreBench(s: Pick<TestServer, 'api'>): Promise<[string, string][]> {
  const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
  const store = (await s.api('POST', '/memory-stores', { body: { name: `bench-${Date.now()}`, description: 'bench' } })).body;
  for (let i = 0; i < MEMORIES; i += 25) {
    await Promise.all(
      Array.from({ length: 25 }, async (_, k) => {
        const res = await s.api('POST', `/memory-stores/${store.id}/memories`, {
          body: { path: `/topic-${(i + k) % 20}/note-${i + k}.md`, content: note(i + k, 0) },
        });
        if (res.status !== 201) throw new Error(`memory create failed: ${JSON.stringify(res.body)}`);
      }),
    );
  }
  const mounted = { agent: agent.id, resources: [{ type: 'memory_store', memory_store_id: store.id }] };
  const drop = (id: string) => s.api('DELETE', `/sessions/${id}`);
  await drop((await createToIdle(s, { agent: agent.id })).id); // warm-up (jail probe, egress listener)
  await drop((await createToIdle(s, mounted)).id);
  // Interleaved, so drift on a shared machine hits both series alike.
  const none: number[] = [];
  const withStore: number[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const a = await createToIdle(s, { agent: agent.id });
    none.push(a.took);
    await drop(a.id);
    const b = await createToIdle(s, mounted);
    withStore.push(b.took);
    await drop(b.id);
  }

  // The first turn's write-in of the whole store (the start leaves it to the first turn).
  const writeIn: number[] = [];
  for (let i = 0; i < WRITE_INS; i++) {
    const fresh = await createToIdle(s, mounted);
    const sandbox = (await sandboxDriver().get(fresh.id))!;
    const started = performance.now();
    await syncMemoryMountsIn(fresh.id, sandbox);
    writeIn.push(performance.now() - started);
    await drop(fresh.id);
  }

  // The read-back of 100 changed memories.
  const { id } = await createToIdle(s, mounted);
  const sandbox = await sandboxDriver().get(id);
  if (!sandbox?.hostWorkspace) throw new Error('the bench needs a sandbox with a host workspace (the local driver)');
  await syncMemoryMountsIn(id, sandbox);
  const dir = path.join(sandbox.hostWorkspace, 'memory', store.name);
  const sync: number[] = [];
  for (let round = 1; round <= SYNC_ROUNDS; round++) {
    for (let k = 0; k < CHANGED; k++) {
      const i = (round * CHANGED + k) % MEMORIES;
      await fs.writeFile(path.join(dir, `topic-${i % 20}`, `note-${i}.md`), note(i, round));
    }
    const started = performance.now();
    await syncMemoryMountsBack(id, round);
    sync.push(performance.now() - started);
  }
  const versions = await prisma.memoryVersion.count({ where: { storeId: store.id, actorType: 'session', actorId: id } });
  if (versions !== SYNC_ROUNDS * CHANGED) throw new Error(`the read-backs stored ${versions} versions, not ${SYNC_ROUNDS * CHANGED}`);
  await drop(id);

  const ratio = pct(withStore, 50) / pct(none, 50);
  return [
    [
      `session create → idle, one mounted store of ${MEMORIES} memories (${SESSIONS} sessions)`,
      `p50 ${ms(pct(withStore, 50))} ms, p99 ${ms(pct(withStore, 99))} ms`,
    ],
    [`session create → idle, no store (${SESSIONS} sessions, interleaved)`, `p50 ${ms(pct(none, 50))} ms, p99 ${ms(pct(none, 99))} ms`],
    ['ratio with store / without, p50 (target ≤ 1.20)', ratio.toFixed(2)],
    [`first turn's write-in of the store's ${MEMORIES} memories (${WRITE_INS} sessions)`, `p50 ${ms(pct(writeIn, 50))} ms, p99 ${ms(pct(writeIn, 99))} ms`],
    [
      `read-back of ${CHANGED} changed memories after a turn (${SYNC_ROUNDS} rounds, store of ${MEMORIES}; target p50 < 200 ms)`,
      `p50 ${ms(pct(sync, 50))} ms, p99 ${ms(pct(sync, 99))} ms`,
    ],
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { startTestServer } = await import('../test/helpers/server.js');
  const s = await startTestServer();
  try {
    for (const [what, value] of await memoryStoreBench(s)) console.log(`${what}: ${value}`);
  } finally {
    await s.stop();
  }
}
