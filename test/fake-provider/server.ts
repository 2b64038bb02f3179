// A fake model provider on a real port, speaking the real wire formats: Anthropic Messages
// (`POST /v1/messages`, SSE, or JSON when `stream` is not true) and OpenAI Chat Completions
// (`POST /v1/chat/completions`, SSE ending in `data: [DONE]`, or JSON) and OpenAI Responses
// (`POST /v1/responses`, typed SSE events with reasoning summaries and function calls, or JSON).
// Tests script the next
// answers (one FIFO for both APIs) and inspect the requests. Like the real APIs it refuses
// malformed requests with a 400 (`strict`), so wire-format bugs fail here, not in production.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Usage } from '../../src/gateway/types.js';

/**
 * Scripted token counts: the gateway's names, or the short names older tests use.
 * `reasoningTokens` is the part of the output spent reasoning (OpenAI reports it inside output).
 */
export type FakeUsage = Partial<Usage> & Partial<{ input: number; output: number; cacheRead: number; cacheWrite: number; reasoningTokens: number }>;

export type FakeStep =
  | { kind: 'text'; text: string; chunks?: number; usage?: FakeUsage; delayMs?: number /* between chunks */ }
  | { kind: 'reasoning_then_text'; reasoning: string; text: string; usage?: FakeUsage }
  /** `more`: further calls in the same answer (Anthropic wire format only); `reasoning`: thinking (Anthropic, Chat's reasoning_content) or a summary (Responses) before the call. */
  | {
      kind: 'tool_call';
      name: string;
      input: Record<string, unknown>;
      id?: string;
      text?: string;
      usage?: FakeUsage;
      more?: { name: string; input: Record<string, unknown>; id: string }[];
      reasoning?: string /** Responses: the call's tool namespace (codex offers MCP tools as `namespace` tools) */;
      namespace?: string;
    }
  | { kind: 'error'; status: number; message?: string; retryAfterSec?: number } // in the provider's own error JSON
  /** A 200 stream that fails after it started: Anthropic `error`, a Chat `{error}` chunk, Responses `response.failed` (or `error` with `as`). */
  | { kind: 'stream_error'; code?: string; message?: string; as?: 'failed' | 'error'; usage?: FakeUsage }
  | { kind: 'hang'; text?: string }; // headers and a first event, then nothing until the client goes

export interface RecordedRequest {
  path: string;
  headers: Record<string, string>;
  body: any;
}

export interface FakeProvider {
  anthropicBaseUrl: string; // http://127.0.0.1:PORT  (no /v1, as ANTHROPIC_BASE_URL)
  openaiBaseUrl: string; // http://127.0.0.1:PORT/v1 (as OPENAI_BASE_URL)
  requests: RecordedRequest[];
  /** Keys answered with 401 in the provider's shape (a missing key always is). */
  rejectKeys: Set<string>;
  /** Refuse requests the real API would refuse (default true). */
  strict: boolean;
  /** Prompt caching and context size (issue #31): see the block "prompt caching and context window" below. */
  promptCache: PromptCacheSim;
  enqueue(...steps: FakeStep[]): void;
  /**
   * Multiagent: steps for the requests whose system prompt contains `marker` (an agent's prompt),
   * taken before the shared FIFO, so a coordinator and its parallel specialists are scripted
   * each on their own (see the block "per-agent scripts" below).
   */
  enqueueFor(marker: string, ...steps: FakeStep[]): void;
  /** When each request arrived (ms since epoch), in `requests` order. */
  arrivals: number[];
  reset(): void;
  close(): Promise<void>;
}

type Api = 'anthropic' | 'openai';
interface Counts {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  reasoning: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SIGNATURE = 'sig-fake-123';

function split(text: string, chunks: number): string[] {
  const n = Math.max(1, Math.min(chunks, text.length));
  const size = Math.ceil(text.length / n);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [''];
}

function countsOf(step: FakeStep): Counts {
  const u: FakeUsage = ('usage' in step ? step.usage : undefined) ?? {};
  return {
    input: u.inputTokens ?? u.input ?? 10,
    output: u.outputTokens ?? u.output ?? 5,
    cacheRead: u.cacheReadTokens ?? u.cacheRead ?? 0,
    cacheWrite: u.cacheWriteTokens ?? u.cacheWrite ?? 0,
    reasoning: u.reasoningTokens ?? 0,
  };
}

const newId = (prefix: string) => `${prefix}${Math.random().toString(36).slice(2, 12)}`;
/** The reasoning a step starts with, if any. */
const reasoningOf = (step: FakeStep) => (step.kind === 'reasoning_then_text' || step.kind === 'tool_call' ? step.reasoning : undefined);
const textOf = (step: FakeStep) =>
  step.kind === 'text' || step.kind === 'reasoning_then_text' ? step.text : step.kind === 'tool_call' ? (step.text ?? '') : '';
const toolIdOf = (step: Extract<FakeStep, { kind: 'tool_call' }>, api: Api) => step.id ?? newId(api === 'anthropic' ? 'toolu_' : 'call_');

// ---- error shapes ------------------------------------------------------------------------

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};
const OPENAI_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'invalid_request_error',
  403: 'invalid_request_error',
  404: 'invalid_request_error',
  429: 'rate_limit_exceeded',
};

