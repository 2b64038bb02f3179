// hermes' OpenAI Responses adapter: the request it sends (input items, instructions, tools,
// reasoning with encrypted content passed back, store=false), the stream it reads (text, reasoning
// summaries, function calls, usage with cached and reasoning tokens, failures), the per-model
// choice between Responses and Chat Completions, and whole hermes turns over HTTP against the
// fake provider (a file written with bash, agent.reasoning, exact list-price metering, retries).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { streamModel } from '../../src/gateway/gateway.js';
import { responsesBody } from '../../src/gateway/openai-responses.js';
import { openaiApi } from '../../src/gateway/openai-api.js';
import { anthropicBody } from '../../src/gateway/anthropic.js';
import { config } from '../../src/config.js';
import { prisma } from '../../src/db/client.js';
import {
  OPENAI_REASONING_TAG,
  type ProviderError,
  type ChatMessage,
  type ModelEvent,
  type ModelRequest,
  type ProviderCredential,
} from '../../src/gateway/types.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { readySession, sendText, waitForEvents } from '../helpers/sessions.js';

type Ev<T extends ModelEvent['type']> = Extract<ModelEvent, { type: T }>;
const of = <T extends ModelEvent['type']>(events: ModelEvent[], type: T) => events.filter((e): e is Ev<T> => e.type === type);
async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a ProviderError');
    },
    (e: unknown) => e as ProviderError,
  );

