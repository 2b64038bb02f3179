// Long-lived sessions that cost little (issue #31 parts 1-3), end to end on the fake provider.
// Prompt caching: hermes marks Anthropic requests with cache breakpoints and gives OpenAI
// requests a per-session cache key; the fake provider caches prefixes as the providers do and
// reports reads and writes; the gateway prices them exactly. Usage per turn: the idle event
// carries the sum of the turn's metered calls; the session (REST, GraphQL) its totals.
// Compaction: driven past the (capped) context window, hermes summarises older turns instead of
// failing; user.compact; a lone message over the window; budgets stop exactly with both on.
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import type { FakeProvider } from '../fake-provider/server.js';
import { history, readySession, sendText, waitForEvents, withServerOnFakeProvider } from '../helpers/sessions.js';
import { prisma } from '../../src/db/client.js';

let s: TestServer;
let fake: FakeProvider;
withServerOnFakeProvider((started) => ({ s, fake } = started), { openai: true });
beforeEach(() => {
  fake.promptCache.simulate = true;
});

/** The request without its cache markers (markers are not content: the cache ignores them). */
const bare = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(bare)
    : v && typeof v === 'object'
      ? Object.fromEntries(Object.entries(v).flatMap(([k, x]) => (k === 'cache_control' ? [] : [[k, bare(x)]])))
      : v;
const marked = (blocks: any[]) => blocks.filter((b) => b.cache_control).length;

const usageRows = (sessionId: string) => prisma.modelUsage.findMany({ where: { sessionId }, orderBy: { id: 'asc' } });

describe('Anthropic: cache_control breakpoints', () => {
  it('marks system+tools and the moving tail; the prefix is byte-identical across calls and turns; reads are priced at the cache price', async () => {
    const { session } = await readySession(s);
    fake.enqueue(
      { kind: 'tool_call', name: 'write_file', input: { path: 'a.txt', content: 'alpha' } },
      { kind: 'text', text: 'Wrote a.txt.' },
      { kind: 'text', text: 'Second turn answer.' },
    );
    await sendText(s, session.id, 'write a.txt');
    await waitForEvents(s, session.id, 'session.status_idle');
    await sendText(s, session.id, 'and now?');
    await waitForEvents(s, session.id, 'session.status_idle', 2);
    const bodies = fake.requests.filter((r) => r.path === '/v1/messages').map((r) => r.body);
    expect(bodies).toHaveLength(3);
    for (const body of bodies) {
      // One breakpoint on the system prompt (it caches the tools before it too), the same bytes every call.
      expect(body.system).toEqual([{ type: 'text', text: expect.stringContaining('/workspace'), cache_control: { type: 'ephemeral' } }]);
      expect(JSON.stringify([body.tools, body.system])).toBe(JSON.stringify([bodies[0].tools, bodies[0].system]));
      // The moving tail: the last block of the last message carries a breakpoint.
      expect(body.messages.at(-1).content.at(-1).cache_control).toEqual({ type: 'ephemeral' });
      const breakpoints = 1 + body.messages.reduce((n: number, m: any) => n + marked(m.content), 0);
      expect(breakpoints).toBeLessThanOrEqual(4); // the API's limit
    }
    // Each later call starts with the whole previous request, byte for byte (markers aside).
    for (let i = 1; i < bodies.length; i++) {
      const prev = JSON.stringify(bare(bodies[i - 1].messages)).slice(0, -1);
      expect(JSON.stringify(bare(bodies[i].messages)).startsWith(prev)).toBe(true);
      // The previous tail (where the last call wrote its cache entry) is still marked.
      const at = bodies[i - 1].messages.length - 1;
      expect(bodies[i].messages[at].content.at(-1).cache_control).toEqual({ type: 'ephemeral' });
    }
    // The provider read from the cache what the previous call wrote; each counter priced at its own rate.
    const rows = await usageRows(session.id);
    expect(rows).toHaveLength(3);
    expect(rows[0]!.cacheReadTokens).toBe(0);
    expect(rows[0]!.cacheWriteTokens).toBeGreaterThan(0);
    for (let i = 1; i < rows.length; i++) {
      expect(rows[i]!.cacheReadTokens).toBe(rows[i - 1]!.cacheReadTokens + rows[i - 1]!.cacheWriteTokens);
      expect(rows[i]!.cacheReadTokens).toBeGreaterThan(rows[i]!.inputTokens);
    }
    // claude-sonnet-4-5: $3 input, $15 output, $0.30 cache read, $3.75 cache write per million tokens.
    for (const r of rows)
      expect(r.costNanoUsd).toBe(
        BigInt(r.inputTokens) * 3000n + BigInt(r.outputTokens) * 15000n + BigInt(r.cacheReadTokens) * 300n + BigInt(r.cacheWriteTokens) * 3750n,
      );
    const row = await prisma.session.findUniqueOrThrow({ where: { id: session.id } });
    expect(row.consumedNanoUsd).toBe(rows.reduce((n, r) => n + r.costNanoUsd, 0n));
  });

  it('PROMPT_CACHING=off: no breakpoints, nothing cached', async () => {
    process.env.PROMPT_CACHING = 'off';
    try {
      const { session } = await readySession(s);
      fake.enqueue({ kind: 'text', text: 'one' }, { kind: 'text', text: 'two' });
      await sendText(s, session.id, 'first');
      await waitForEvents(s, session.id, 'session.status_idle');
      await sendText(s, session.id, 'second');
      await waitForEvents(s, session.id, 'session.status_idle', 2);
      for (const r of fake.requests) {
        expect(typeof r.body.system).toBe('string');
        expect(JSON.stringify(r.body)).not.toContain('cache_control');
      }
      const rows = await usageRows(session.id);
      expect(rows.map((r) => r.cacheReadTokens + r.cacheWriteTokens)).toEqual([0, 0]);
    } finally {
      delete process.env.PROMPT_CACHING;
    }
  });
});