function sendError(res: http.ServerResponse, api: Api, status: number, message: string, headers: Record<string, string> = {}): void {
  const payload =
    api === 'anthropic'
      ? { type: 'error', error: { type: ANTHROPIC_ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error'), message } }
      : { error: { message, type: OPENAI_ERROR_TYPES[status] ?? 'server_error', param: null, code: status === 401 ? 'invalid_api_key' : null } };
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(payload));
}

// ---- request validation: the rules the real APIs enforce that adapters can get wrong --------

function validateAnthropic(body: any): string | null {
  if (!body || typeof body !== 'object') return 'body: a JSON object is required';
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required';
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return 'max_tokens: Field required';
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system)) return 'system: Input should be a valid string or list';
  if (!Array.isArray(body.messages) || !body.messages.length) return 'messages: at least one message is required';
  const thinking = body.thinking?.type === 'enabled';
  if (thinking && !(body.thinking.budget_tokens >= 1024)) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
  if (thinking && body.max_tokens <= body.thinking.budget_tokens) return '`max_tokens` must be greater than `thinking.budget_tokens`';
  for (const t of body.tools ?? []) if (!t?.name || typeof t.input_schema !== 'object') return 'tools: each tool needs a name and an input_schema';
  const msgs: any[] = body.messages;
  for (const [i, m] of msgs.entries()) {
    if (m.role !== 'user' && m.role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    if (typeof m.content === 'string' ? !m.content : !Array.isArray(m.content) || !m.content.length)
      return `messages.${i}: all messages must have non-empty content`;
    if (typeof m.content === 'string') continue;
    for (const [j, b] of m.content.entries()) {
      if (b.type === 'text' && (typeof b.text !== 'string' || !b.text)) return `messages.${i}.content.${j}.text: text content blocks must be non-empty`;
      if (b.type === 'thinking' && !b.signature) return `messages.${i}.content.${j}.thinking.signature: Field required`;
      if ((b.type === 'image' || b.type === 'document') && !b.source?.type) return `messages.${i}.content.${j}.source: Field required`;
      if ((b.type === 'thinking' || b.type === 'redacted_thinking' || b.type === 'tool_use') && m.role !== 'assistant')
        return `messages.${i}.content.${j}: ${b.type} blocks are only allowed in assistant messages`;
    }
    // Every tool_use is answered by a tool_result in the very next (user) message, and a
    // tool_result answers a tool_use of the message just before it.
    const asked = new Set(m.role === 'assistant' ? m.content.filter((b: any) => b.type === 'tool_use').map((b: any) => b.id) : []);
    const next = msgs[i + 1];
    if (asked.size && next) {
      const answered = new Set(Array.isArray(next.content) ? next.content.filter((b: any) => b.type === 'tool_result').map((b: any) => b.tool_use_id) : []);
      for (const id of asked)
        if (!answered.has(id)) return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${id}`;
    }
    if (m.role === 'user') {
      const prev = msgs[i - 1];
      const prevIds = new Set(
        prev?.role === 'assistant' && Array.isArray(prev.content) ? prev.content.filter((b: any) => b.type === 'tool_use').map((b: any) => b.id) : [],
      );
      for (const b of m.content)
        if (b.type === 'tool_result' && !prevIds.has(b.tool_use_id))
          return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}`;
    }
  }
  const last = msgs.at(-1);
  const prev = msgs.at(-2);
  if (
    thinking &&
    last?.role === 'user' &&
    Array.isArray(last.content) &&
    last.content.some((b: any) => b.type === 'tool_result') &&
    prev?.role === 'assistant'
  ) {
    const first = Array.isArray(prev.content) ? prev.content[0]?.type : 'text';
    if (first !== 'thinking' && first !== 'redacted_thinking')
      return `messages.${msgs.length - 2}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block`;
  }
  return null;
}

const isReasoningModel = (model: string) => /^(o\d|gpt-5)/.test(model) && !/-chat/.test(model);

