// CLI engines (issue 13): per installed engine, session create → the first agent.message of a
// one-word reply (the fake provider answering at once) as its frame arrives on the session's SSE
// stream, p50 over BENCH_ENGINE_TURNS sessions: cold (the first session after start) and warm (the
// CLI already in ENGINE_CACHE_DIR, the install done before timing and reported apart; for an
// engine run as the sandbox's server, a spare sandbox ready, as it is when sessions come slower
// than one per refill — the refill time and a back-to-back burst are reported too); hermes
// alongside. Targets: warm < 2 s per engine; hermes < 100 ms.
import type { TestServer } from '../test/helpers/server.js';
import { CLI_ENGINE_CASES } from '../test/helpers/cli-engines.js';
import { engineAdapter } from '../src/engines/cli/registry.js';
import { installEngine } from '../src/engines/cli/core/install.js';
import { currentHarness } from '../src/catalog/catalog.js';
import { openStream, sendText } from './first-frame.js';
import { warmSandboxes } from '../src/runtime/warm-sandboxes.js';

const TURNS = Number(process.env.BENCH_ENGINE_TURNS || 10);
/** BENCH_ENGINES=opencode,pi: only these (hermes always runs). */
const ONLY = process.env.BENCH_ENGINES ? new Set(process.env.BENCH_ENGINES.split(',')) : null;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));

/**
 * Session create → the first agent.message frame on the session's SSE stream. `initial`: the
 * message goes in the create call (`initial_events`, the first turn starts in the same call);
 * otherwise it is sent (POST /sessions/{id}/events) right after the create answer, without
 * waiting for idle (a turn sent while provisioning waits for it, as the spec says).
 */
async function createToFirstMessage(s: TestServer, agentId: string, initial: boolean): Promise<{ total: number; fromSend: number }> {
  const message = { type: 'user.message', content: [{ type: 'text', text: 'Say ok.' }] };
  const started = performance.now();
  const created = await s.api('POST', '/sessions', { body: { agent: agentId, ...(initial ? { initial_events: [message] } : {}) } });
  if (created.status !== 201) throw new Error(`session create failed: ${JSON.stringify(created.body)}`);
  const id = created.body.session.id as string;
  let sent = started;
  let close = () => {};
  let timer: NodeJS.Timeout | undefined;
  let idle!: () => void;
  const turnOver = new Promise<void>((r) => (idle = r));
  const first = new Promise<number>((resolve, reject) => {
    timer = setTimeout(() => reject(new Error('no agent.message within 120 s')), 120_000);
    void openStream(s, id, (type, at, data) => {
      if (type === 'agent.message') resolve(at);
      if (type === 'session.error') reject(new Error(`no agent.message: ${data.slice(0, 300)}`));
      if (type === 'session.status_idle') idle();
    }).then((c) => (close = c), reject);
  });
  first.catch(() => undefined); // awaited below; a rejection during the send is not unhandled
  if (!initial) {
    sent = performance.now();
    await sendText(s, id, 'Say ok.');
  }
  try {
    const at = await first;
    await turnOver; // the session is deleted once idle (a running one refuses)
    return { total: at - started, fromSend: at - sent };
  } finally {
    clearTimeout(timer);
    close();
    await s.api('DELETE', `/sessions/${id}`).catch(() => undefined);
  }
}

/**
 * An engine whose CLI runs as the sandbox's server gets a spare sandbox after each session create
 * (src/runtime/warm-sandboxes.ts): waits until one is ready and says how long that took (null
 * for an engine without spares).
 */
async function spareReady(agentType: string): Promise<number | null> {
  if (!engineAdapter(agentType)?.server) return null;
  const started = performance.now();
  while (!warmSandboxes().spares().length) {
    if (performance.now() - started > 120_000) throw new Error('no spare sandbox within 120 s');
    await new Promise((r) => setTimeout(r, 50));
  }
  return performance.now() - started;
}

async function measure(s: TestServer, name: string, agentBody: Record<string, unknown>): Promise<[string, string][]> {
  const agent = (await s.api('POST', '/agents', { body: agentBody })).body.agent;
  const type = String(agentBody.agentType ?? 'hermes');
  const cold = await createToFirstMessage(s, agent.id, true); // the first session: first sandbox, first CLI start (install excluded)
  const runs: { total: number; fromSend: number }[] = [];
  const sentAfter: { total: number; fromSend: number }[] = [];
  const refills: number[] = [];
  const waitForSpare = async () => {
    const waited = await spareReady(type);
    if (waited !== null) refills.push(waited);
  };
  for (let i = 0; i < TURNS; i++) {
    await waitForSpare();
    runs.push(await createToFirstMessage(s, agent.id, true));
    await waitForSpare();
    sentAfter.push(await createToFirstMessage(s, agent.id, false));
  }
  const total = runs.map((r) => r.total);
  const split = sentAfter.map((r) => r.total);
  const rows: [string, string][] = [
    [`engine ${name}: cold — the first session after start (install excluded), create → first agent.message`, `${ms(cold.total)} ms`],
    [
      `engine ${name}: warm — session create (initial_events) → first agent.message on the stream, p50 / max over ${TURNS}`,
      `${ms(pct(total, 50))} ms / ${ms(Math.max(...total))} ms`,
    ],
    [
      `engine ${name}: warm — create, then send at once → first agent.message, p50 (of which from the send)`,
      `${ms(pct(split, 50))} ms (${ms(
        pct(
          sentAfter.map((r) => r.fromSend),
          50,
        ),
      )} ms)`,
    ],
  ];
  if (refills.length) {
    // Sessions faster than spares are made: the pool holds one per engine version.
    const burst: number[] = [];
    for (let i = 0; i < TURNS; i++) burst.push((await createToFirstMessage(s, agent.id, true)).total);
    rows.push(
      [`engine ${name}: the next spare ready after a session took one (server start + warm-up), p50`, `${ms(pct(refills, 50))} ms`],
      [`engine ${name}: ${TURNS} sessions back to back, not waiting for spares, p50 / max`, `${ms(pct(burst, 50))} ms / ${ms(Math.max(...burst))} ms`],
    );
  }
  return rows;
}

/** hermes alone (bench/latency.ts). */
export async function hermesBench(s: TestServer): Promise<[string, string][]> {
  return measure(s, 'hermes', { llm: 'claude-sonnet-4-5' });
}

/** The server must have the fake provider as both its Anthropic and OpenAI upstream. */
export async function engineBench(s: TestServer): Promise<[string, string][]> {
  const rows: [string, string][] = [];
  rows.push(...(await hermesBench(s)));
  for (const c of CLI_ENGINE_CASES) {
    const adapter = engineAdapter(c.agentType);
    if (!adapter || (ONLY && !ONLY.has(c.agentType))) continue;
    try {
      const t = performance.now();
      await installEngine(adapter.cli, currentHarness(c.agentType));
      rows.push([`engine ${c.agentType}: install or cache check (${adapter.cli.npm}@${currentHarness(c.agentType)})`, `${ms(performance.now() - t)} ms`]);
      rows.push(...(await measure(s, c.agentType, { agentType: c.agentType, llm: c.llm })));
    } catch (err) {
      rows.push([`engine ${c.agentType}`, `failed: ${(err as Error).message.slice(0, 200)}`]);
    }
  }
  return rows;
}