describe('OpenAI: a stable per-session prompt_cache_key', () => {
  for (const [model, path] of [
    ['gpt-4.1', '/v1/chat/completions'],
    ['gpt-5', '/v1/responses'],
  ] as const) {
    it(`${model} (${path}): every call carries the session's key; cached_tokens priced at the cache price`, async () => {
      const { session } = await readySession(s, { llm: model });
      fake.enqueue({ kind: 'text', text: 'first answer' }, { kind: 'text', text: 'second answer' });
      await sendText(s, session.id, 'one');
      await waitForEvents(s, session.id, 'session.status_idle');
      await sendText(s, session.id, 'two');
      await waitForEvents(s, session.id, 'session.status_idle', 2);
      const calls = fake.requests.filter((r) => r.path === path);
      expect(calls).toHaveLength(2);
      expect(calls.map((r) => r.body.prompt_cache_key)).toEqual([session.id, session.id]);
      const rows = await usageRows(session.id);
      expect(rows[0]!.cacheReadTokens).toBe(0);
      expect(rows[1]!.cacheReadTokens).toBeGreaterThan(0);
      // OpenAI counts cached tokens inside the prompt: the gateway bills them once, at the cache price.
      const price = model === 'gpt-4.1' ? { input: 2000n, output: 8000n, read: 500n } : { input: 1250n, output: 10000n, read: 125n };
      for (const r of rows)
        expect(r.costNanoUsd).toBe(BigInt(r.inputTokens) * price.input + BigInt(r.outputTokens) * price.output + BigInt(r.cacheReadTokens) * price.read);
    });
  }
});