function validateOpenAI(body: any): string | null {
  if (!body || typeof body !== 'object') return 'We could not parse the JSON body of your request.';
  if (typeof body.model !== 'string' || !body.model) return 'you must provide a model parameter';
  if (!Array.isArray(body.messages) || !body.messages.length) return "Invalid 'messages': empty array. Expected an array with minimum length 1.";
  if (body.stream_options && body.stream !== true) return "The 'stream_options' parameter is only allowed when 'stream' is enabled.";
  if (isReasoningModel(body.model) && body.max_tokens !== undefined)
    return "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";
  if (!isReasoningModel(body.model) && body.reasoning_effort !== undefined) return 'Unrecognized request argument supplied: reasoning_effort';
  for (const t of body.tools ?? []) if (t?.type !== 'function' || !t.function?.name) return "Missing required parameter: 'tools[0].function.name'.";
  let pending = new Set<string>();
  for (const [i, m] of (body.messages as any[]).entries()) {
    if (m.role === 'tool') {
      if (!pending.delete(m.tool_call_id)) return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`;
      if (typeof m.content !== 'string' && !Array.isArray(m.content)) return `Invalid value for 'messages[${i}].content'.`;
      continue;
    }
    if (pending.size)
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending].join(', ')}`;
    if (!['system', 'developer', 'user', 'assistant'].includes(m.role))
      return `Invalid value: '${m.role}'. Supported values are: 'system', 'assistant', 'user', 'tool', 'function', and 'developer'.`;
    if (m.role === 'assistant') {
      if ((m.content === null || m.content === undefined || m.content === '') && !m.tool_calls?.length)
        return `Invalid value for 'messages[${i}].content': expected a string, got null.`;
      pending = new Set((m.tool_calls ?? []).map((c: any) => c.id));
      for (const c of m.tool_calls ?? [])
        if (typeof c.function?.arguments !== 'string') return `Invalid type for 'messages[${i}].tool_calls[0].function.arguments': expected a string.`;
    } else if (m.content === null || m.content === undefined || (Array.isArray(m.content) && !m.content.length)) {
      return `Invalid value for 'messages[${i}].content': expected a string or a non-empty array.`;
    }
  }
  return null;
}

// ---- Anthropic ---------------------------------------------------------------------------

async function anthropicStream(res: http.ServerResponse, step: FakeStep, model: string, hangs: Set<http.ServerResponse>): Promise<void> {
  const send = (event: string, data: unknown) => !res.destroyed && res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const u = countsOf(step);
  send('message_start', {
    type: 'message_start',
    message: {
      id: newId('msg_'),
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: u.input, output_tokens: 1, cache_read_input_tokens: u.cacheRead, cache_creation_input_tokens: u.cacheWrite },
    },
  });
  send('ping', { type: 'ping' });
  let index = 0;
  const textBlock = async (text: string, chunks = 3, delayMs = 0) => {
    send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    for (const piece of split(text, chunks)) {
      if (res.destroyed) return;
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
  const thinking = reasoningOf(step);
  if (thinking !== undefined) {
    send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    for (const piece of split(thinking, 2))
      send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: piece } });
    send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: SIGNATURE } });
    send('content_block_stop', { type: 'content_block_stop', index });
    index++;
  }
  const text = textOf(step);
  if (text)
    await textBlock(text, step.kind === 'text' ? (step.chunks ?? 3) : step.kind === 'tool_call' ? 1 : 3, step.kind === 'text' ? (step.delayMs ?? 0) : 0);
  if (step.kind === 'tool_call') {
    for (const call of [{ name: step.name, input: step.input, id: toolIdOf(step, 'anthropic') }, ...(step.more ?? [])]) {
      send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } });
      for (const piece of split(JSON.stringify(call.input), 4))
        send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } });
      send('content_block_stop', { type: 'content_block_stop', index });
      index++;
    }
    stop = 'tool_use';
  }
  // message_delta usage is cumulative; current API versions repeat the input side there too.
  send('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { input_tokens: u.input, output_tokens: u.output, cache_read_input_tokens: u.cacheRead, cache_creation_input_tokens: u.cacheWrite },
  });
  send('message_stop', { type: 'message_stop' });
  res.end();
}

function anthropicJson(step: FakeStep, model: string): Record<string, unknown> {
  const u = countsOf(step);
  const content: Record<string, unknown>[] = [];
  if (reasoningOf(step) !== undefined) content.push({ type: 'thinking', thinking: reasoningOf(step), signature: SIGNATURE });
  if (textOf(step)) content.push({ type: 'text', text: textOf(step) });
  if (step.kind === 'tool_call') {
    content.push({ type: 'tool_use', id: toolIdOf(step, 'anthropic'), name: step.name, input: step.input });
    for (const call of step.more ?? []) content.push({ type: 'tool_use', ...call });
  }
  return {
    id: newId('msg_'),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: step.kind === 'tool_call' ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: u.input, output_tokens: u.output, cache_read_input_tokens: u.cacheRead, cache_creation_input_tokens: u.cacheWrite },
  };
}

// ---- OpenAI ------------------------------------------------------------------------------

