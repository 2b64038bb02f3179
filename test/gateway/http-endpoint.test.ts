// The model gateway's HTTP endpoint for sandboxed CLIs, over real HTTP against the fake provider:
// the providers' wire formats pass through (Anthropic thinking + tools, Chat Completions, Responses
// with reasoning and function calls), every call is metered into the session and the wallet, a
// budget stops a stream mid-way, only a running session's credential is accepted, and the
// provider key never reaches the caller.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession } from '../helpers/sessions.js';
import { prisma } from '../../src/db/client.js';
import { issueSessionCredential } from '../../src/gateway/session-credentials.js';
import { parseSse } from '../../src/gateway/sse.js';

const ANTHROPIC_KEY = 'sk-ant-platform-secret-123';
const OPENAI_KEY = 'sk-oai-platform-secret-456';

let s: TestServer;
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
  s = await startTestServer({
    anthropicApiKey: ANTHROPIC_KEY,
    anthropicBaseUrl: fake.anthropicBaseUrl,
    openaiApiKey: OPENAI_KEY,
    openaiBaseUrl: fake.openaiBaseUrl,
  });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});
beforeEach(() => fake.reset());

/** A session whose turn is running (the only time its credential works), and that credential. */
async function runningSession(sessionBody: Record<string, unknown> = {}) {
  const { session } = await readySession(s, {}, sessionBody);
  await prisma.session.update({ where: { id: session.id }, data: { status: 'running', turnCount: 1 } });
  return { id: session.id as string, token: issueSessionCredential(session.id) };
}

interface Answer {
  status: number;
  text: string;
  headers: Headers;
}