describe('usage per turn and per session', () => {
  it("session.status_idle carries the sum of its turn's metered calls; REST and GraphQL give the session's totals", async () => {
    const { session } = await readySession(s);
    fake.enqueue(
      { kind: 'tool_call', name: 'bash', input: { command: 'echo hi' } },
      { kind: 'tool_call', name: 'write_file', input: { path: 'b.txt', content: 'beta' } },
      { kind: 'text', text: 'Done with both.' },
      { kind: 'text', text: 'A short second turn.' },
    );
    await sendText(s, session.id, 'two tools please');
    const first = (await waitForEvents(s, session.id, 'session.status_idle')).at(-1);
    await sendText(s, session.id, 'again');
    const second = (await waitForEvents(s, session.id, 'session.status_idle', 2)).filter((e) => e.type === 'session.status_idle').at(-1);
    const rows = await usageRows(session.id);
    const sum = (turn: number | null) => {
      const rs = rows.filter((r) => turn === null || r.turn === turn);
      const nano = rs.reduce((n, r) => n + r.costNanoUsd, 0n);
      return {
        input_tokens: rs.reduce((n, r) => n + r.inputTokens, 0),
        output_tokens: rs.reduce((n, r) => n + r.outputTokens, 0),
        cache_read_input_tokens: rs.reduce((n, r) => n + r.cacheReadTokens, 0),
        cache_creation_input_tokens: rs.reduce((n, r) => n + r.cacheWriteTokens, 0),
        cost: { amount: (nano / 10_000_000n).toString(), currency: 'USD' },
        cost_usd: `${nano / 1_000_000_000n}.${(nano % 1_000_000_000n).toString().padStart(9, '0')}`,
        model_calls: rs.length,
      };
    };
    const turns = [...new Set(rows.map((r) => r.turn))].sort((a, b) => a - b);
    expect(turns).toHaveLength(2);
    expect(first.stop_reason).toEqual({ type: 'end_turn' });
    expect(first.usage).toEqual({ ...sum(turns[0]!), model_calls: 3, tool_calls: 2, duration_ms: expect.any(Number) });
    expect(second.usage).toEqual({ ...sum(turns[1]!), model_calls: 1, tool_calls: 0, duration_ms: expect.any(Number) });
    expect(first.usage.cache_read_input_tokens).toBeGreaterThan(0); // the turn's later calls read the cache
    expect(first.usage.duration_ms).toBeGreaterThan(0);

    const total = { ...sum(null), tool_calls: 2 };
    const detail = (await s.api('GET', `/sessions/${session.id}`)).body.session;
    expect(detail.usage).toEqual(total);
    const row = await prisma.session.findUniqueOrThrow({ where: { id: session.id } });
    expect(detail.usage.cost_usd).toBe(total.cost_usd);
    expect(BigInt(detail.usage.cost_usd.replace('.', ''))).toBe(row.consumedNanoUsd);
    const gql = await s.gql(
      `query($id: String!) { session(id: $id) { usage { inputTokens outputTokens cacheReadInputTokens cacheCreationInputTokens cost { amount currency } costUsd modelCalls toolCalls } } }`,
      { id: session.id },
    );
    expect(gql.body.errors).toBeUndefined();
    expect(gql.body.data.session.usage).toEqual({
      inputTokens: total.input_tokens,
      outputTokens: total.output_tokens,
      cacheReadInputTokens: total.cache_read_input_tokens,
      cacheCreationInputTokens: total.cache_creation_input_tokens,
      cost: total.cost,
      costUsd: total.cost_usd,
      modelCalls: total.model_calls,
      toolCalls: 2,
    });
    // The list shows the same totals.
    const listed = (await s.api('GET', '/sessions')).body;
    const mine = (listed.sessions ?? listed.data ?? []).find((x: any) => x.id === session.id);
    if (mine) expect(mine.usage).toEqual(total);
  });
});

const WINDOW = 4000; // tokens: CONTEXT_WINDOW_CAP for the service, the fake provider's context size
const padded = (marker: string, chars = 3000) => `${marker} ${'lorem ipsum dolor sit amet '.repeat(Math.ceil(chars / 27))}`.slice(0, chars);
const isSummaryCall = (r: { body: any }) => JSON.stringify(r.body.system ?? '').includes('You compact the history');