async function openaiStream(res: http.ServerResponse, step: FakeStep, model: string, hangs: Set<http.ServerResponse>): Promise<void> {
  const base = { id: newId('chatcmpl-'), object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, system_fingerprint: 'fp_fake' };
  const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    !res.destroyed && res.write(`data: ${JSON.stringify({ ...base, choices, usage: null, ...extra })}\n\n`);
  const delta = (d: Record<string, unknown>, finish: string | null = null) => send([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  delta({ role: 'assistant', content: '', refusal: null });
  if (step.kind === 'hang') {
    if (step.text) delta({ content: step.text });
    hangs.add(res);
    return;
  }
  const u = countsOf(step);
  // OpenAI itself streams no reasoning text; OpenAI-compatible servers use reasoning_content.
  if (reasoningOf(step)) delta({ reasoning_content: reasoningOf(step) });
  const text = textOf(step);
  if (text) {
    for (const piece of split(text, step.kind === 'text' ? (step.chunks ?? 3) : 2)) {
      if (res.destroyed) return;
      delta({ content: piece });
      if (step.kind === 'text' && step.delayMs) await sleep(step.delayMs);
    }
  }
  if (step.kind === 'tool_call') {
    delta({ tool_calls: [{ index: 0, id: toolIdOf(step, 'openai'), type: 'function', function: { name: step.name, arguments: '' } }] });
    for (const piece of split(JSON.stringify(step.input), 4)) delta({ tool_calls: [{ index: 0, function: { arguments: piece } }] });
  }
  delta({}, step.kind === 'tool_call' ? 'tool_calls' : 'stop');
  send([], { usage: openaiUsage(u) }); // stream_options.include_usage: a last chunk with no choices
  if (!res.destroyed) res.write('data: [DONE]\n\n');
  res.end();
}

const openaiUsage = (u: Counts) => ({
  prompt_tokens: u.input + u.cacheRead,
  completion_tokens: u.output,
  total_tokens: u.input + u.cacheRead + u.output,
  prompt_tokens_details: { cached_tokens: u.cacheRead, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: u.reasoning, audio_tokens: 0 },
});

function openaiJson(step: FakeStep, model: string): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: textOf(step) || null, refusal: null };
  if (step.kind === 'tool_call')
    message.tool_calls = [{ id: toolIdOf(step, 'openai'), type: 'function', function: { name: step.name, arguments: JSON.stringify(step.input) } }];
  return {
    id: newId('chatcmpl-'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: step.kind === 'tool_call' ? 'tool_calls' : 'stop' }],
    usage: openaiUsage(countsOf(step)),
  };
}

// ---- OpenAI Responses ---------------------------------------------------------------------

function validateResponses(body: any): string | null {
  if (!body || typeof body !== 'object') return 'We could not parse the JSON body of your request.';
  if (typeof body.model !== 'string' || !body.model) return "Missing required parameter: 'model'.";
  if (typeof body.input !== 'string' && !Array.isArray(body.input)) return "Missing required parameter: 'input'.";
  if (!isReasoningModel(body.model) && body.reasoning?.effort !== undefined)
    return "Unsupported parameter: 'reasoning.effort' is not supported with this model.";
  for (const [i, t] of (body.tools ?? []).entries()) {
    if (t?.type === 'function' && !t.name) return `Missing required parameter: 'tools[${i}].name'.`;
  }
  if (body.reasoning?.summary !== undefined && !['auto', 'concise', 'detailed'].includes(body.reasoning.summary))
    return `Invalid value: '${body.reasoning.summary}'. Supported values are: 'auto', 'concise', and 'detailed'.`;
  for (const [i, x] of (Array.isArray(body.input) ? body.input : []).entries()) {
    // Nothing is kept with store=false: reasoning named only by its id points at nothing (it must
    // come back with its encrypted_content).
    if (body.store === false && x?.type === 'reasoning' && x.id && !x.encrypted_content)
      return `Item with id '${x.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`;
    if (x?.type === 'function_call' && (!x.call_id || !x.name || typeof x.arguments !== 'string'))
      return `Invalid 'input[${i}]': a function_call needs call_id, name and arguments (a string).`;
    if (x?.type === 'function_call_output' && typeof x.output !== 'string' && !Array.isArray(x.output))
      return `Invalid type for 'input[${i}].output': expected a string.`;
    if (x?.type === 'reasoning') {
      if (!Array.isArray(x.summary)) return `Missing required parameter: 'input[${i}].summary'.`;
      if (!isReasoningModel(body.model)) return `Reasoning input items are not supported with the model '${body.model}'.`;
      if (typeof x.encrypted_content !== 'string' || !issuedReasoning.has(x.encrypted_content))
        return `The encrypted content for item input[${i}] could not be verified.`;
    }
    const role = x?.type === 'message' || (x?.type === undefined && x?.role) ? x.role : null;
    if (role && Array.isArray(x.content)) {
      const allowed = role === 'assistant' ? ['output_text', 'refusal'] : ['input_text', 'input_image', 'input_file'];
      for (const part of x.content)
        if (!allowed.includes(part?.type)) return `Invalid value: '${part?.type}'. Supported values for role '${role}' are: ${allowed.join(', ')}.`;
    }
  }
  // A function_call_output answers a function_call earlier in the input (or in the previous response).
  if (Array.isArray(body.input) && !body.previous_response_id) {
    const calls = new Set(body.input.filter((x: any) => x?.type === 'function_call').map((x: any) => x.call_id));
    for (const x of body.input)
      if (x?.type === 'function_call_output' && !calls.has(x.call_id)) return `No tool call found for function call output with call_id ${x.call_id}.`;
  }
  return null;
}

