// The model gateway's provider adapters against the fake provider (real HTTP, real wire
// formats), the SSE parser at every byte boundary, and the request mappings.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseSse } from '../../src/gateway/sse.js';
import { streamModel } from '../../src/gateway/gateway.js';
import { anthropicBody, anthropicLimits } from '../../src/gateway/anthropic.js';
import { openaiBody, openaiReasoningEffort } from '../../src/gateway/openai.js';
import { ProviderError, type ChatMessage, type ModelEvent, type ModelRequest, type Provider, type ProviderCredential } from '../../src/gateway/types.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';

type Ev<T extends ModelEvent['type']> = Extract<ModelEvent, { type: T }>;
const of = <T extends ModelEvent['type']>(events: ModelEvent[], type: T) => events.filter((e): e is Ev<T> => e.type === type);

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
async function* bytes(parts: Uint8Array[]) {
  for (const p of parts) yield p;
}

describe('SSE parser', () => {
  // Multi-byte UTF-8, CRLF and lone CR line ends, comments, multi-line data, no final blank line.
  const stream = ': keep-alive\r\nevent: a\ndata: {"t":"héllo 🌍"}\n\nevent: b\r\ndata: line1\r\ndata: line2\r\n\r\nevent: ping\rdata: {}\r\rdata: [DONE]\n';
  const whole = new TextEncoder().encode(stream);
  const expected = [
    { event: 'a', data: '{"t":"héllo 🌍"}' },
    { event: 'b', data: 'line1\nline2' },
    { event: 'ping', data: '{}' },
    { event: null, data: '[DONE]' },
  ];

  it('parses a whole stream', async () => {
    expect(await collect(parseSse(bytes([whole])))).toEqual(expected);
  });

  it('gives the same records when the bytes are split at any boundary', async () => {
    for (let i = 1; i < whole.length; i++) {
      expect(await collect(parseSse(bytes([whole.slice(0, i), whole.slice(i)])))).toEqual(expected);
    }
    // and one byte at a time (every boundary at once, including inside 🌍 and \r\n)
    expect(await collect(parseSse(bytes([...whole].map((b) => Uint8Array.of(b)))))).toEqual(expected);
  });

  it('ignores a leading BOM and records without data', async () => {
    const text = '\uFEFFevent: only-event\n\ndata: x\n\n';
    expect(await collect(parseSse(bytes([new TextEncoder().encode(text)])))).toEqual([{ event: null, data: 'x' }]);
  });
});

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => fake.reset());

const KEY = 'sk-test-0123456789abcdef';
const model = (p: Provider) => (p === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-5');
const request = (provider: Provider, extra: Partial<ModelRequest> = {}): ModelRequest => ({
  provider,
  model: model(provider),
  system: 'You are terse.',
  tools: [{ name: 'bash', description: 'run a command', inputSchema: { type: 'object', properties: { command: { type: 'string' } } } }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  ...(provider === 'openai' ? { api: 'chat' as const } : {}), // this file tests Chat Completions; Responses: responses.test.ts
  ...extra,
});
const cred = (provider: Provider, apiKey = KEY): ProviderCredential => ({
  apiKey,
  baseUrl: provider === 'anthropic' ? fake.anthropicBaseUrl : fake.openaiBaseUrl,
  kind: 'platform',
});
const run = (provider: Provider, extra: Partial<ModelRequest> = {}, c = cred(provider), signal?: AbortSignal) =>
  collect(streamModel(request(provider, extra), c, signal));
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a ProviderError');
    },
    (e: unknown) => e as ProviderError,
  );