describe('compaction', () => {
  beforeEach(() => {
    process.env.CONTEXT_WINDOW_CAP = String(WINDOW);
    fake.promptCache.contextWindow = WINDOW;
  });
  afterAll(() => {
    delete process.env.CONTEXT_WINDOW_CAP;
  });

  it('a conversation driven past the window is summarised (metered) instead of failing; later calls send summary + tail; history keeps every event', async () => {
    const { session } = await readySession(s);
    const answers: string[] = [];
    for (let n = 1; n <= 5; n++) {
      // The summary call, when one comes, takes the first scripted answer of its turn.
      fake.enqueue(...(n === 4 ? [{ kind: 'text' as const, text: 'SUMMARY-ONE: turns 1 to 3 were about markers.' }] : []), {
        kind: 'text',
        text: `answer ${n}`,
      });
      await sendText(s, session.id, padded(`marker-${n}`));
      const events = await waitForEvents(s, session.id, 'session.status_idle', n, 20_000);
      answers.push(events.filter((e) => e.type === 'agent.message' && e.final).at(-1).text);
    }
    expect(answers).toEqual(['answer 1', 'answer 2', 'answer 3', 'answer 4', 'answer 5']);
    const all = await history(s, session.id);
    expect(all.filter((e) => e.type === 'session.error')).toEqual([]);
    // History keeps every original event, and the compaction between them.
    expect(all.filter((e) => e.type === 'user.message')).toHaveLength(5);
    expect(all.filter((e) => e.type === 'agent.message' && e.final)).toHaveLength(5);
    const compactions = all.filter((e) => e.type === 'session.compacted');
    expect(compactions).toHaveLength(1);
    const c = compactions[0];
    const firstUser = all.find((e) => e.type === 'user.message');
    const thirdAnswer = all.filter((e) => e.type === 'agent.message' && e.final)[2];
    expect(c).toMatchObject({
      summary: 'SUMMARY-ONE: turns 1 to 3 were about markers.',
      replaces: { from_event_id: firstUser.id, to_event_id: thirdAnswer.id },
      trigger: 'auto',
    });
    expect(c.replaced_events).toBe(
      all
        .slice(0, all.indexOf(thirdAnswer) + 1)
        .filter((e) => ['user.message', 'agent.message', 'agent.reasoning', 'agent.tool_use', 'agent.tool_result', 'system.message'].includes(e.type)).length,
    );
    expect(c.tokens_after).toBeLessThan(c.tokens_before);
    // The summary call: the same model, the replaced turns as its input, metered in the turn.
    const summaryCalls = fake.requests.filter(isSummaryCall);
    expect(summaryCalls).toHaveLength(1);
    expect(summaryCalls[0]!.body.model).toBe('claude-sonnet-4-5');
    const asked = JSON.stringify(summaryCalls[0]!.body.messages);
    for (const m of ['answer 1', 'marker-2', 'marker-3', 'answer 3']) expect(asked).toContain(m);
    expect(asked).toContain('[the oldest part is omitted]'); // the transcript itself must fit the window: its latest part is kept
    expect(asked).not.toContain('marker-4');
    const idles = all.filter((e) => e.type === 'session.status_idle');
    expect(idles[3].usage.model_calls).toBe(2); // the summary and the answer
    const rows = await usageRows(session.id);
    expect(rows).toHaveLength(6);
    // Later calls: summary + the kept tail, never the replaced turns; none refused by the provider.
    const calls = fake.requests.filter((r) => !isSummaryCall(r));
    for (const r of calls.slice(3)) {
      const sent = JSON.stringify(r.body.messages);
      expect(sent).toContain('SUMMARY-ONE');
      expect(sent).not.toContain('marker-1');
      expect(sent).not.toContain('marker-3');
      expect(sent).toContain('marker-4');
    }
    expect(JSON.stringify(calls.at(-1)!.body.messages)).toContain('marker-5');
  });

  it('user.compact summarises every turn before it at once', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'text', text: 'one' }, { kind: 'text', text: 'two' });
    await sendText(s, session.id, 'first: remember the word zebra');
    await waitForEvents(s, session.id, 'session.status_idle');
    await sendText(s, session.id, 'second: and the word yak');
    await waitForEvents(s, session.id, 'session.status_idle', 2);
    fake.enqueue({ kind: 'text', text: 'SUMMARY-TWO: zebra and yak.' });
    const sent = await s.api('POST', `/sessions/${session.id}/events`, { body: { events: [{ type: 'user.compact' }] } });
    expect(sent.status).toBe(202);
    const events = await waitForEvents(s, session.id, 'session.status_idle', 3);
    const compacted = events.find((e) => e.type === 'session.compacted');
    expect(compacted).toMatchObject({ summary: 'SUMMARY-TWO: zebra and yak.', trigger: 'user' });
    expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });
    expect(events.at(-1).usage.model_calls).toBe(1);
    expect(events.find((e) => e.type === 'user.compact')).toBeTruthy();
    fake.enqueue({ kind: 'text', text: 'three' });
    await sendText(s, session.id, 'third');
    await waitForEvents(s, session.id, 'session.status_idle', 4);
    const last = fake.requests.at(-1)!.body.messages;
    expect(last).toHaveLength(1);
    expect(JSON.stringify(last)).toContain('SUMMARY-TWO');
    expect(JSON.stringify(last)).not.toContain('remember the word zebra');
  });

  it('user.compact is refused for a CLI engine, which manages its own context', async () => {
    const agent = (await s.api('POST', '/agents', { body: { agentType: 'codex', llm: 'gpt-5' } })).body.agent;
    const created = await s.api('POST', '/sessions', { body: { agent: agent.id } });
    const res = await s.api('POST', `/sessions/${created.body.session.id}/events`, { body: { events: [{ type: 'user.compact' }] } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('only hermes sessions compact') });
  });

  it('a single message over the window is a clear session.error, not a provider 400', async () => {
    const { session } = await readySession(s);
    await sendText(s, session.id, padded('huge', WINDOW * 5));
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const errors = events.filter((e) => e.type === 'session.error');
    expect(errors).toHaveLength(1);
    expect(errors[0].error).toMatchObject({ type: 'context_window_exceeded', retry_status: 'exhausted' });
    expect(errors[0].error.message).toContain('context window');
    expect(events.at(-1).stop_reason).toEqual({ type: 'retries_exhausted' });
    expect(fake.requests).toHaveLength(0); // never sent
  });

  it('a prompt the provider refuses as too long is compacted and sent again', async () => {
    const { session } = await readySession(s);
    fake.promptCache.contextWindow = 2600; // smaller than the service believes: the estimate passes, the provider refuses
    for (let n = 1; n <= 3; n++) {
      fake.enqueue({ kind: 'text', text: `answer ${n}` });
      await sendText(s, session.id, padded(`part-${n}`, 2400));
      await waitForEvents(s, session.id, 'session.status_idle', n, 20_000);
    }
    fake.enqueue({ kind: 'text', text: 'SUMMARY-THREE' }, { kind: 'text', text: 'answer 4' });
    await sendText(s, session.id, padded('part-4', 2400));
    const events = await waitForEvents(s, session.id, 'session.status_idle', 4, 20_000);
    const errors = events.filter((e) => e.type === 'session.error');
    expect(errors).toEqual([]);
    expect(events.filter((e) => e.type === 'session.compacted')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'agent.message' && e.final).at(-1).text).toBe('answer 4');
    // Turn 4's first prompt was refused (400, the provider's words), then sent again compacted.
    const calls = fake.requests.filter((r) => !isSummaryCall(r));
    expect(calls).toHaveLength(5);
    expect(JSON.stringify(calls[3]!.body.messages)).toContain('part-1');
    expect(JSON.stringify(calls[4]!.body.messages)).not.toContain('part-1');
  });

  it('budgets still stop exactly with caching and compaction on', async () => {
    const { session } = await readySession(s, {}, { budget: { type: 'limit', max_list_cost: { amount: '1', currency: 'USD' } } });
    let n = 0;
    for (; n < 20; n++) {
      fake.enqueue({ kind: 'text', text: `answer ${n}` });
      await sendText(s, session.id, padded(`spend-${n}`, 2000));
      const idle = (await waitForEvents(s, session.id, 'session.status_idle', n + 1, 20_000)).filter((e) => e.type === 'session.status_idle').at(-1);
      if (idle.stop_reason.type === 'budget_reached') break;
    }
    expect(n).toBeLessThan(20);
    const rows = await usageRows(session.id);
    expect(rows.some((r) => r.cacheReadTokens > 0)).toBe(true);
    const nano = rows.reduce((t, r) => t + r.costNanoUsd, 0n);
    expect(nano).toBeGreaterThanOrEqual(10_000_000n); // the cap: 1 cent
    const detail = (await s.api('GET', `/sessions/${session.id}`)).body.session;
    expect(detail.budget).toMatchObject({ reached: true, consumed_cost: { amount: (nano / 10_000_000n).toString(), currency: 'USD' } });
    expect(detail.usage.cost).toEqual(detail.budget.consumed_cost);
    // Reached: new work is refused, and nothing more is called.
    const calls = fake.requests.length;
    const refused = await sendText(s, session.id, 'more');
    expect(refused.status).toBe(402);
    expect(fake.requests.length).toBe(calls);
  });
});

describe('budgets with prompt caching', () => {
  it('cache writes count toward the budget while the answer streams: the stream stops at the cap', async () => {
    const { session } = await readySession(s, {}, { budget: { type: 'limit', max_list_cost: { amount: '1', currency: 'USD' } } });
    // 3,000 cache-write tokens at $3.75/M = 1.125 cents (plain input: 10 tokens): over the 1-cent cap as soon as usage arrives.
    fake.enqueue({ kind: 'text', text: 'a long answer that should be cut off', chunks: 10, delayMs: 20, usage: { input: 10, cacheWrite: 3000, output: 50 } });
    await sendText(s, session.id, 'expensive prefix');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(events.at(-1).stop_reason).toEqual({ type: 'budget_reached' });
    expect(events.find((e) => e.type === 'agent.message' && e.final)).toBeUndefined();
    const [row] = await usageRows(session.id);
    expect(row!.cacheWriteTokens).toBe(3000);
    expect(row!.costNanoUsd).toBe(10n * 3000n + BigInt(row!.outputTokens) * 15000n + 3000n * 3750n);
    expect(events.at(-1).usage.cache_creation_input_tokens).toBe(3000);
  });
});