function responsesUsage(u: Counts) {
  return {
    input_tokens: u.input + u.cacheRead,
    input_tokens_details: { cached_tokens: u.cacheRead },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: u.reasoning },
    total_tokens: u.input + u.cacheRead + u.output,
  };
}

/** Encrypted reasoning this fake handed out (asked for with `include`); only these come back valid. */
const issuedReasoning = new Set<string>();

/** The output items of a step, as the finished response lists them. */
function responsesOutput(step: FakeStep, include: string[] = []): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const summary = step.kind === 'reasoning_then_text' ? step.reasoning : step.kind === 'tool_call' ? step.reasoning : undefined;
  if (summary !== undefined) {
    const encrypted = include.includes('reasoning.encrypted_content') ? `gAAAAA${Buffer.from(summary).toString('base64')}${newId('')}` : null;
    if (encrypted) issuedReasoning.add(encrypted);
    out.push({
      type: 'reasoning',
      id: newId('rs_'),
      summary: [{ type: 'summary_text', text: summary }],
      ...(encrypted ? { encrypted_content: encrypted } : {}),
    });
  }
  const text = textOf(step);
  if (text) out.push({ type: 'message', id: newId('msg_'), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] });
  if (step.kind === 'tool_call')
    out.push({
      type: 'function_call',
      id: newId('fc_'),
      call_id: toolIdOf(step, 'openai'),
      name: step.name,
      ...(step.namespace ? { namespace: step.namespace } : {}),
      arguments: JSON.stringify(step.input),
      status: 'completed',
    });
  return out;
}

function responsesJson(step: FakeStep, model: string, include: string[]): Record<string, unknown> {
  return {
    id: newId('resp_'),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    model,
    output: responsesOutput(step, include),
    usage: responsesUsage(countsOf(step)),
  };
}

async function responsesStream(
  res: http.ServerResponse,
  step: FakeStep,
  model: string,
  hangs: Set<http.ServerResponse>,
  include: string[] = [],
): Promise<void> {
  let seq = 0;
  const send = (type: string, data: Record<string, unknown>) =>
    !res.destroyed && res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  const response = {
    id: newId('resp_'),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    model,
    output: [] as unknown[],
    usage: null as unknown,
  };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  send('response.created', { response: { ...response, status: 'in_progress' } });
  send('response.in_progress', { response: { ...response, status: 'in_progress' } });
  const items =
    step.kind === 'hang'
      ? step.text
        ? [{ type: 'message', id: newId('msg_'), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: step.text, annotations: [] }] }]
        : []
      : responsesOutput(step, include);
  for (const [output_index, item] of items.entries() as IterableIterator<[number, any]>) {
    if (item.type === 'reasoning') {
      send('response.output_item.added', { output_index, item: { ...item, summary: [] } });
      send('response.reasoning_summary_part.added', { item_id: item.id, output_index, summary_index: 0, part: { type: 'summary_text', text: '' } });
      for (const piece of split(item.summary[0].text, 2))
        send('response.reasoning_summary_text.delta', { item_id: item.id, output_index, summary_index: 0, delta: piece });
      send('response.reasoning_summary_text.done', { item_id: item.id, output_index, summary_index: 0, text: item.summary[0].text });
      send('response.reasoning_summary_part.done', { item_id: item.id, output_index, summary_index: 0, part: item.summary[0] });
    } else if (item.type === 'message') {
      const text: string = item.content[0].text;
      send('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      send('response.content_part.added', { item_id: item.id, output_index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      const chunks = step.kind === 'text' ? (step.chunks ?? 3) : 2;
      for (const piece of split(text, chunks)) {
        if (res.destroyed) return;
        send('response.output_text.delta', { item_id: item.id, output_index, content_index: 0, delta: piece });
        if (step.kind === 'text' && step.delayMs) await sleep(step.delayMs);
      }
      if (step.kind === 'hang') {
        hangs.add(res);
        return;
      }
      send('response.output_text.done', { item_id: item.id, output_index, content_index: 0, text });
      send('response.content_part.done', { item_id: item.id, output_index, content_index: 0, part: item.content[0] });
    } else if (item.type === 'function_call') {
      send('response.output_item.added', { output_index, item: { ...item, arguments: '', status: 'in_progress' } });
      for (const piece of split(item.arguments, 4)) send('response.function_call_arguments.delta', { item_id: item.id, output_index, delta: piece });
      send('response.function_call_arguments.done', { item_id: item.id, output_index, arguments: item.arguments });
    }
    send('response.output_item.done', { output_index, item });
  }
  if (step.kind === 'hang') {
    hangs.add(res);
    return;
  }
  send('response.completed', { response: { ...response, status: 'completed', output: items, usage: responsesUsage(countsOf(step)) } });
  res.end();
}

