// A fake model provider on a real port, speaking the real wire formats: Anthropic Messages
// (`POST /v1/messages`, SSE) and OpenAI Chat Completions (`POST /v1/chat/completions`, SSE
// ending in `data: [DONE]`). Tests script the next answers and inspect the requests.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeUsage { input: number; output: number; cacheRead: number; cacheWrite: number }

export type FakeStep =
  | { kind: 'text'; text: string; chunks?: number; usage?: Partial<FakeUsage>; delayMs?: number }
  | { kind: 'reasoning_then_text'; reasoning: string; text: string; usage?: Partial<FakeUsage> }
  | { kind: 'tool_call'; name: string; input: Record<string, unknown>; id?: string; text?: string; usage?: Partial<FakeUsage> }
  | { kind: 'error'; status: number; message?: string }
  | { kind: 'hang'; text?: string };

export interface RecordedRequest { path: string; headers: Record<string, string>; body: any }

export interface FakeProvider {
  anthropicBaseUrl: string;
  openaiBaseUrl: string;
  requests: RecordedRequest[];
  rejectKeys: Set<string>;
  enqueue(...steps: FakeStep[]): void;
  reset(): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function split(text: string, chunks: number): string[] {
  const n = Math.max(1, Math.min(chunks, text.length));
  const size = Math.ceil(text.length / n);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [''];
}

const usageOf = (u: Partial<FakeUsage> = {}): FakeUsage => ({ input: u.input ?? 10, output: u.output ?? 5, cacheRead: u.cacheRead ?? 0, cacheWrite: u.cacheWrite ?? 0 });

async function anthropicStream(res: http.ServerResponse, step: FakeStep, model: string, hangs: Set<http.ServerResponse>): Promise<void> {
  const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const u = usageOf('usage' in step ? step.usage : undefined);
  send('message_start', { type: 'message_start', message: { id: 'msg_fake', type: 'message', role: 'assistant', model, content: [], stop_reason: null, usage: { input_tokens: u.input, output_tokens: 1, cache_read_input_tokens: u.cacheRead, cache_creation_input_tokens: u.cacheWrite } } });
  send('ping', { type: 'ping' });
  let index = 0;
  const textBlock = async (text: string, chunks = 3, delayMs = 0) => {
    send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    for (const piece of split(text, chunks)) {
      send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
      if (delayMs) await sleep(delayMs);
    }
    send('content_block_stop', { type: 'content_block_stop', index });
    index++;
  };
  if (step.kind === 'hang') {
    if (step.text) await textBlock(step.text, 1);
    hangs.add(res);
    return; // never ends: interrupts and timeouts are the test
  }
  let stop = 'end_turn';
  if (step.kind === 'text') await textBlock(step.text, step.chunks ?? 3, step.delayMs ?? 0);
  if (step.kind === 'reasoning_then_text') {
    send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '' } });
    for (const piece of split(step.reasoning, 2)) send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: piece } });
    send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: 'sig-fake-123' } });
    send('content_block_stop', { type: 'content_block_stop', index });
    index++;
    await textBlock(step.text);
  }
  if (step.kind === 'tool_call') {
    if (step.text) await textBlock(step.text, 1);
    const id = step.id ?? `toolu_${Math.random().toString(36).slice(2, 10)}`;
    send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name: step.name, input: {} } });
    const json = JSON.stringify(step.input);
    for (const piece of split(json, 4)) send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } });
    send('content_block_stop', { type: 'content_block_stop', index });
    stop = 'tool_use';
  }
  send('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: u.output } });
  send('message_stop', { type: 'message_stop' });
  res.end();
}

async function openaiStream(res: http.ServerResponse, step: FakeStep, model: string, hangs: Set<http.ServerResponse>): Promise<void> {
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
  const send = (choices: unknown[], extra: Record<string, unknown> = {}) => res.write(`data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  send([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
  if (step.kind === 'hang') {
    if (step.text) send([{ index: 0, delta: { content: step.text }, finish_reason: null }]);
    hangs.add(res);
    return;
  }
  const u = usageOf('usage' in step ? step.usage : undefined);
  let finish = 'stop';
  const text = step.kind === 'text' || step.kind === 'reasoning_then_text' ? step.text : step.kind === 'tool_call' ? (step.text ?? '') : '';
  if (step.kind === 'reasoning_then_text') send([{ index: 0, delta: { reasoning_content: step.reasoning }, finish_reason: null }]);
  if (text) for (const piece of split(text, step.kind === 'text' ? (step.chunks ?? 3) : 2)) {
    send([{ index: 0, delta: { content: piece }, finish_reason: null }]);
    if (step.kind === 'text' && step.delayMs) await sleep(step.delayMs);
  }
  if (step.kind === 'tool_call') {
    const id = step.id ?? `call_${Math.random().toString(36).slice(2, 10)}`;
    const json = JSON.stringify(step.input);
    send([{ index: 0, delta: { tool_calls: [{ index: 0, id, type: 'function', function: { name: step.name, arguments: '' } }] }, finish_reason: null }]);
    for (const piece of split(json, 4)) send([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] }, finish_reason: null }]);
    finish = 'tool_calls';
  }
  send([{ index: 0, delta: {}, finish_reason: finish }]);
  send([], { usage: { prompt_tokens: u.input + u.cacheRead, completion_tokens: u.output, total_tokens: u.input + u.cacheRead + u.output, prompt_tokens_details: { cached_tokens: u.cacheRead } } });
  res.write('data: [DONE]\n\n');
  res.end();
}

export async function startFakeProvider(): Promise<FakeProvider> {
  let queue: FakeStep[] = [];
  const requests: RecordedRequest[] = [];
  const rejectKeys = new Set<string>();
  const hangs = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: any = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      } catch {
        body = null;
      }
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      requests.push({ path: req.url ?? '', headers, body });
      const isAnthropic = req.url === '/v1/messages';
      const isOpenAI = req.url === '/v1/chat/completions';
      if (!isAnthropic && !isOpenAI) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      const key = isAnthropic ? headers['x-api-key'] : (headers.authorization ?? '').replace(/^Bearer /, '');
      if (!key || rejectKeys.has(key)) {
        const payload = isAnthropic
          ? { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }
          : { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } };
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
        return;
      }
      const step: FakeStep = queue.shift() ?? { kind: 'text', text: 'ok' };
      if (step.kind === 'error') {
        const payload = isAnthropic
          ? { type: 'error', error: { type: step.status >= 500 ? 'api_error' : 'invalid_request_error', message: step.message ?? `fake error ${step.status}` } }
          : { error: { message: step.message ?? `fake error ${step.status}`, type: 'server_error' } };
        res.writeHead(step.status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
        return;
      }
      const model = body?.model ?? 'fake';
      void (isAnthropic ? anthropicStream(res, step, model, hangs) : openaiStream(res, step, model, hangs));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    anthropicBaseUrl: `http://127.0.0.1:${port}`,
    openaiBaseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    rejectKeys,
    enqueue: (...steps) => void queue.push(...steps),
    reset() {
      queue = [];
      requests.length = 0;
      rejectKeys.clear();
    },
    async close() {
      for (const r of hangs) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
