// Long-lived sessions that cost little (issue #31 parts 1-3), end to end on the fake provider.
// Prompt caching: hermes marks Anthropic requests with cache breakpoints and gives OpenAI
// requests a per-session cache key; the fake provider caches prefixes as the providers do and
// reports reads and writes; the gateway prices them exactly. Usage per turn: the idle event
// carries the sum of the turn's metered calls; the session (REST, GraphQL) its totals.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents } from '../helpers/sessions.js';
import { prisma } from '../../src/db/client.js';

let s: TestServer;
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
  s = await startTestServer({
    anthropicApiKey: 'sk-ant-test',
    anthropicBaseUrl: fake.anthropicBaseUrl,
    openaiApiKey: 'sk-openai-test',
    openaiBaseUrl: fake.openaiBaseUrl,
  });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});
beforeEach(() => {
  fake.reset();
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
