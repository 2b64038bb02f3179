// Anthropic Messages API, streaming. ANTHROPIC_BASE_URL is read without /v1, as the SDK does.
import { postToProvider, type ProviderAnswer } from './provider-http.js';
import { sseBatches } from './sse.js';
import { networkError, parseStreamJson, providerErrorFrom, streamError, truncatedError } from './http-errors.js';
import {
  emptyUsage,
  OPENAI_REASONING_TAG,
  parseToolInput,
  ProviderError,
  type ChatMessage,
  type ContentBlock,
  type ModelEvent,
  type ModelRequest,
  type ProviderCredential,
  type Usage,
} from './types.js';

/** Extended-thinking budgets by reasoningEffort; none/off (or unknown) means no thinking. */
export const THINKING_BUDGET: Readonly<Record<string, number>> = {
  minimal: 1024, // the API's minimum
  low: 2048,
  medium: 4096,
  high: 8192,
  xhigh: 16_000,
  max: 24_000,
  ultra: 28_000,
};
const DEFAULT_MAX_TOKENS = 8192;
/** Room for the answer itself on top of the thinking budget (thinking counts against max_tokens). */
const ANSWER_ROOM = 4096;
/** Raised max_tokens stay under the smallest output limit of the thinking models (Opus 4/4.1: 32k). */
const RAISED_MAX_TOKENS_CAP = 32_000;

/** Claude 3.x before 3.7 (and older) have no extended thinking: a `thinking` field is a 400 there. */
const supportsThinking = (model: string) => !/^claude-(instant|2|3-(?!7))/.test(model);

function toAnthropicBlock(b: ContentBlock): Record<string, unknown> | null {
  switch (b.type) {
    case 'text':
      return b.text ? { type: 'text', text: b.text } : null; // empty text blocks are a 400
    case 'image':
      return { type: 'image', source: { type: 'base64', media_type: b.mediaType, data: b.data } };
    case 'document': {
      const source =
        b.mediaType === 'text/plain' ? { type: 'text', media_type: 'text/plain', data: b.data } : { type: 'base64', media_type: b.mediaType, data: b.data };
      return { type: 'document', source, ...(b.title ? { title: b.title } : {}) };
    }
    case 'tool_use':
      return { type: 'tool_use', id: b.id, name: b.name, input: b.input };
    case 'tool_result':
      return { type: 'tool_result', tool_use_id: b.toolUseId, content: b.content, ...(b.isError ? { is_error: true } : {}) };
    case 'reasoning':
      // Only signed thinking can go back (a redacted block's opaque data travels in `signature`);
      // unsigned reasoning (Chat Completions', or cut off) and OpenAI's encrypted reasoning are dropped.
      if (!b.signature || b.signature.startsWith(OPENAI_REASONING_TAG)) return null;
      return b.redacted ? { type: 'redacted_thinking', data: b.signature } : { type: 'thinking', thinking: b.text, signature: b.signature };
  }
}

const isThinking = (b: Record<string, unknown>) => b.type === 'thinking' || b.type === 'redacted_thinking';

function toAnthropicMessages(messages: ChatMessage[]): { role: string; content: Record<string, unknown>[] }[] {
  const out: { role: string; content: Record<string, unknown>[] }[] = [];
  for (const m of messages) {
    const content = m.content.map(toAnthropicBlock).filter((b): b is Record<string, unknown> => b !== null);
    // Thinking must open an assistant message; stable partition keeps everything else in order.
    if (m.role === 'assistant') content.sort((a, b) => Number(isThinking(b)) - Number(isThinking(a)));
    if (content.length) out.push({ role: m.role, content }); // an empty message is a 400
  }
  return out;
}

/**
 * With thinking on, an assistant message whose tool calls are being answered must start with a
 * thinking block. A tool loop begun without thinking (effort changed, other provider) therefore
 * continues without it rather than failing.
 */
function thinkingBlockedByHistory(messages: { role: string; content: Record<string, unknown>[] }[]): boolean {
  const last = messages.at(-1);
  if (!last || last.role !== 'user' || !last.content.some((b) => b.type === 'tool_result')) return false;
  const prev = messages.at(-2);
  return !!prev && prev.role === 'assistant' && !isThinking(prev.content[0] ?? {});
}

/** The thinking budget and max_tokens a request is sent with (max_tokens > budget, always). */
export function anthropicLimits(req: Pick<ModelRequest, 'model' | 'maxTokens' | 'reasoningEffort'>): { budget: number | null; maxTokens: number } {
  const base = req.maxTokens ?? DEFAULT_MAX_TOKENS;
  const budget = req.reasoningEffort && supportsThinking(req.model) ? (THINKING_BUDGET[req.reasoningEffort] ?? null) : null;
  if (!budget) return { budget: null, maxTokens: base };
  return { budget, maxTokens: Math.max(base, Math.min(budget + ANSWER_ROOM, RAISED_MAX_TOKENS_CAP), budget + 1) };
}

const EPHEMERAL = { type: 'ephemeral' } as const;

/**
 * Cache breakpoints on the conversation (Anthropic allows four per request; the system prompt
 * takes one): the last block of the last message, so the next call reads everything up to here,
 * and the last block of the user message before it, where the previous call wrote its entry (a
 * turn with many tool calls can move the tail past the API's 20-block look-back).
 */
function markTail(messages: { role: string; content: Record<string, unknown>[] }[]): void {
  const users = messages.flatMap((m, i) => (m.role === 'user' ? [i] : []));
  const marks = new Set([messages.length - 1, ...users.slice(-2)]);
  for (const i of [...marks].sort((a, b) => b - a).slice(0, 2)) {
    const m = messages[i]!;
    for (let k = m.content.length - 1; k >= 0; k--) {
      if (isThinking(m.content[k]!)) continue; // thinking blocks take no breakpoint
      m.content[k] = { ...m.content[k], cache_control: EPHEMERAL };
      break;
    }
  }
}

