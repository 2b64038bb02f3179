// Long sessions (issue #31), on the fake provider with usage counted from the requests
// (fake.promptCache.simulate: 4 characters a token, Anthropic's cache semantics and the
// catalog's prices):
//  a. a 20-turn hermes session (each turn: a ~2,000-character message, a tool call, an answer)
//     with prompt caching and the same session with PROMPT_CACHING=off, side by side: list input
//     cost (input + cache reads + cache writes) from turn 3 on, and the whole list cost.
//  b. compaction latency beyond the summary call: fitContext on sessions of 20 stored turns
//     with a summary call that answers at once, so what is timed is compaction's own work
//     (reading the conversation, choosing the cut, the transcript, storing session.compacted,
//     rebuilding the messages). Target p50 < 20 ms.
import type { TestServer } from '../test/helpers/server.js';
import type { FakeProvider } from '../test/fake-provider/server.js';
import { prisma } from '../src/db/client.js';
import { commitEvent, commitEvents, type NewEvent } from '../src/events/store.js';
import { fitContext } from '../src/engines/hermes/compaction.js';
import { buildConversation, conversationRows } from '../src/engines/hermes/history.js';
import type { ModelEvent } from '../src/gateway/types.js';

const TURNS = 20;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const words = (marker: string, chars: number) => `${marker} ${'the quick brown fox jumps over the lazy dog '.repeat(Math.ceil(chars / 44))}`.slice(0, chars);

async function waitIdle(s: TestServer, sessionId: string, count: number): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    const rows = await prisma.sessionEvent.count({ where: { sessionId, type: 'session.status_idle' } });
    if (rows >= count) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('turn did not end');
}

/** Per-turn list input cost (nano-dollars) of a 20-turn session. */
async function twentyTurns(s: TestServer, fake: FakeProvider, caching: boolean): Promise<{ input: bigint[]; total: bigint }> {
  if (caching) delete process.env.PROMPT_CACHING;
  else process.env.PROMPT_CACHING = 'off';
  try {
    const agent = (await s.api('POST', '/agents', { body: { prompt: words('You are a careful engineer.', 4000) } })).body.agent;
    const session = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body.session;
    for (let t = 1; t <= TURNS; t++) {
      fake.enqueue(
        { kind: 'tool_call', name: 'write_file', input: { path: `notes/${t}.txt`, content: words(`note ${t}`, 600) } },
        { kind: 'text', text: words(`answer ${t}`, 400) },
      );
      await s.api('POST', `/sessions/${session.id}/events`, {
        body: { events: [{ type: 'user.message', content: [{ type: 'text', text: words(`request ${t}`, 2000) }] }] },
      });
      await waitIdle(s, session.id, t);
    }
    const rows = await prisma.modelUsage.findMany({ where: { sessionId: session.id }, orderBy: { id: 'asc' } });
    // claude-sonnet-4-5 (the default): $3 input, $0.30 cache read, $3.75 cache write per million tokens.
    const input: bigint[] = [];
    for (const r of rows) {
      const i = r.turn - 1;
      input[i] = (input[i] ?? 0n) + BigInt(r.inputTokens) * 3000n + BigInt(r.cacheReadTokens) * 300n + BigInt(r.cacheWriteTokens) * 3750n;
    }
    return { input, total: rows.reduce((n, r) => n + r.costNanoUsd, 0n) };
  } finally {
    delete process.env.PROMPT_CACHING;
  }
}

const usd = (nano: bigint) => `$${(Number(nano) / 1e9).toFixed(4)}`;

async function* instantSummary(): AsyncIterable<ModelEvent> {
  yield { type: 'text_delta', text: 'Summary: the user asked for notes; the agent wrote them.' };
  yield { type: 'stop', reason: 'end_turn' };
}

export async function longSessionBench(s: TestServer, fake: FakeProvider): Promise<[string, string][]> {
  fake.reset();
  fake.promptCache.simulate = true;
  const off = await twentyTurns(s, fake, false);
  fake.promptCache.entries.clear();
  const on = await twentyTurns(s, fake, true);
  fake.reset();
  const from3 = (x: bigint[]) => x.slice(2).reduce((n, v) => n + v, 0n);
  const saving = 1 - Number(from3(on.input)) / Number(from3(off.input));

  // b. compaction's own time, on sessions of 20 stored turns (inserted directly).
  const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
  const own: number[] = [];
  const floor: number[] = []; // baseline: reading the conversation's rows + storing one event, nothing else
  const parts = { read: [] as number[], store: [] as number[] };
  for (let n = 0; n < 25; n++) {
    const session = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body.session;
    const events: NewEvent[] = [];
    for (let t = 1; t <= TURNS; t++) {
      events.push({ type: 'user.message', fields: { content: [{ type: 'text', text: words(`request ${t}`, 2000) }] }, turn: t });
      events.push({
        type: 'agent.message',
        fields: {
          messageId: `msg_${n}_${t}`,
          final: true,
          parts: [{ type: 'text', index: 0, text: words(`answer ${t}`, 400), stream_id: null, stream_index: null }],
          text: words(`answer ${t}`, 400),
        },
        turn: t,
      });
    }
    await commitEvents(session.id, events);
    const turn = TURNS + 1;
    await commitEvent(session.id, { type: 'user.message', fields: { content: [{ type: 'text', text: 'and now?' }] }, turn });
    const messages = await buildConversation(session.id, turn);
    let inCall = 0;
    const started = performance.now();
    await fitContext(
      {
        sessionId: session.id,
        turn,
        request: { provider: 'anthropic', model: 'claude-sonnet-4-5', system: 'You are a careful engineer.', maxTokens: 8192 },
        emit: (ev) => commitEvent(session.id, { ...ev, turn } as NewEvent),
        signal: new AbortController().signal,
        callModel: () => {
          const t0 = performance.now();
          return (async function* () {
            yield* instantSummary();
            inCall += performance.now() - t0;
          })();
        },
      },
      messages,
      [],
      'user',
    );
    if (n >= 5) own.push(performance.now() - started - inCall); // the first five warm up
    const b0 = performance.now();
    await conversationRows(session.id, turn);
    const b1 = performance.now();
    await commitEvent(session.id, { type: 'agent.status', fields: { part: { type: 'status', index: 0, level: 'working', text: 'baseline' } }, turn });
    const b2 = performance.now();
    if (n >= 5) {
      floor.push(b2 - b0);
      parts.read.push(b1 - b0);
      parts.store.push(b2 - b1);
    }
  }
  return [
    [
      'long sessions: 20-turn hermes session, list input cost from turn 3 (caching off → on)',
      `${usd(from3(off.input))} → ${usd(from3(on.input))} (${(saving * 100).toFixed(1)} % lower; target ≥ 50 %)`,
    ],
    ['long sessions: whole 20-turn list cost (caching off → on)', `${usd(off.total)} → ${usd(on.total)}`],
    [
      'long sessions: compaction beyond the summary call (20 stored turns), p50 / p99',
      `${pct(own, 50).toFixed(1)} / ${pct(own, 99).toFixed(1)} ms (target p50 < 20 ms)`,
    ],
    [
      'long sessions: baseline, the same rows read + one event stored, p50 (read / store)',
      `${pct(floor, 50).toFixed(1)} ms (${pct(parts.read, 50).toFixed(1)} / ${pct(parts.store, 50).toFixed(1)} ms)`,
    ],
  ];
}