// ---- failures inside a 200 stream ----------------------------------------------------------

function streamFailure(res: http.ServerResponse, api: Api, responses: boolean, step: Extract<FakeStep, { kind: 'stream_error' }>, model: string): void {
  const send = (event: string | null, data: Record<string, unknown>) => res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
  const message = step.message ?? 'The server had an error while processing your request.';
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (api === 'anthropic') {
    send('error', { type: 'error', error: { type: step.code ?? 'overloaded_error', message } });
  } else if (!responses) {
    send(null, { error: { message, type: step.code ?? 'server_error', param: null, code: null } });
  } else {
    const response = { id: newId('resp_'), object: 'response', created_at: Math.floor(Date.now() / 1000), model, output: [] };
    send('response.created', { type: 'response.created', sequence_number: 0, response: { ...response, status: 'in_progress', usage: null } });
    if (step.as === 'error') send('error', { type: 'error', sequence_number: 1, code: step.code ?? 'server_error', message, param: null });
    else
      send('response.failed', {
        type: 'response.failed',
        sequence_number: 1,
        response: {
          ...response,
          status: 'failed',
          error: { code: step.code ?? 'server_error', message },
          usage: step.usage ? responsesUsage(countsOf(step)) : null,
        },
      });
  }
  res.end();
}

// ---- prompt caching and context window (issue #31) -----------------------------------------
// Off unless a test turns it on (`fake.promptCache.simulate = true`): a step without scripted
// usage is then counted from the request itself (4 characters a token, as the gateway's
// estimates) and reports cache usage as each provider does. Anthropic caches the prompt prefix up
// to each `cache_control` breakpoint (order: tools, system, messages; markers are not content)
// and reads the longest prefix written before (cache_read_input_tokens), writing the part up to
// its last breakpoint that was not cached (cache_creation_input_tokens); without breakpoints it
// caches nothing. OpenAI caches automatically per `prompt_cache_key` (none: one shared cache) at
// message boundaries and reports the cached part inside the prompt (cached_tokens).
// `contextWindow` (tokens): a longer prompt is refused with the provider's own 400.

export interface PromptCacheSim {
  simulate: boolean;
  contextWindow: number | null;
  /** Prefix hashes seen, with their token counts. */
  entries: Map<string, number>;
}

const tokensOf = (chars: number) => Math.ceil(chars / 4);

function withoutMarkers(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutMarkers);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (k !== 'cache_control') out[k] = withoutMarkers(x);
    return out;
  }
  return v;
}

/** The prompt as a list of units (each a JSON string), and which units end with a breakpoint. */
function promptUnits(api: Api, responses: boolean, body: any): { units: string[]; marks: number[]; key: string } {
  const units: string[] = [];
  const marks: number[] = [];
  const add = (v: unknown, marked = false) => {
    units.push(JSON.stringify(withoutMarkers(v)));
    if (marked) marks.push(units.length - 1);
  };
  if (api === 'anthropic') {
    for (const t of body.tools ?? []) add(t, !!t.cache_control);
    const system = typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : (body.system ?? []);
    for (const b of system) add(b, !!b.cache_control);
    for (const m of body.messages ?? []) {
      const content = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
      add({ role: m.role });
      for (const b of content) add(b, !!b.cache_control);
    }
    return { units, marks, key: '' };
  }
  for (const t of body.tools ?? []) add(t);
  if (responses) {
    if (body.instructions) add({ instructions: body.instructions });
    for (const x of typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input) add(x);
  } else {
    for (const m of body.messages ?? []) add(m);
  }
  return { units, marks, key: typeof body.prompt_cache_key === 'string' ? body.prompt_cache_key : '' };
}

/** The prompt's size in tokens and what the cache did with it; null when the simulation is off. */
function simulatedCounts(sim: PromptCacheSim, api: Api, responses: boolean, body: any): { total: number; read: number; write: number } {
  const { units, marks, key } = promptUnits(api, responses, body);
  const hash = createHash('sha256').update(`${api}:${key}:`);
  const prefixes: { hash: string; tokens: number }[] = [];
  let chars = 0;
  for (const u of units) {
    hash.update(u);
    chars += u.length;
    prefixes.push({ hash: hash.copy().digest('hex'), tokens: tokensOf(chars) });
  }
  const total = tokensOf(chars);
  let read = 0;
  if (api === 'anthropic') {
    // The longest prefix written before that ends at or before the last breakpoint.
    const last = marks.at(-1) ?? -1;
    for (let i = last; i >= 0; i--) {
      const hit = sim.entries.get(prefixes[i]!.hash);
      if (hit !== undefined) {
        read = hit;
        break;
      }
    }
    const upTo = last >= 0 ? prefixes[last]!.tokens : 0;
    for (const i of marks) sim.entries.set(prefixes[i]!.hash, prefixes[i]!.tokens);
    return { total, read, write: Math.max(0, upTo - read) };
  }
  for (let i = prefixes.length - 1; i >= 0; i--) {
    const hit = sim.entries.get(prefixes[i]!.hash);
    if (hit !== undefined) {
      read = hit;
      break;
    }
  }
  for (const p of prefixes) sim.entries.set(p.hash, p.tokens);
  return { total, read, write: 0 };
}