let fake: FakeProvider;
let s: TestServer;
beforeAll(async () => {
  process.env.MODEL_RETRY_BASE_MS = '10';
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
beforeEach(() => fake.reset());

const KEY = 'sk-test-0123456789abcdef';
const cred = (): ProviderCredential => ({ apiKey: KEY, baseUrl: fake.openaiBaseUrl, kind: 'platform' });
const bash = { name: 'bash', description: 'run a command', inputSchema: { type: 'object', properties: { command: { type: 'string' } } } };
const request = (extra: Partial<ModelRequest> = {}): ModelRequest => ({
  provider: 'openai',
  model: 'gpt-5',
  system: 'You are terse.',
  tools: [bash],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  ...extra,
});
const run = (extra: Partial<ModelRequest> = {}, signal?: AbortSignal) => collect(streamModel(request(extra), cred(), signal));

describe('which OpenAI API a model is called with', () => {
  it('the catalog says: reasoning models over Responses, gpt-4.1 over Chat Completions; OPENAI_API_MODE overrides', async () => {
    expect(['gpt-5', 'gpt-5-mini', 'gpt-5-nano', 'o3', 'o4-mini'].map(openaiApi)).toEqual(Array(5).fill('responses'));
    expect(['gpt-4.1', 'gpt-4.1-mini', 'kimi-k2'].map(openaiApi)).toEqual(['chat', 'chat', 'chat']);
    expect(openaiApi('gpt-5-2025-08-07')).toBe('responses'); // aliases too
    const saved = config().openaiApiMode;
    try {
      config().openaiApiMode = 'chat';
      expect(openaiApi('gpt-5')).toBe('chat');
      await run();
      expect(fake.requests.at(-1)!.path).toBe('/v1/chat/completions');
      config().openaiApiMode = 'responses';
      expect(openaiApi('gpt-4.1')).toBe('responses');
    } finally {
      config().openaiApiMode = saved;
    }
    await run({ model: 'gpt-4.1' });
    expect(fake.requests.at(-1)!.path).toBe('/v1/chat/completions');
    await run({ model: 'gpt-4.1', api: 'responses' }); // a request may pin the API
    expect(fake.requests.at(-1)!.path).toBe('/v1/responses');
  });
});

describe('Responses adapter', () => {
  it('streams text; the request is stateless with instructions, non-strict function tools and reasoning settings', async () => {
    fake.enqueue({ kind: 'text', text: 'abcdefghij', chunks: 5 });
    const events = await run({ reasoningEffort: 'high', maxTokens: 1000 });
    expect(of(events, 'text_delta').map((e) => e.text)).toEqual(['ab', 'cd', 'ef', 'gh', 'ij']);
    expect(events.at(-1)).toEqual({ type: 'stop', reason: 'end_turn' });
    const req = fake.requests[0]!;
    expect(req.path).toBe('/v1/responses');
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.body).toEqual({
      model: 'gpt-5',
      stream: true,
      store: false,
      instructions: 'You are terse.',
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
      tools: [{ type: 'function', name: 'bash', description: 'run a command', parameters: bash.inputSchema, strict: false }],
      max_output_tokens: 1000,
      reasoning: { effort: 'high', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
    });
  });

  it('a model that does not reason gets no reasoning settings (the API would refuse them)', async () => {
    const body = responsesBody(request({ model: 'gpt-4.1', reasoningEffort: 'high', system: '' }));
    expect(body).not.toHaveProperty('reasoning');
    expect(body).not.toHaveProperty('include');
    expect(body).not.toHaveProperty('instructions');
    expect(responsesBody(request({ reasoningEffort: null }))).toMatchObject({ reasoning: { summary: 'auto' } }); // the model's own default effort
    expect(responsesBody(request({ reasoningEffort: null })).reasoning as object).not.toHaveProperty('effort');
    fake.enqueue({ kind: 'text', text: 'fine' });
    expect(
      of(await run({ model: 'gpt-4.1', api: 'responses', reasoningEffort: 'high' }), 'text_delta')
        .map((e) => e.text)
        .join(''),
    ).toBe('fine');
  });

  it('reasoning summaries stream as reasoning, closed before the answer, signed with the encrypted reasoning', async () => {
    fake.enqueue({ kind: 'reasoning_then_text', reasoning: 'Let me think this through.', text: 'Answer.' });
    const events = await run({ reasoningEffort: 'medium' });
    expect(
      of(events, 'reasoning_delta')
        .map((e) => e.text)
        .join(''),
    ).toBe('Let me think this through.');
    const done = events.findIndex((e) => e.type === 'reasoning_done');
    expect(done).toBeGreaterThan(events.findIndex((e) => e.type === 'reasoning_delta'));
    expect(done).toBeLessThan(events.findIndex((e) => e.type === 'text_delta'));
    const sig = (events[done] as Ev<'reasoning_done'>).signature!;
    expect(sig.startsWith(`${OPENAI_REASONING_TAG}gAAAAA`)).toBe(true);
    expect(events[done]).toMatchObject({ redacted: false });

    // The next call sends it back (no item ids: nothing is stored), and the fake verifies it.
    const messages: ChatMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'q' }] },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Let me think this through.', signature: sig },
          { type: 'text', text: 'Answer.' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'and?' }] },
    ];
    fake.enqueue({ kind: 'text', text: 'more' });
    expect((await run({ messages })).at(-1)).toEqual({ type: 'stop', reason: 'end_turn' });
    expect(fake.requests[1]!.body.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'q' }] },
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Let me think this through.' }], encrypted_content: sig.slice(OPENAI_REASONING_TAG.length) },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Answer.' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'and?' }] },
    ]);
    // A forged one is refused, as the API refuses reasoning it cannot decrypt.
    const forged = structuredClone(messages);
    (forged[1]!.content[0] as { signature: string }).signature = `${OPENAI_REASONING_TAG}bogus`;
    expect(await failure(run({ messages: forged }))).toMatchObject({ status: 400, code: 'provider_bad_request' });
    // Anthropic never gets it; a model that does not reason never gets it; Anthropic's signed thinking never goes to OpenAI.
    expect(
      (anthropicBody({ ...request({ messages }), provider: 'anthropic', model: 'claude-sonnet-4-5' }).messages as { content: unknown[] }[])[1]!.content,
    ).toEqual([{ type: 'text', text: 'Answer.' }]);
    expect(JSON.stringify(responsesBody(request({ model: 'gpt-4.1', messages })).input)).not.toContain('reasoning');
    const anthropicThinking = structuredClone(messages);
    (anthropicThinking[1]!.content[0] as { signature: string }).signature = 'sig-anthropic';
    expect(JSON.stringify(responsesBody(request({ messages: anthropicThinking })).input)).not.toContain('reasoning');
  });

  it('assembles a function call whose arguments arrive in fragments', async () => {
    const input = { command: 'echo "a long command with quotes, {braces} and ünïcödé"', timeout_ms: 5000 };
    fake.enqueue({ kind: 'tool_call', name: 'bash', input, id: 'call_1', text: 'Running it.' });
    const events = await run();
    const deltas = of(events, 'tool_call_delta');
    expect(deltas.length).toBeGreaterThanOrEqual(4);
    expect(deltas.every((d) => d.id === 'call_1')).toBe(true);
    expect(deltas.map((d) => d.argsPartial).join('')).toBe(JSON.stringify(input));
    expect(of(events, 'tool_call_start')).toEqual([{ type: 'tool_call_start', id: 'call_1', name: 'bash' }]);
    expect(events.findIndex((e) => e.type === 'tool_call_start')).toBeLessThan(events.findIndex((e) => e.type === 'tool_call_delta'));
    expect(of(events, 'tool_call')).toEqual([{ type: 'tool_call', id: 'call_1', name: 'bash', input }]);
    expect(
      of(events, 'text_delta')
        .map((e) => e.text)
        .join(''),
    ).toBe('Running it.');
    expect(events.at(-1)).toEqual({ type: 'stop', reason: 'tool_use' });
  });

  it('sends a tool loop, images and documents as input items (the fake refuses what the API refuses)', async () => {
    const messages: ChatMessage[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'list files' },
          { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
          { type: 'document', mediaType: 'application/pdf', data: 'JVBERi0=', title: 'spec.pdf' },
          { type: 'document', mediaType: 'text/plain', data: 'plain words', title: 'notes.txt' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', id: 'call_a', name: 'bash', input: { command: 'ls' } },
          { type: 'tool_use', id: 'call_b', name: 'bash', input: { command: 'pwd' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', toolUseId: 'call_a', content: 'a.txt' },
          { type: 'tool_result', toolUseId: 'call_b', content: 'boom', isError: true },
          { type: 'text', text: 'and then?' },
        ],
      },
    ];
    expect((await run({ messages })).at(-1)).toEqual({ type: 'stop', reason: 'end_turn' });
    expect(fake.requests[0]!.body.input).toEqual([
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'list files' },
          { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
          { type: 'input_file', filename: 'spec.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
          { type: 'input_text', text: '# notes.txt\n\nplain words' },
        ],
      },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Looking.' }] },
      { type: 'function_call', call_id: 'call_a', name: 'bash', arguments: '{"command":"ls"}' },
      { type: 'function_call', call_id: 'call_b', name: 'bash', arguments: '{"command":"pwd"}' },
      { type: 'function_call_output', call_id: 'call_a', output: 'a.txt' },
      { type: 'function_call_output', call_id: 'call_b', output: 'boom' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'and then?' }] },
    ]);
  });

  it('usage: cached tokens are inside input and reasoning tokens inside output, each counted once', async () => {
    fake.enqueue({
      kind: 'reasoning_then_text',
      reasoning: 'hm',
      text: 'x',
      usage: { inputTokens: 123, cacheReadTokens: 40, outputTokens: 45, reasoningTokens: 30 },
    });
    const usages = of(await run(), 'usage');
    expect(usages).toHaveLength(1);
    expect(usages[0]!.usage).toEqual({ inputTokens: 123, outputTokens: 45, cacheReadTokens: 40, cacheWriteTokens: 0 });
    const sent = fake.requests[0]!; // what the fake reported: 163 input tokens of which 40 cached
    expect(sent.path).toBe('/v1/responses');
  });

  it('HTTP failures: 500 and 429 retryable, 401 provider_auth without the key, 400 not retryable', async () => {
    fake.enqueue({ kind: 'error', status: 500, message: 'the model fell over' });
    expect(await failure(run())).toMatchObject({
      status: 500,
      retryable: true,
      code: 'provider_unavailable',
      message: expect.stringContaining('the model fell over'),
    });
    fake.enqueue({ kind: 'error', status: 429, message: 'slow down', retryAfterSec: 2 });
    expect(await failure(run())).toMatchObject({ status: 429, retryable: true, code: 'provider_rate_limited', retryAfterMs: 2000 });
    fake.enqueue({ kind: 'error', status: 400, message: 'bad input' });
    expect(await failure(run())).toMatchObject({ status: 400, retryable: false, code: 'provider_bad_request' });
    fake.rejectKeys.add(KEY);
    const auth = await failure(run());
    expect(auth).toMatchObject({ status: 401, retryable: false, code: 'provider_auth' });
    expect(auth.message).not.toContain(KEY.slice(-4));
  });

  it('failures inside the stream: response.failed and error events by their code', async () => {
    fake.enqueue({ kind: 'stream_error', code: 'server_error', message: 'The server had an error', usage: { input: 7, output: 1 } });
    const events: ModelEvent[] = [];
    const err = await failure(
      (async () => {
        for await (const e of streamModel(request(), cred())) events.push(e);
      })(),
    );
    expect(err).toMatchObject({ retryable: true, code: 'provider_unavailable', message: expect.stringContaining('The server had an error') });
    expect(of(events, 'usage')[0]!.usage.inputTokens).toBe(7); // what was used before the failure is still reported
    fake.enqueue({ kind: 'stream_error', code: 'rate_limit_exceeded', as: 'error', message: 'Rate limit reached' });
    expect(await failure(run())).toMatchObject({ retryable: true, code: 'provider_rate_limited' });
    fake.enqueue({ kind: 'stream_error', code: 'invalid_prompt', message: 'Invalid prompt' });
    expect(await failure(run())).toMatchObject({ retryable: false, code: 'provider_bad_request' });
  });

  it('a stream cut before response.completed is a retryable error; an abort ends it quietly', async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () =>
        res
          .writeHead(200, { 'content-type': 'text/event-stream' })
          .end(`event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', item_id: 'msg_1', delta: 'half' })}\n\n`),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    expect(await failure(collect(streamModel(request(), { apiKey: KEY, baseUrl: url, kind: 'platform' })))).toMatchObject({
      retryable: true,
      code: 'provider_unavailable',
    });
    await new Promise<void>((r) => server.close(() => r()));

    fake.enqueue({ kind: 'hang', text: 'partial' });
    const ctl = new AbortController();
    const seen: ModelEvent[] = [];
    for await (const ev of streamModel(request(), cred(), ctl.signal)) {
      seen.push(ev);
      if (ev.type === 'text_delta') setTimeout(() => ctl.abort(), 20);
    }
    expect(
      of(seen, 'text_delta')
        .map((e) => e.text)
        .join(''),
    ).toBe('partial');
    expect(seen.some((e) => e.type === 'stop')).toBe(false);
  });
});

