// CLI engines (issue 13): per installed engine, session create → the first agent.message of a
// one-word reply (the fake provider answering at once), p50 over BENCH_ENGINE_TURNS sessions,
// warm (the CLI already in ENGINE_CACHE_DIR: the install is done before timing and reported
// apart); hermes alongside. Targets: warm < 2 s per engine; hermes < 100 ms.
import type { TestServer } from '../test/helpers/server.js';
import { CLI_ENGINE_CASES } from '../test/helpers/cli-engines.js';
import { engineAdapter } from '../src/engines/cli/registry.js';
import { installEngine } from '../src/engines/cli/install.js';
import { currentHarness } from '../src/catalog/catalog.js';

const TURNS = Number(process.env.BENCH_ENGINE_TURNS || 10);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));

/** POST /sessions, wait for idle, send "hi", and time until the first agent.message is in history. */
async function createToFirstMessage(s: TestServer, agentId: string): Promise<{ total: number; fromSend: number }> {
  const started = performance.now();
  const created = await s.api('POST', '/sessions', { body: { agent: agentId } });
  if (created.status !== 201) throw new Error(`session create failed: ${JSON.stringify(created.body)}`);
  const id = created.body.session.id as string;
  while ((await s.api('GET', `/sessions/${id}`)).body.session.status !== 'idle') await new Promise((r) => setTimeout(r, 5));
  const sent = performance.now();
  await s.api('POST', `/sessions/${id}/events`, { body: { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Say ok.' }] }] } });
  const deadline = Date.now() + 120_000;
  for (;;) {
    const events = (await s.api('GET', `/sessions/${id}/events?limit=100`)).body.events as { type: string; error?: { message: string } }[];
    if (events.some((e) => e.type === 'agent.message')) break;
    const failed = events.find((e) => e.type === 'session.error');
    if (failed || Date.now() > deadline) throw new Error(`no agent.message: ${failed?.error?.message ?? 'timed out'}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  const took = { total: performance.now() - started, fromSend: performance.now() - sent };
  await s.api('DELETE', `/sessions/${id}`).catch(() => undefined);
  return took;
}

async function measure(s: TestServer, name: string, agentBody: Record<string, unknown>): Promise<[string, string][]> {
  const agent = (await s.api('POST', '/agents', { body: agentBody })).body.agent;
  await createToFirstMessage(s, agent.id); // warm-up (first sandbox, first CLI start)
  const runs: { total: number; fromSend: number }[] = [];
  for (let i = 0; i < TURNS; i++) runs.push(await createToFirstMessage(s, agent.id));
  const total = runs.map((r) => r.total);
  const fromSend = runs.map((r) => r.fromSend);
  return [
    [`engine ${name}: session create → first agent.message, p50 / max over ${TURNS}`, `${ms(pct(total, 50))} ms / ${ms(Math.max(...total))} ms`],
    [`engine ${name}: of which send → first agent.message (the engine's part), p50`, `${ms(pct(fromSend, 50))} ms`],
  ];
}

/** The server must have the fake provider as both its Anthropic and OpenAI upstream. */
export async function engineBench(s: TestServer): Promise<[string, string][]> {
  const rows: [string, string][] = [];
  rows.push(...await measure(s, 'hermes', { llm: 'claude-sonnet-4-5' }));
  for (const c of CLI_ENGINE_CASES) {
    const adapter = engineAdapter(c.agentType);
    if (!adapter) continue;
    try {
      const t = performance.now();
      await installEngine(adapter.cli, currentHarness(c.agentType));
      rows.push([`engine ${c.agentType}: install or cache check (${adapter.cli.npm}@${currentHarness(c.agentType)})`, `${ms(performance.now() - t)} ms`]);
      rows.push(...await measure(s, c.agentType, { agentType: c.agentType, llm: c.llm }));
    } catch (err) {
      rows.push([`engine ${c.agentType}`, `failed: ${(err as Error).message.slice(0, 200)}`]);
    }
  }
  return rows;
}