/** The provider's refusal of a prompt over the window, in its own words. */
function contextRefusal(api: Api, tokens: number, window: number): string {
  return api === 'anthropic'
    ? `prompt is too long: ${tokens} tokens > ${window} maximum`
    : `This model's maximum context length is ${window} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`;
}

// ---- per-agent scripts (multiagent, issue #32) -----------------------------------------------
// A coordinator and its specialists call the provider at once: a script per agent, picked by a
// marker in the request's system prompt (Anthropic `system`, Chat's system/developer messages,
// Responses' `instructions`). A coordinator is scripted to delegate with ordinary tool_call steps
// naming the delegation tools (`delegate`, `message_thread`, `wait_threads`).

function systemTextOf(body: any): string {
  if (!body || typeof body !== 'object') return '';
  const parts: string[] = [];
  if (typeof body.system === 'string') parts.push(body.system);
  else if (Array.isArray(body.system)) for (const b of body.system) parts.push(String(b?.text ?? ''));
  if (typeof body.instructions === 'string') parts.push(body.instructions);
  for (const m of Array.isArray(body.messages) ? body.messages : [])
    if (m?.role === 'system' || m?.role === 'developer') parts.push(typeof m.content === 'string' ? m.content : JSON.stringify(m.content));
  return parts.join('\n');
}

function takeScripted(scripts: Map<string, FakeStep[]>, body: any): FakeStep | undefined {
  if (!scripts.size) return undefined;
  const system = systemTextOf(body);
  for (const [marker, steps] of scripts) if (steps.length && system.includes(marker)) return steps.shift();
  return undefined;
}

// ---- server ------------------------------------------------------------------------------