describe('hermes turns over Responses (HTTP)', () => {
  it('an agent on gpt-5 writes a file with bash and answers; its reasoning is shown and passed back in the next turn', async () => {
    const { session } = await readySession(s, { llm: 'gpt-5' });
    fake.enqueue(
      { kind: 'tool_call', name: 'bash', input: { command: 'echo from-responses > r.txt && cat r.txt' }, id: 'call_w', reasoning: 'I should write the file.' },
      { kind: 'text', text: 'Wrote r.txt.' },
    );
    await sendText(s, session.id, 'write r.txt');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const reasoning = events.filter((e) => e.type === 'agent.reasoning' && e.final);
    expect(reasoning).toHaveLength(1);
    expect(reasoning[0].part).toMatchObject({ type: 'reasoning', text: 'I should write the file.', redacted: false });
    expect(events.find((e) => e.type === 'agent.tool_use').part).toMatchObject({
      call_id: 'call_w',
      tool_name: 'bash',
      args: { command: 'echo from-responses > r.txt && cat r.txt' },
    });
    expect(events.find((e) => e.type === 'agent.tool_result').part.result.stdout).toBe('from-responses\n');
    expect(events.find((e) => e.type === 'agent.message' && e.final).text).toBe('Wrote r.txt.');
    expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });
    expect(fake.requests.map((r) => r.path)).toEqual(['/v1/responses', '/v1/responses']);
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer sk-openai-test');
    const second = fake.requests[1]!.body.input as any[];
    expect(second.map((x) => x.type)).toEqual(['message', 'reasoning', 'function_call', 'function_call_output']);
    expect(second[2]).toEqual({
      type: 'function_call',
      call_id: 'call_w',
      name: 'bash',
      arguments: JSON.stringify({ command: 'echo from-responses > r.txt && cat r.txt' }),
    });
    expect(second[3]).toMatchObject({ call_id: 'call_w', output: expect.stringContaining('from-responses') });

    // The file is in /workspace, and the next turn (rebuilt from stored events) carries the reasoning too.
    fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: 'cat /workspace/r.txt' }, id: 'call_r' }, { kind: 'text', text: 'Still there.' });
    await sendText(s, session.id, 'is it there?');
    const after = await waitForEvents(s, session.id, 'session.status_idle', 2);
    expect(after.filter((e) => e.type === 'agent.tool_result').at(-1).part.result.stdout).toBe('from-responses\n');
    const third = fake.requests[2]!.body.input as any[];
    expect(third.map((x) => x.type)).toEqual(['message', 'reasoning', 'function_call', 'function_call_output', 'message', 'message']);
    expect(third[1]).toMatchObject({
      summary: [{ type: 'summary_text', text: 'I should write the file.' }],
      encrypted_content: expect.stringMatching(/^gAAAAA/),
    });
    expect(third.every((x) => x.id === undefined)).toBe(true);
  });

  it('usage is metered into consumed_cost at gpt-5 list prices (cached input at its rate, reasoning as output)', async () => {
    const { session } = await readySession(s, { llm: 'gpt-5' }, { budget: { type: 'limit', max_list_cost: { amount: '1000', currency: 'USD' } } });
    const usage = { inputTokens: 1000, cacheReadTokens: 400, outputTokens: 300, reasoningTokens: 200 };
    fake.enqueue(
      { kind: 'tool_call', name: 'bash', input: { command: 'true' }, reasoning: 'hm', usage },
      { kind: 'reasoning_then_text', reasoning: 'done', text: 'ok', usage },
    );
    await sendText(s, session.id, 'spend');
    await waitForEvents(s, session.id, 'session.status_idle');
    // gpt-5: $1.25 input, $0.125 cached input, $10 output per million tokens → nano-dollars per token 1250, 125, 10000.
    const perCall = 1000n * 1250n + 400n * 125n + 300n * 10_000n;
    const rows = await prisma.modelUsage.findMany({ where: { sessionId: session.id } });
    expect(rows.map((r) => [r.provider, r.model, r.inputTokens, r.cacheReadTokens, r.outputTokens, r.costNanoUsd])).toEqual([
      ['openai', 'gpt-5', 1000, 400, 300, perCall],
      ['openai', 'gpt-5', 1000, 400, 300, perCall],
    ]);
    expect((await prisma.session.findUniqueOrThrow({ where: { id: session.id } })).consumedNanoUsd).toBe(perCall * 2n);
    const got = (await s.api('GET', `/sessions/${session.id}`)).body.session.budget;
    expect(got.consumed_cost).toEqual({ amount: String((perCall * 2n) / 10_000_000n), currency: 'USD' });
  });

  it('an error event in the stream: session.error retrying, then the retry answers', async () => {
    const { session } = await readySession(s, { llm: 'gpt-5' });
    fake.enqueue({ kind: 'stream_error', code: 'server_error', message: 'The server had an error' }, { kind: 'text', text: 'second time lucky' });
    await sendText(s, session.id, 'hello');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const errors = events.filter((e) => e.type === 'session.error');
    expect(errors.map((e) => e.error)).toEqual([
      expect.objectContaining({
        type: 'provider_unavailable',
        retry_status: 'retrying',
        attempt: 1,
        message: expect.stringContaining('The server had an error'),
      }),
    ]);
    expect(events.find((e) => e.type === 'agent.message' && e.final).text).toBe('second time lucky');
    expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });
  });

  it('on an OpenAI subscription: calls carry its credential; a refused one marks it needs_reconnect', async () => {
    const credential = 'sk-user-subscription-0123456789';
    expect((await s.api('PUT', '/model-subscriptions/openai', { body: { credential } })).status).toBe(200);
    try {
      const { session } = await readySession(s, { llm: 'gpt-5' }, { modelBilling: 'account' });
      fake.enqueue({ kind: 'text', text: 'on your plan' });
      await sendText(s, session.id, 'hi');
      await waitForEvents(s, session.id, 'session.status_idle');
      expect(fake.requests[0]).toMatchObject({ path: '/v1/responses', headers: { authorization: `Bearer ${credential}` } });
      fake.rejectKeys.add(credential);
      await sendText(s, session.id, 'again');
      const events = await waitForEvents(s, session.id, 'session.status_idle', 2);
      expect(events.find((e) => e.type === 'session.error').error).toMatchObject({ type: 'subscription_needs_reconnect', retry_status: 'exhausted' });
      expect((await s.api('GET', '/model-subscriptions')).body.subscriptions.find((x: any) => x.provider === 'openai').status).toBe('needs_reconnect');
    } finally {
      await s.api('DELETE', '/model-subscriptions/openai');
    }
  });

  it('error events on every attempt: retrying, retrying, exhausted, and the turn ends retries_exhausted', async () => {
    const { session } = await readySession(s, { llm: 'gpt-5' });
    for (let i = 0; i < 3; i++) fake.enqueue({ kind: 'stream_error', code: 'server_error', as: i === 1 ? 'error' : 'failed', message: `failure ${i + 1}` });
    await sendText(s, session.id, 'hello');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const errors = events.filter((e) => e.type === 'session.error').map((e) => e.error);
    expect(errors.map((e) => [e.type, e.retry_status, e.attempt])).toEqual([
      ['provider_unavailable', 'retrying', 1],
      ['provider_unavailable', 'retrying', 2],
      ['provider_unavailable', 'exhausted', 3],
    ]);
    expect(errors[2].message).toContain('failure 3');
    expect(events.at(-1).stop_reason).toEqual({ type: 'retries_exhausted' });
    expect(fake.requests).toHaveLength(3);
  });
});
