// Provider adapters against the fake provider, and the SSE parser at every split point.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSse, sseBatches } from '../../src/gateway/sse.js';
import { streamModel } from '../../src/gateway/gateway.js';
import { ProviderError, type ModelEvent, type ModelRequest } from '../../src/gateway/types.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';

async function* chunks(parts: string[]) {
  for (const p of parts) yield new TextEncoder().encode(p);
}
async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('SSE parser', () => {
  const stream = 'event: a\ndata: {"x":1}\n\n: comment\r\nevent: b\r\ndata: line1\r\ndata: line2\r\n\r\ndata: [DONE]\n\n';
  it('parses a whole stream', async () => {
    expect(await collect(parseSse(chunks([stream])))).toEqual([
      { event: 'a', data: '{"x":1}' },
      { event: 'b', data: 'line1\nline2' },
      { event: null, data: '[DONE]' },
    ]);
  });
  it('gives the same records however the bytes are split', async () => {
    const whole = await collect(parseSse(chunks([stream])));
    for (let i = 1; i < stream.length; i++) {
      expect(await collect(parseSse(chunks([stream.slice(0, i), stream.slice(i)])))).toEqual(whole);
    }
    expect(await collect(parseSse(chunks(stream.split(''))))).toEqual(whole);
  });
  it('gives the records of one network chunk as one batch (one await per chunk, not per record)', async () => {
    const batches = await collect(sseBatches(chunks([stream.slice(0, 40), stream.slice(40)])));
    expect(batches.map((b) => b.map((r) => r.event))).toEqual([['a'], ['b', null]]);
  });
});

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake.close();
});

const request = (provider: 'anthropic' | 'openai', extra: Partial<ModelRequest> = {}): ModelRequest => ({
  provider,
  model: provider === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-5',
  system: 'sys',
  tools: [{ name: 'bash', description: 'run', inputSchema: { type: 'object' } }],
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'hi' },
        { type: 'image', mediaType: 'image/png', data: 'AAAA' },
      ],
    },
  ],
  ...(provider === 'openai' ? { api: 'chat' as const } : {}), // Chat Completions here; Responses: test/gateway/responses.test.ts
  ...extra,
});
const cred = (provider: 'anthropic' | 'openai') => ({
  apiKey: 'k',
  baseUrl: provider === 'anthropic' ? fake.anthropicBaseUrl : fake.openaiBaseUrl,
  kind: 'platform' as const,
});

describe.each(['anthropic', 'openai'] as const)('%s adapter', (provider) => {
  it('streams text deltas and usage', async () => {
    fake.reset();
    fake.enqueue({ kind: 'text', text: 'abcdefghij', chunks: 5, usage: { input: 123, output: 45, cacheRead: 6 } });
    const events = await collect(streamModel(request(provider), cred(provider)));
    expect(
      events
        .filter((e) => e.type === 'text_delta')
        .map((e) => (e as { text: string }).text)
        .join(''),
    ).toBe('abcdefghij');
    expect(events.filter((e) => e.type === 'text_delta').length).toBeGreaterThan(1);
    const usage = events.filter((e) => e.type === 'usage').at(-1) as Extract<ModelEvent, { type: 'usage' }>;
    expect(usage.usage).toMatchObject({ inputTokens: 123, outputTokens: 45, cacheReadTokens: 6 });
    expect(events.at(-1)).toEqual({ type: 'stop', reason: 'end_turn' });
  });

  it('assembles a tool call from many argument fragments', async () => {
    fake.reset();
    const input = { command: 'echo "a long command with quotes and {braces}"', timeout_ms: 5000 };
    fake.enqueue({ kind: 'tool_call', name: 'bash', input, id: 'call_1' });
    const events = await collect(streamModel(request(provider), cred(provider)));
    expect(events.filter((e) => e.type === 'tool_call_delta').length).toBeGreaterThan(1);
    expect(events.find((e) => e.type === 'tool_call')).toEqual({ type: 'tool_call', id: 'call_1', name: 'bash', input });
  });

  it("sends images in the provider's own format", async () => {
    fake.reset();
    await collect(streamModel(request(provider), cred(provider)));
    const body = fake.requests[0]!.body;
    if (provider === 'anthropic') {
      expect(body.messages[0].content[1]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } });
    } else {
      expect(body.messages[1].content[1]).toEqual({ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } });
    }
  });

  it('500 is a retryable ProviderError, 401 is provider_auth', async () => {
    fake.reset();
    fake.enqueue({ kind: 'error', status: 500 });
    await expect(collect(streamModel(request(provider), cred(provider)))).rejects.toMatchObject({ retryable: true, code: 'provider_unavailable' });
    fake.rejectKeys.add('k');
    const err = await collect(streamModel(request(provider), cred(provider))).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ retryable: false, code: 'provider_auth', status: 401 });
  });

  it('an abort ends a hanging stream promptly', async () => {
    fake.reset();
    fake.enqueue({ kind: 'hang', text: 'x' });
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 200);
    const started = Date.now();
    await collect(streamModel(request(provider), cred(provider), ctl.signal));
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('a provider answer read to its last record', () => {
  it('leaves the keep-alive connection for the next call, even when the server ends the body a moment later', async () => {
    // A server that sends message_stop, then ends the response only 300 ms later: the reader stops
    // at message_stop; the rest is drained, not the connection destroyed (a new one per call).
    let connections = 0;
    const record = (data: object) => `event: ${(data as { type: string }).type}\ndata: ${JSON.stringify(data)}\n\n`;
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          record({ type: 'message_start', message: { usage: { input_tokens: 1, output_tokens: 0 } } }) +
            record({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
            record({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } }) +
            record({ type: 'content_block_stop', index: 0 }) +
            record({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } }) +
            record({ type: 'message_stop' }),
        );
        setTimeout(() => res.end(), 300);
      });
    });
    server.on('connection', () => void connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (let i = 0; i < 3; i++) {
        const events = await collect(streamModel(request('anthropic'), { apiKey: 'k', baseUrl, kind: 'platform' as const }));
        expect(events.at(-1)).toEqual({ type: 'stop', reason: 'end_turn' });
        await new Promise((resolve) => setTimeout(resolve, 400)); // the body has ended: the connection is idle in the pool
      }
      expect(connections).toBe(1);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