export async function startFakeProvider(): Promise<FakeProvider> {
  let queue: FakeStep[] = [];
  const graderCalls = new Map<string, number>();
  const scripts = new Map<string, FakeStep[]>();
  const arrivals: number[] = [];
  const requests: RecordedRequest[] = [];
  const hangs = new Set<http.ServerResponse>();
  const fake = {
    rejectKeys: new Set<string>(),
    strict: true,
    promptCache: { simulate: false, contextWindow: null, entries: new Map() } as PromptCacheSim,
  };

  const handle = (req: http.IncomingMessage, res: http.ServerResponse, raw: string) => {
    let body: any = null;
    try {
      body = JSON.parse(raw || 'null');
    } catch {
      body = null;
    }
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    const path = (req.url ?? '').split('?')[0]!;
    requests.push({ path, headers, body });
    arrivals.push(Date.now());
    const responses = path === '/v1/responses';
    const api: Api | null = path === '/v1/messages' ? 'anthropic' : path === '/v1/chat/completions' || responses ? 'openai' : null;
    if (!api) return sendError(res, 'openai', 404, `Unknown request URL: ${req.method} ${path}`);
    if (req.method !== 'POST') return sendError(res, api, 405, `Method ${req.method} not allowed`);

    const key = api === 'anthropic' ? headers['x-api-key'] : /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1];
    if (!key) return sendError(res, api, 401, api === 'anthropic' ? 'x-api-key header is required' : "You didn't provide an API key.");
    if (fake.rejectKeys.has(key))
      return sendError(res, api, 401, api === 'anthropic' ? 'invalid x-api-key' : `Incorrect API key provided: ${key.slice(0, 3)}***${key.slice(-4)}.`);
    if (api === 'anthropic' && !headers['anthropic-version']) return sendError(res, api, 400, 'anthropic-version: header is required');
    if (fake.strict) {
      const invalid = api === 'anthropic' ? validateAnthropic(body) : responses ? validateResponses(body) : validateOpenAI(body);
      if (invalid) return sendError(res, api, 400, invalid);
    }

    let step: FakeStep | undefined;
    const next = (): FakeStep => graderStep(body, graderCalls) ?? takeScripted(scripts, body) ?? queue.shift() ?? { kind: 'text', text: 'ok' };
    const sim = fake.promptCache;
    if ((sim.simulate || sim.contextWindow !== null) && body && typeof body === 'object') {
      const counts = simulatedCounts(sim, api, responses, body);
      if (sim.contextWindow !== null && counts.total > sim.contextWindow) {
        if (api === 'anthropic') return sendError(res, api, 400, contextRefusal(api, counts.total, sim.contextWindow));
        res.writeHead(400, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            error: {
              message: contextRefusal(api, counts.total, sim.contextWindow),
              type: 'invalid_request_error',
              param: 'messages',
              code: 'context_length_exceeded',
            },
          }),
        );
        return;
      }
      step = next();
      if (sim.simulate && !('usage' in step && step.usage) && step.kind !== 'error' && step.kind !== 'hang') {
        const usage = {
          input: counts.total - counts.read - counts.write,
          cacheRead: counts.read,
          cacheWrite: counts.write,
          output: tokensOf(textOf(step).length + 20),
        };
        step = { ...step, usage } as FakeStep;
      }
    }
    step ??= next();
    if (step.kind === 'error') {
      return sendError(
        res,
        api,
        step.status,
        step.message ?? `fake error ${step.status}`,
        step.retryAfterSec !== undefined ? { 'retry-after': String(step.retryAfterSec) } : {},
      );
    }
    const model = typeof body?.model === 'string' ? body.model : 'fake';
    if (step.kind === 'stream_error') {
      if (body?.stream === true) return streamFailure(res, api, responses, step, model);
      return sendError(res, api, 500, step.message ?? 'fake stream error');
    }
    const include: string[] = Array.isArray(body?.include) ? body.include : [];
    if (body?.stream !== true) {
      if (step.kind === 'hang') return void hangs.add(res); // no headers at all until the client gives up
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(api === 'anthropic' ? anthropicJson(step, model) : responses ? responsesJson(step, model, include) : openaiJson(step, model)));
      return;
    }
    void (api === 'anthropic'
      ? anthropicStream(res, step, model, hangs)
      : responses
        ? responsesStream(res, step, model, hangs, include)
        : openaiStream(res, step, model, hangs));
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
    res.on('close', () => hangs.delete(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    anthropicBaseUrl: `http://127.0.0.1:${port}`,
    openaiBaseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...steps: FakeStep[]) => void queue.push(...steps),
    enqueueFor(marker: string, ...steps: FakeStep[]) {
      scripts.set(marker, [...(scripts.get(marker) ?? []), ...steps]);
    },
    arrivals,
    reset() {
      queue = [];
      graderCalls.clear();
      scripts.clear();
      arrivals.length = 0;
      requests.length = 0;
      fake.rejectKeys.clear();
      fake.strict = true;
      fake.promptCache = { simulate: false, contextWindow: null, entries: new Map() };
    },
    async close() {
      for (const r of hangs) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

// ---- outcome grader (issue #33) ----
// A request of the service's outcome grader (its system prompt carries `[outcome-grader]`) is
// answered from a directive in the rubric, not from the FIFO: `grader-script: <step> <step> …`,
// one step per grader call of that rubric, in order (the last repeats):
//   pass       a verdict `satisfied`, every criterion passed
//   fail       `needs_revision`: the first criterion fails ("not yet: <criterion>")
//   failed     `failed` (the task cannot be done)
//   malformed  prose with no JSON object
//   hang       headers and a first event, then nothing (an interrupt during the evaluation)
//   costly     `pass` with usage of 20k input tokens (a budget of one cent reached while grading)
//   read:<path>  a read_file tool call of <path> (the next step answers after its result)
// Criteria are the rubric's `- ` list items. Without a directive a grader request gets `pass`.
function allText(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) allText(x, out);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) allText(x, out);
  return out;
}

function graderStep(body: any, calls: Map<string, number>): FakeStep | null {
  const text = allText(body).join('\n');
  if (!text.includes('[outcome-grader]')) return null;
  const rubric = /<rubric>\n([\s\S]*?)\n<\/rubric>/.exec(text)?.[1] ?? '';
  const script = (/grader-script:\s*([^\n]*)/.exec(rubric)?.[1] ?? 'pass').trim().split(/\s+/);
  const n = calls.get(rubric) ?? 0;
  calls.set(rubric, n + 1);
  const word = script[Math.min(n, script.length - 1)]!;
  const criteria = rubric
    .split('\n')
    .filter((l) => /^\s*- /.test(l))
    .map((l) => l.replace(/^\s*- /, '').trim());
  const verdict = (result: string, failFirst: boolean) =>
    JSON.stringify({
      result,
      criteria: criteria.map((c, i) => ({ criterion: c, passed: !(failFirst && i === 0), explanation: failFirst && i === 0 ? `not yet: ${c}` : 'met' })),
      summary: result === 'satisfied' ? 'every criterion is met' : result === 'failed' ? 'the task cannot be done' : 'one criterion is not met',
    });
  if (word.startsWith('read:')) return { kind: 'tool_call', name: 'read_file', input: { path: word.slice(5) }, id: `toolu_grader_${n}` };
  switch (word) {
    case 'fail':
      return { kind: 'text', text: verdict('needs_revision', true) };
    case 'failed':
      return { kind: 'text', text: verdict('failed', true) };
    case 'malformed':
      return { kind: 'text', text: 'I think it mostly looks fine, well done.' };
    case 'hang':
      return { kind: 'hang' };
    case 'costly':
      return { kind: 'text', text: verdict('satisfied', false), usage: { input: 20_000, output: 100 } };
    default:
      return { kind: 'text', text: verdict('satisfied', false) };
  }
}