export function anthropicBody(req: ModelRequest): Record<string, unknown> {
  const messages = toAnthropicMessages(req.messages);
  const caching = !!req.cacheKey;
  if (caching) markTail(messages);
  const limits = anthropicLimits(req);
  const budget = limits.budget && !thinkingBlockedByHistory(messages) ? limits.budget : null;
  return {
    model: req.model,
    max_tokens: budget ? limits.maxTokens : (req.maxTokens ?? DEFAULT_MAX_TOKENS),
    stream: true,
    // Cached, the system prompt is one text block carrying the breakpoint that caches the tools
    // (which come before it in the prompt) together with it.
    ...(req.system ? { system: caching ? [{ type: 'text', text: req.system, cache_control: EPHEMERAL }] : req.system } : {}),
    messages,
    ...(req.tools.length ? { tools: req.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema })) } : {}),
    ...(budget ? { thinking: { type: 'enabled', budget_tokens: budget } } : {}),
  };
}

interface BlockState {
  type: string;
  id: string;
  name: string;
  json: string;
  signature: string | null;
}

const STOP_REASONS = new Set(['end_turn', 'tool_use', 'max_tokens']);

export async function* streamAnthropic(req: ModelRequest, cred: ProviderCredential, signal?: AbortSignal): AsyncGenerator<ModelEvent> {
  let res: ProviderAnswer;
  try {
    res = await postToProvider(
      `${cred.baseUrl.replace(/\/+$/, '')}/v1/messages`,
      { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': cred.apiKey, 'anthropic-version': '2023-06-01' },
      JSON.stringify(anthropicBody(req)),
      signal,
    );
  } catch (err) {
    if (signal?.aborted) return;
    throw networkError(err, 'anthropic');
  }
  if (!res.ok) throw await providerErrorFrom(res, 'anthropic', cred.apiKey);

  const usage: Usage = emptyUsage();
  const blocks = new Map<number, BlockState>();
  let finished = false;
  try {
    read: for await (const batch of sseBatches(res.body))
      for (const rec of batch) {
        const msg = parseStreamJson('anthropic', rec.data);
        switch (msg.type) {
          case 'message_start': {
            const u = msg.message?.usage ?? {};
            usage.inputTokens = u.input_tokens ?? 0;
            usage.outputTokens = u.output_tokens ?? 0;
            usage.cacheReadTokens = u.cache_read_input_tokens ?? 0;
            usage.cacheWriteTokens = u.cache_creation_input_tokens ?? 0;
            yield { type: 'usage', usage: { ...usage } };
            break;
          }
          case 'content_block_start': {
            const cb = msg.content_block ?? {};
            const signature = cb.type === 'redacted_thinking' ? (cb.data ?? null) : cb.signature || null;
            blocks.set(msg.index, { type: cb.type, id: cb.id ?? '', name: cb.name ?? '', json: '', signature });
            if (cb.type === 'tool_use') yield { type: 'tool_call_start', id: cb.id, name: cb.name };
            else if (cb.type === 'text' && cb.text) yield { type: 'text_delta', text: cb.text };
            else if (cb.type === 'thinking' && cb.thinking) yield { type: 'reasoning_delta', text: cb.thinking };
            break;
          }
          case 'content_block_delta': {
            const block = blocks.get(msg.index);
            const d = msg.delta ?? {};
            if (d.type === 'text_delta' && d.text) yield { type: 'text_delta', text: d.text };
            else if (d.type === 'thinking_delta' && d.thinking) yield { type: 'reasoning_delta', text: d.thinking };
            else if (d.type === 'signature_delta' && block) block.signature = (block.signature ?? '') + d.signature;
            else if (d.type === 'input_json_delta' && block && d.partial_json) {
              block.json += d.partial_json;
              yield { type: 'tool_call_delta', id: block.id, argsPartial: d.partial_json };
            }
            break;
          }
          case 'content_block_stop': {
            const block = blocks.get(msg.index);
            if (block?.type === 'tool_use') yield { type: 'tool_call', id: block.id, name: block.name, input: parseToolInput(block.json) };
            else if (block?.type === 'thinking' || block?.type === 'redacted_thinking') {
              yield { type: 'reasoning_done', signature: block.signature, redacted: block.type === 'redacted_thinking' };
            }
            break;
          }
          case 'message_delta': {
            // Counts here are cumulative; newer API versions repeat the input side too.
            const u = msg.usage ?? {};
            if (u.output_tokens != null) usage.outputTokens = u.output_tokens;
            if (u.input_tokens != null) usage.inputTokens = u.input_tokens;
            if (u.cache_read_input_tokens != null) usage.cacheReadTokens = u.cache_read_input_tokens;
            if (u.cache_creation_input_tokens != null) usage.cacheWriteTokens = u.cache_creation_input_tokens;
            yield { type: 'usage', usage: { ...usage } };
            const reason = msg.delta?.stop_reason;
            if (reason) yield { type: 'stop', reason: STOP_REASONS.has(reason) ? reason : 'other' };
            break;
          }
          case 'message_stop':
            finished = true;
            break read; // do not wait for the server to close the connection
          case 'error':
            throw streamError('anthropic', msg.error?.type, msg.error?.message, cred.apiKey);
          default:
            break; // ping, and event types added later
        }
      }
  } catch (err) {
    if (signal?.aborted) return;
    throw err instanceof ProviderError ? err : networkError(err, 'anthropic');
  }
  if (!finished && !signal?.aborted) throw truncatedError('anthropic');
}