describe.each(['anthropic', 'openai'] as const)('%s adapter', (provider) => {
  it('streams text: deltas keep the chunk boundaries and concatenate to the text', async () => {
    fake.enqueue({ kind: 'text', text: 'abcdefghij', chunks: 5 });
    const events = await run(provider);
    expect(of(events, 'text_delta').map((e) => e.text)).toEqual(['ab', 'cd', 'ef', 'gh', 'ij']);
    expect(events.at(-1)).toEqual({ type: 'stop', reason: 'end_turn' });
    const req = fake.requests[0]!;
    expect(req.path).toBe(provider === 'anthropic' ? '/v1/messages' : '/v1/chat/completions');
    if (provider === 'anthropic') {
      expect(req.headers).toMatchObject({ 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' });
      expect(req.body).toMatchObject({ model: 'claude-sonnet-4-5', stream: true, system: 'You are terse.', max_tokens: 8192 });
      expect(req.body.tools).toEqual([{ name: 'bash', description: 'run a command', input_schema: request(provider).tools[0]!.inputSchema }]);
    } else {
      expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(req.body).toMatchObject({ model: 'gpt-5', stream: true, stream_options: { include_usage: true } });
      expect(req.body.messages[0]).toEqual({ role: 'system', content: 'You are terse.' });
      expect(req.body.tools).toEqual([
        { type: 'function', function: { name: 'bash', description: 'run a command', parameters: request(provider).tools[0]!.inputSchema } },
      ]);
    }
  });

  it('reports the scripted usage; usage events are running totals', async () => {
    fake.enqueue({ kind: 'text', text: 'x', usage: { inputTokens: 123, outputTokens: 45, cacheReadTokens: 6, cacheWriteTokens: 7 } });
    const usages = of(await run(provider), 'usage').map((e) => e.usage);
    // OpenAI reports no cache writes; its prompt_tokens include the cached part, counted once.
    expect(usages.at(-1)).toEqual({ inputTokens: 123, outputTokens: 45, cacheReadTokens: 6, cacheWriteTokens: provider === 'anthropic' ? 7 : 0 });
    for (let i = 1; i < usages.length; i++) expect(usages[i]!.outputTokens).toBeGreaterThanOrEqual(usages[i - 1]!.outputTokens);
  });

  it('assembles a tool call whose arguments arrive in many fragments', async () => {
    const input = { command: 'echo "a long command with quotes, {braces} and ünïcödé"', timeout_ms: 5000, env: { A: '1' } };
    fake.enqueue({ kind: 'tool_call', name: 'bash', input, id: 'call_1', text: 'Running it.' });
    const events = await run(provider);
    const deltas = of(events, 'tool_call_delta');
    expect(deltas.length).toBeGreaterThanOrEqual(4);
    expect(deltas.every((d) => d.id === 'call_1')).toBe(true);
    expect(deltas.map((d) => d.argsPartial).join('')).toBe(JSON.stringify(input));
    expect(events.findIndex((e) => e.type === 'tool_call_start')).toBeLessThan(events.findIndex((e) => e.type === 'tool_call_delta'));
    expect(of(events, 'tool_call_start')).toEqual([{ type: 'tool_call_start', id: 'call_1', name: 'bash' }]);
    expect(of(events, 'tool_call')).toEqual([{ type: 'tool_call', id: 'call_1', name: 'bash', input }]);
    expect(
      of(events, 'text_delta')
        .map((e) => e.text)
        .join(''),
    ).toBe('Running it.');
    expect(events.at(-1)).toEqual({ type: 'stop', reason: 'tool_use' });
  });

  it('streams reasoning, closed by reasoning_done before the answer', async () => {
    fake.enqueue({ kind: 'reasoning_then_text', reasoning: 'Let me think this through.', text: 'Answer.' });
    const events = await run(provider, { reasoningEffort: 'high' });
    expect(
      of(events, 'reasoning_delta')
        .map((e) => e.text)
        .join(''),
    ).toBe('Let me think this through.');
    const done = events.findIndex((e) => e.type === 'reasoning_done');
    expect(done).toBeGreaterThan(events.findIndex((e) => e.type === 'reasoning_delta'));
    expect(done).toBeLessThan(events.findIndex((e) => e.type === 'text_delta'));
    expect(
      of(events, 'text_delta')
        .map((e) => e.text)
        .join(''),
    ).toBe('Answer.');
    const body = fake.requests[0]!.body;
    if (provider === 'anthropic') {
      // Anthropic thinking is signed; the signature lets the block go back in the next call.
      expect(events[done]).toEqual({ type: 'reasoning_done', signature: 'sig-fake-123', redacted: false });
      expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
      expect(body.max_tokens).toBeGreaterThan(8192);
    } else {
      expect(events[done]).toEqual({ type: 'reasoning_done', signature: null });
      expect(body.reasoning_effort).toBe('high');
    }
  });

  it("sends images in the provider's own format", async () => {
    await run(provider, {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
          ],
        },
      ],
    });
    const body = fake.requests[0]!.body;
    if (provider === 'anthropic') {
      expect(body.messages[0].content).toEqual([
        { type: 'text', text: 'what is this?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      ]);
    } else {
      expect(body.messages[1]).toEqual({
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      });
    }
  });

  it('sends documents: PDFs as base64 files, text documents as text', async () => {
    await run(provider, {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', mediaType: 'application/pdf', data: 'JVBERi0=', title: 'spec.pdf' },
            { type: 'document', mediaType: 'text/plain', data: 'plain words', title: 'notes.txt' },
            { type: 'text', text: 'summarise' },
          ],
        },
      ],
    });
    const content = fake.requests[0]!.body.messages.at(-1).content;
    if (provider === 'anthropic') {
      expect(content[0]).toEqual({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'spec.pdf' });
      expect(content[1]).toEqual({ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain words' }, title: 'notes.txt' });
    } else {
      expect(content[0]).toEqual({ type: 'file', file: { filename: 'spec.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } });
      expect(content[1]).toEqual({ type: 'text', text: '# notes.txt\n\nplain words' });
    }
  });

  it("sends a tool loop in the provider's format (the fake refuses what the real API refuses)", async () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'list files' }] },
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
    const events = await run(provider, { messages });
    expect(events.at(-1)).toEqual({ type: 'stop', reason: 'end_turn' });
    const sent = fake.requests[0]!.body.messages;
    if (provider === 'anthropic') {
      expect(sent[1].content[1]).toEqual({ type: 'tool_use', id: 'call_a', name: 'bash', input: { command: 'ls' } });
      expect(sent[2].content.slice(0, 2)).toEqual([
        { type: 'tool_result', tool_use_id: 'call_a', content: 'a.txt' },
        { type: 'tool_result', tool_use_id: 'call_b', content: 'boom', is_error: true },
      ]);
    } else {
      expect(sent.slice(1)).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'list files' }] },
        {
          role: 'assistant',
          content: 'Looking.',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } },
            { id: 'call_b', type: 'function', function: { name: 'bash', arguments: '{"command":"pwd"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: 'a.txt' },
        { role: 'tool', tool_call_id: 'call_b', content: 'boom' },
        { role: 'user', content: [{ type: 'text', text: 'and then?' }] },
      ]);
    }
  });

  it("500 is a retryable provider_unavailable carrying the provider's message", async () => {
    fake.enqueue({ kind: 'error', status: 500, message: 'the model fell over' });
    const err = await failure(run(provider));
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ status: 500, retryable: true, code: 'provider_unavailable' });
    expect(err.message).toContain('the model fell over');
  });

  it('429 is retryable provider_rate_limited with the Retry-After hint', async () => {
    fake.enqueue({ kind: 'error', status: 429, message: 'slow down', retryAfterSec: 3 });
    expect(await failure(run(provider))).toMatchObject({ status: 429, retryable: true, code: 'provider_rate_limited', retryAfterMs: 3000 });
  });

  it('401 is provider_auth, not retryable, and the message never shows the key', async () => {
    fake.rejectKeys.add(KEY);
    const err = await failure(run(provider));
    expect(err).toMatchObject({ status: 401, retryable: false, code: 'provider_auth' });
    expect(err.message).not.toContain(KEY);
    expect(err.message).not.toContain(KEY.slice(-4)); // OpenAI echoes a masked key: sk-***cdef
  });

  it('other 4xx are provider_bad_request, not retryable', async () => {
    fake.enqueue({ kind: 'error', status: 400, message: 'prompt is too long' });
    expect(await failure(run(provider))).toMatchObject({
      status: 400,
      retryable: false,
      code: 'provider_bad_request',
      message: expect.stringContaining('prompt is too long'),
    });
  });

  it('an abort mid-stream ends the iteration promptly, without an error', async () => {
    fake.enqueue({ kind: 'hang', text: 'partial' });
    const ctl = new AbortController();
    const seen: ModelEvent[] = [];
    const started = Date.now();
    for await (const ev of streamModel(request(provider), cred(provider), ctl.signal)) {
      seen.push(ev);
      if (ev.type === 'text_delta') setTimeout(() => ctl.abort(), 50);
    }
    expect(Date.now() - started).toBeLessThan(1500);
    expect(of(seen, 'text_delta').map((e) => e.text)).toEqual(['partial']);
    expect(seen.some((e) => e.type === 'stop')).toBe(false);
  });

  it('an already-aborted signal makes no request', async () => {
    const ctl = new AbortController();
    ctl.abort();
    expect(await run(provider, {}, cred(provider), ctl.signal)).toEqual([]);
    expect(fake.requests).toHaveLength(0);
  });

  it('an unreachable provider is a retryable provider_unavailable', async () => {
    const dead = http.createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const { port } = dead.address() as AddressInfo;
    await new Promise<void>((r) => dead.close(() => r()));
    const base = provider === 'anthropic' ? `http://127.0.0.1:${port}` : `http://127.0.0.1:${port}/v1`;
    expect(await failure(run(provider, {}, { apiKey: KEY, baseUrl: base, kind: 'platform' }))).toMatchObject({ retryable: true, code: 'provider_unavailable' });
  });
});