async function call(path: string, body: unknown, auth: Record<string, string>): Promise<Answer> {
  const res = await fetch(`${s.url}/gateway${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text(), headers: res.headers };
}
const anthropic = (token: string, body: unknown) => call('/anthropic/v1/messages', body, { 'x-api-key': token, 'anthropic-version': '2023-06-01' });
const chat = (token: string, body: unknown) => call('/openai/v1/chat/completions', body, { authorization: `Bearer ${token}` });
const responses = (token: string, body: unknown) => call('/openai/v1/responses', body, { authorization: `Bearer ${token}` });

async function records(text: string) {
  const out: { event: string | null; data: any }[] = [];
  async function* bytes() {
    yield new TextEncoder().encode(text);
  }
  for await (const r of parseSse(bytes())) out.push({ event: r.event, data: r.data === '[DONE]' ? '[DONE]' : JSON.parse(r.data) });
  return out;
}

/** Neither the body nor any header of an answer holds a provider key. */
function expectNoKey(a: Answer) {
  const all = a.text + JSON.stringify([...a.headers.entries()]);
  expect(all).not.toContain(ANTHROPIC_KEY);
  expect(all).not.toContain(OPENAI_KEY);
  expect(all).not.toMatch(/sk-(ant|oai)-platform/);
}

const usages = (sessionId: string) => prisma.modelUsage.findMany({ where: { sessionId }, orderBy: { createdAt: 'asc' } });

describe('Anthropic Messages through the gateway', () => {
  it('streams thinking and a tool call in the provider format, with the platform key upstream, metered', async () => {
    const { id, token } = await runningSession();
    fake.enqueue({ kind: 'reasoning_then_text', reasoning: 'let me think', text: 'hello there', usage: { input: 1000, output: 200, cacheRead: 100 } });
    fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: 'ls' }, id: 'toolu_1' });
    const request = {
      model: 'claude-sonnet-4-5',
      max_tokens: 16000,
      stream: true,
      system: 'be brief',
      thinking: { type: 'enabled', budget_tokens: 4096 },
      tools: [{ name: 'bash', description: 'run', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
      messages: [{ role: 'user', content: 'hi' }],
    };
    const a = await anthropic(token, request);
    expect(a.status, a.text).toBe(200);
    expect(a.headers.get('content-type')).toContain('text/event-stream');
    const evs = await records(a.text);
    expect(evs[0]).toMatchObject({ event: 'message_start', data: { type: 'message_start' } });
    expect(
      evs
        .filter((e) => e.data.delta?.type === 'thinking_delta')
        .map((e) => e.data.delta.thinking)
        .join(''),
    ).toBe('let me think');
    expect(evs.find((e) => e.data.delta?.type === 'signature_delta')?.data.delta.signature).toBe('sig-fake-123');
    expect(
      evs
        .filter((e) => e.data.delta?.type === 'text_delta')
        .map((e) => e.data.delta.text)
        .join(''),
    ).toBe('hello there');
    expect(evs.at(-1)).toMatchObject({ event: 'message_stop' });
    // The request went upstream unchanged, with the service's key instead of the credential.
    expect(fake.requests[0]!.body).toEqual(request);
    expect(fake.requests[0]!.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(JSON.stringify(fake.requests[0]!.headers)).not.toContain(token);
    expectNoKey(a);

    const tool = await anthropic(token, { ...request, thinking: undefined, messages: [{ role: 'user', content: 'run ls' }] });
    const toolEvs = await records(tool.text);
    expect(toolEvs.find((e) => e.data.content_block?.type === 'tool_use')?.data.content_block).toMatchObject({ id: 'toolu_1', name: 'bash' });
    expect(
      JSON.parse(
        toolEvs
          .filter((e) => e.data.delta?.type === 'input_json_delta')
          .map((e) => e.data.delta.partial_json)
          .join(''),
      ),
    ).toEqual({ command: 'ls' });
    expect(toolEvs.find((e) => e.event === 'message_delta')?.data.delta.stop_reason).toBe('tool_use');

    const used = await usages(id);
    expect(used).toHaveLength(2);
    expect(used[0]).toMatchObject({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      billing: 'platform',
      turn: 1,
      inputTokens: 1000,
      outputTokens: 200,
      cacheReadTokens: 100,
    });
    // $3/M in, $15/M out, $0.30/M cache read, in nano-dollars.
    expect(used[0]!.costNanoUsd).toBe(1000n * 3000n + 200n * 15000n + 100n * 300n);
    const session = await prisma.session.findUniqueOrThrow({ where: { id } });
    expect(session.consumedNanoUsd).toBe(used[0]!.costNanoUsd + used[1]!.costNanoUsd);
  });

  it('answers a non-streamed request with the provider JSON, metered', async () => {
    const { id, token } = await runningSession();
    fake.enqueue({ kind: 'text', text: 'plain', usage: { input: 40, output: 2 } });
    const a = await anthropic(token, { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    expect(a.status).toBe(200);
    expect(JSON.parse(a.text)).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'plain' }], usage: { input_tokens: 40, output_tokens: 2 } });
    expect(await usages(id)).toMatchObject([{ inputTokens: 40, outputTokens: 2 }]);
  });

  it("passes the provider's refusal of a bad request through (its own words, its status)", async () => {
    const { token } = await runningSession();
    const a = await anthropic(token, { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] });
    expect(a.status).toBe(400);
    expect(JSON.parse(a.text)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } });
  });
});

describe('OpenAI through the gateway', () => {
  it('Chat Completions: streamed text and tool calls, usage requested upstream and metered', async () => {
    const { id, token } = await runningSession();
    fake.enqueue({ kind: 'tool_call', name: 'read_file', input: { path: 'a.txt' }, id: 'call_9', usage: { input: 300, output: 20, cacheRead: 100 } });
    const a = await chat(token, {
      model: 'gpt-5',
      stream: true,
      messages: [{ role: 'user', content: 'read a.txt' }],
      tools: [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }],
    });
    expect(a.status, a.text).toBe(200);
    const evs = await records(a.text);
    expect(evs.at(-1)!.data).toBe('[DONE]');
    const calls = evs.flatMap((e) => e.data.choices?.[0]?.delta?.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ id: 'call_9', function: { name: 'read_file' } });
    expect(JSON.parse(calls.map((c: any) => c.function.arguments).join(''))).toEqual({ path: 'a.txt' });
    expect(fake.requests[0]!.body.stream_options).toEqual({ include_usage: true });
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expectNoKey(a);
    // prompt_tokens 400 includes 100 cached: priced as 300 input + 100 cache reads.
    expect(await usages(id)).toMatchObject([{ provider: 'openai', model: 'gpt-5', inputTokens: 300, outputTokens: 20, cacheReadTokens: 100 }]);
  });

  it("Responses: streamed reasoning summary, text and a function call in the provider's events, metered", async () => {
    const { id, token } = await runningSession();
    fake.enqueue({ kind: 'reasoning_then_text', reasoning: 'thinking hard', text: 'I will list files', usage: { input: 500, output: 60 } });
    fake.enqueue({ kind: 'tool_call', name: 'shell', input: { command: ['ls'] }, id: 'call_sh', usage: { input: 700, output: 30, cacheRead: 200 } });
    const request = {
      model: 'gpt-5',
      stream: true,
      instructions: 'you are codex',
      reasoning: { effort: 'high', summary: 'auto' },
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list files' }] }],
      tools: [{ type: 'function', name: 'shell', parameters: { type: 'object', properties: { command: { type: 'array' } } } }],
    };
    const a = await responses(token, request);
    expect(a.status, a.text).toBe(200);
    const evs = await records(a.text);
    expect(evs[0]).toMatchObject({ event: 'response.created', data: { type: 'response.created', sequence_number: 0 } });
    expect(
      evs
        .filter((e) => e.event === 'response.reasoning_summary_text.delta')
        .map((e) => e.data.delta)
        .join(''),
    ).toBe('thinking hard');
    expect(
      evs
        .filter((e) => e.event === 'response.output_text.delta')
        .map((e) => e.data.delta)
        .join(''),
    ).toBe('I will list files');
    expect(evs.at(-1)).toMatchObject({
      event: 'response.completed',
      data: { response: { status: 'completed', usage: { input_tokens: 500, output_tokens: 60 } } },
    });
    expect(fake.requests[0]!.body).toEqual(request);

    const second = await responses(token, {
      ...request,
      input: [
        ...request.input,
        { type: 'function_call', call_id: 'call_0', name: 'shell', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_0', output: 'a.txt' },
      ],
    });
    expect(second.status, second.text).toBe(200);
    const evs2 = await records(second.text);
    const added = evs2.find((e) => e.event === 'response.output_item.added')!.data.item;
    expect(added).toMatchObject({ type: 'function_call', call_id: 'call_sh', name: 'shell' });
    expect(
      JSON.parse(
        evs2
          .filter((e) => e.event === 'response.function_call_arguments.delta')
          .map((e) => e.data.delta)
          .join(''),
      ),
    ).toEqual({ command: ['ls'] });
    expectNoKey(a);
    expectNoKey(second);
    expect(await usages(id)).toMatchObject([
      { provider: 'openai', inputTokens: 500, outputTokens: 60, cacheReadTokens: 0 },
      { provider: 'openai', inputTokens: 700, outputTokens: 30, cacheReadTokens: 200 }, // 900 input, 200 of them cached
    ]);
  });

  it('Responses without streaming: the response object, metered', async () => {
    const { id, token } = await runningSession();
    fake.enqueue({ kind: 'text', text: 'done', usage: { input: 10, output: 3 } });
    const a = await responses(token, { model: 'gpt-5-mini', input: 'hi' });
    expect(JSON.parse(a.text)).toMatchObject({ object: 'response', output: [{ type: 'message', content: [{ type: 'output_text', text: 'done' }] }] });
    expect(await usages(id)).toMatchObject([{ model: 'gpt-5-mini', inputTokens: 10, outputTokens: 3 }]);
  });
});

describe('budget and wallet', () => {
  it("a budget reached mid-stream ends the stream with the API's error event; the next call is refused with 402", async () => {
    const { id, token } = await runningSession({ budget: { type: 'limit', max_list_cost: { amount: '1', currency: 'USD' } } });
    // 5000 input tokens at $3/M = 1.5 cents: over the 1-cent cap as soon as usage arrives.
    fake.enqueue({ kind: 'text', text: 'a long answer that should be cut off before the end', chunks: 10, delayMs: 20, usage: { input: 5000, output: 50 } });
    const a = await anthropic(token, { model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'expensive' }] });
    expect(a.status).toBe(200);
    const evs = await records(a.text);
    expect(evs.at(-1)).toEqual({
      event: 'error',
      data: { type: 'error', error: { type: 'budget_reached', code: 'budget_reached', message: expect.stringContaining('budget') } },
    });
    expect(evs.some((e) => e.event === 'message_stop')).toBe(false);
    const session = await prisma.session.findUniqueOrThrow({ where: { id } });
    expect(session.budgetReachedAt).not.toBeNull();
    expect(session.consumedNanoUsd).toBeGreaterThanOrEqual(10_000_000n);

    const again = await responses(token, { model: 'gpt-5', input: 'more', stream: true });
    expect(again.status).toBe(402);
    expect(JSON.parse(again.text).error).toMatchObject({ code: 'budget_reached' });
    expect(fake.requests).toHaveLength(1);
  });

  it('a universe without credit is refused with 402 insufficient_credits before the provider is called', async () => {
    const { id, token } = await runningSession();
    const { universeId } = await prisma.session.findUniqueOrThrow({ where: { id } });
    await prisma.universe.update({ where: { id: universeId }, data: { balanceNanoUsd: 0n, heldNanoUsd: 0n } });
    const a = await chat(token, { model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }] });
    expect(a.status).toBe(402);
    expect(JSON.parse(a.text).error).toMatchObject({ code: 'insufficient_credits' });
    expect(fake.requests).toHaveLength(0);
    await prisma.universe.update({ where: { id: universeId }, data: { balanceNanoUsd: 500n * 10_000_000n } });
  });
});

describe('credentials', () => {
  const body = { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
  const expect401 = (a: Answer) => {
    expect(a.status).toBe(401);
    expect(JSON.parse(a.text).error).toMatchObject({ code: 'unauthorized', message: expect.any(String) });
  };

  it('a missing, unknown, forged or provider-shaped key is 401, and the provider is never called', async () => {
    expect401(await call('/anthropic/v1/messages', body, {}));
    expect401(await anthropic('ast_sbx_forged', body));
    expect401(await anthropic(ANTHROPIC_KEY, body));
    const real = (await runningSession()).token;
    const at = real.length - 10; // one sealed character changed: the seal no longer opens
    expect401(await chat(real.slice(0, at) + (real[at] === 'A' ? 'B' : 'A') + real.slice(at + 1), body));
    expect(fake.requests).toHaveLength(0);
  });

  it('is revoked when the turn ends and when the session is terminated', async () => {
    const { id, token } = await runningSession();
    expect((await anthropic(token, body)).status).toBe(200);
    await prisma.session.update({ where: { id }, data: { status: 'idle' } });
    expect401(await anthropic(token, body));
    await prisma.session.update({ where: { id }, data: { status: 'terminated' } });
    expect401(await anthropic(token, body));
    expect(fake.requests).toHaveLength(1);
  });

  it("the provider refusing the service's key is a 502 that names no key", async () => {
    const { token } = await runningSession();
    fake.rejectKeys.add(OPENAI_KEY);
    const a = await chat(token, { model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }] });
    expect(a.status).toBe(502);
    expect(JSON.parse(a.text).error).toMatchObject({ code: 'provider_auth' });
    expectNoKey(a);
  });

  it('unknown paths are 404 and other methods 405, in the envelope', async () => {
    const { token } = await runningSession();
    const a = await call('/openai/v1/embeddings', {}, { authorization: `Bearer ${token}` });
    expect(a.status).toBe(404);
    expect(JSON.parse(a.text).error.code).toBe('not_found');
    const g = await fetch(`${s.url}/gateway/openai/v1/responses`, { headers: { authorization: `Bearer ${token}` } });
    expect(g.status).toBe(405);
    expect((await g.json()).error.code).toBe('method_not_allowed');
    const bad = await fetch(`${s.url}/gateway/openai/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: '{nope' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe('invalid_request');
  });
});