describe('streams that go wrong after the 200', () => {
  // A provider that answers with a fixed SSE body, to play broken streams.
  async function rawProvider(body: string): Promise<{ url: string; close: () => Promise<void> }> {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(body));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { url, close: () => new Promise<void>((r) => server.close(() => r())) };
  }
  const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

  it('an Anthropic `error` event becomes a ProviderError by its type (overloaded: retryable)', async () => {
    const p = await rawProvider(
      sse('message_start', { type: 'message_start', message: { usage: { input_tokens: 5, output_tokens: 1 } } }) +
        sse('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    );
    const events: ModelEvent[] = [];
    const err = await failure(
      (async () => {
        for await (const e of streamModel(request('anthropic'), { apiKey: KEY, baseUrl: p.url, kind: 'platform' })) events.push(e);
      })(),
    );
    await p.close();
    expect(err).toMatchObject({ retryable: true, code: 'provider_unavailable', message: expect.stringContaining('Overloaded') });
    expect(of(events, 'usage')[0]!.usage.inputTokens).toBe(5); // what was used before the failure is still reported
  });

  it('a stream cut before message_stop / [DONE] is a retryable error, not a silent short answer', async () => {
    const a = await rawProvider(
      sse('message_start', { type: 'message_start', message: { usage: {} } }) +
        sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'half' } }),
    );
    expect(await failure(collect(streamModel(request('anthropic'), { apiKey: KEY, baseUrl: a.url, kind: 'platform' })))).toMatchObject({
      retryable: true,
      code: 'provider_unavailable',
    });
    await a.close();
    const o = await rawProvider(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'half' }, finish_reason: null }] })}\n\n`);
    expect(await failure(collect(streamModel(request('openai'), { apiKey: KEY, baseUrl: `${o.url}/v1`, kind: 'platform' })))).toMatchObject({
      retryable: true,
      code: 'provider_unavailable',
    });
    await o.close();
  });

  it('an OpenAI error chunk inside the stream becomes a ProviderError', async () => {
    const o = await rawProvider(`data: ${JSON.stringify({ error: { message: 'The server had an error', type: 'server_error' } })}\n\n`);
    expect(await failure(collect(streamModel(request('openai'), { apiKey: KEY, baseUrl: `${o.url}/v1`, kind: 'platform' })))).toMatchObject({
      retryable: true,
      code: 'provider_unavailable',
      message: expect.stringContaining('The server had an error'),
    });
    await o.close();
  });
});

describe('request mapping', () => {
  it('reasoningEffort → Anthropic thinking budgets, growing, with max_tokens above the budget', () => {
    const budgets = ['minimal', 'low', 'medium', 'high', 'xhigh', 'max', 'ultra'].map((reasoningEffort) =>
      anthropicLimits({ model: 'claude-opus-4-1', reasoningEffort }),
    );
    expect(budgets.map((b) => b.budget)).toEqual([1024, 2048, 4096, 8192, 16_000, 24_000, 28_000]);
    for (const b of budgets) {
      expect(b.maxTokens).toBeGreaterThan(b.budget!);
      expect(b.maxTokens).toBeLessThanOrEqual(32_000); // Opus 4.1's output ceiling
    }
    for (const off of [null, undefined, 'none', 'off', 'bogus'])
      expect(anthropicLimits({ model: 'claude-sonnet-4-5', reasoningEffort: off })).toEqual({ budget: null, maxTokens: 8192 });
    expect(anthropicLimits({ model: 'claude-3-5-haiku-latest', reasoningEffort: 'high' }).budget).toBeNull(); // no thinking there
    expect(anthropicLimits({ model: 'claude-sonnet-4-5', reasoningEffort: 'low', maxTokens: 20_000 })).toEqual({ budget: 2048, maxTokens: 20_000 });
  });

  it('reasoningEffort → OpenAI reasoning_effort, per model family', () => {
    const table = (m: string) => ['none', 'off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max', 'ultra'].map((e) => openaiReasoningEffort(m, e));
    expect(table('gpt-5')).toEqual(['minimal', 'minimal', 'minimal', 'low', 'medium', 'high', 'high', 'high', 'high']);
    expect(table('gpt-5.1')).toEqual(['none', 'none', 'low', 'low', 'medium', 'high', 'high', 'high', 'high']);
    expect(table('o3')).toEqual(['low', 'low', 'low', 'low', 'medium', 'high', 'high', 'high', 'high']);
    expect(table('gpt-4.1').every((e) => e === null)).toBe(true); // not a reasoning model: the field would be a 400
    expect(openaiReasoningEffort('gpt-5-chat-latest', 'high')).toBeNull();
    expect(openaiReasoningEffort('gpt-5', null)).toBeNull();
    expect(openaiBody(request('openai', { model: 'gpt-4.1', reasoningEffort: 'high', maxTokens: 100 }))).toMatchObject({ max_completion_tokens: 100 });
    expect(openaiBody(request('openai', { model: 'gpt-4.1', reasoningEffort: 'high' }))).not.toHaveProperty('reasoning_effort');
  });

  it('signed reasoning goes back to Anthropic as the first block; unsigned reasoning and empty text are dropped', () => {
    const body = anthropicBody(
      request('anthropic', {
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'q' }] },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'a' },
              { type: 'reasoning', text: 'why', signature: 'sig' },
              { type: 'reasoning', text: 'other provider', signature: null },
              { type: 'text', text: '' },
            ],
          },
          { role: 'assistant', content: [{ type: 'reasoning', text: '', signature: 'opaque', redacted: true }] },
          { role: 'assistant', content: [{ type: 'reasoning', text: 'unsigned only' }] },
          { role: 'user', content: [{ type: 'text', text: 'q2' }] },
        ],
      }),
    ) as { messages: { content: unknown[] }[] };
    expect(body.messages[1]!.content).toEqual([
      { type: 'thinking', thinking: 'why', signature: 'sig' },
      { type: 'text', text: 'a' },
    ]);
    expect(body.messages[2]!.content).toEqual([{ type: 'redacted_thinking', data: 'opaque' }]);
    expect(body.messages).toHaveLength(4); // the message left empty is not sent
  });

  it('a tool loop begun without thinking continues without it (the API would refuse thinking there)', async () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_1', content: 'done' }] },
    ];
    expect(anthropicBody(request('anthropic', { messages, reasoningEffort: 'high' }))).not.toHaveProperty('thinking');
    const signed: ChatMessage[] = [
      messages[0]!,
      { role: 'assistant', content: [{ type: 'reasoning', text: 'hm', signature: 's' }, ...messages[1]!.content] },
      messages[2]!,
    ];
    expect(anthropicBody(request('anthropic', { messages: signed, reasoningEffort: 'high' }))).toHaveProperty('thinking');
    // and the fake (like the API) accepts what was sent
    await collect(streamModel(request('anthropic', { messages, reasoningEffort: 'high' }), cred('anthropic')));
    expect(fake.requests.at(-1)!.body.thinking).toBeUndefined();
  });

  it('OpenAI: reasoning is not sent back and an assistant message left empty is skipped', () => {
    const body = openaiBody(
      request('openai', {
        system: '',
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'q' }] },
          { role: 'assistant', content: [{ type: 'reasoning', text: 'thoughts' }] },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'more' },
              { type: 'text', text: 'a' },
            ],
          },
        ],
      }),
    ) as { messages: unknown[] };
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'q' }] },
      { role: 'assistant', content: 'a' },
    ]);
  });
});

describe('fake provider', () => {
  it('answers non-streaming requests with the JSON message shapes', async () => {
    fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: 'ls' }, id: 'toolu_9', usage: { inputTokens: 3, outputTokens: 2 } });
    const a = await fetch(`${fake.anthropicBaseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(await a.json()).toMatchObject({
      type: 'message',
      role: 'assistant',
      stop_reason: 'tool_use',
      content: [{ type: 'tool_use', id: 'toolu_9', name: 'bash', input: { command: 'ls' } }],
      usage: { input_tokens: 3, output_tokens: 2 },
    });
    const o = await fetch(`${fake.openaiBaseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(await o.json()).toMatchObject({ object: 'chat.completion', choices: [{ message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] });
  });

  it("refuses a missing key and malformed requests in the provider's error shape", async () => {
    const noKey = await fetch(`${fake.anthropicBaseUrl}/v1/messages`, { method: 'POST', headers: { 'anthropic-version': '2023-06-01' }, body: '{}' });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const orphan = await fetch(`${fake.openaiBaseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ model: 'gpt-5', messages: [{ role: 'tool', tool_call_id: 'nope', content: 'x' }] }),
    });
    expect(orphan.status).toBe(400);
    expect(await orphan.json()).toMatchObject({ error: { type: 'invalid_request_error', message: expect.stringContaining("role 'tool'") } });
  });
});
