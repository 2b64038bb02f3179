// Reads usage out of provider answers the gateway passes through unchanged (the sandbox's CLIs
// speak the providers' own wire formats): the token counts each API reports, and the characters
// streamed so far for the budget check while an answer is still running.
import { emptyUsage, type Usage } from './types.js';

/** The provider APIs the gateway endpoint serves. */
export type WireApi = 'anthropic_messages' | 'openai_chat' | 'openai_responses';

export interface WireUsage {
  /** One SSE record of a streamed answer. */
  record(data: string): void;
  /** A whole (non-streamed) JSON answer. */
  json(body: unknown): void;
  readonly usage: Usage | null;
  readonly streamedChars: number;
}

type Json = Record<string, any>;

function parse(data: string): Json | null {
  try {
    const v: unknown = JSON.parse(data);
    return v && typeof v === 'object' ? (v as Json) : null;
  } catch {
    return null; // `[DONE]` and anything else that is not JSON carries no usage
  }
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);
const len = (v: unknown): number => (typeof v === 'string' ? v.length : 0);

/** Anthropic: input excludes cache reads and writes already. */
function anthropicUsage(u: Json, into: Usage): void {
  if (u.input_tokens != null) into.inputTokens = num(u.input_tokens);
  if (u.output_tokens != null) into.outputTokens = num(u.output_tokens);
  if (u.cache_read_input_tokens != null) into.cacheReadTokens = num(u.cache_read_input_tokens);
  if (u.cache_creation_input_tokens != null) into.cacheWriteTokens = num(u.cache_creation_input_tokens);
}

/** OpenAI counts cached tokens inside the input; they are priced once, as cache reads. */
function openaiUsage(input: unknown, cached: unknown, output: unknown): Usage {
  const c = num(cached);
  return { ...emptyUsage(), inputTokens: Math.max(0, num(input) - c), outputTokens: num(output), cacheReadTokens: c };
}

/**
 * A Responses `usage` object (hermes' Responses adapter reads it too): cached tokens are inside
 * input_tokens, reasoning tokens inside output_tokens (billed as output), each counted once.
 */
export function responsesUsage(u: Json): Usage {
  return openaiUsage(u.input_tokens, u.input_tokens_details?.cached_tokens, u.output_tokens);
}

export function wireUsage(api: WireApi): WireUsage {
  let usage: Usage | null = null;
  let streamedChars = 0;

  const anthropic = (msg: Json) => {
    if (msg.type === 'message_start' && msg.message?.usage) anthropicUsage(msg.message.usage, (usage ??= emptyUsage()));
    else if (msg.type === 'message_delta' && msg.usage) anthropicUsage(msg.usage, (usage ??= emptyUsage()));
    else if (msg.type === 'content_block_delta') {
      const d = msg.delta ?? {};
      streamedChars += len(d.text) + len(d.thinking) + len(d.partial_json);
    } else if (msg.type === 'message' && msg.usage) anthropicUsage(msg.usage, (usage ??= emptyUsage()));
  };

  const chat = (chunk: Json) => {
    const u = chunk.usage;
    if (u && typeof u === 'object') usage = openaiUsage(u.prompt_tokens, u.prompt_tokens_details?.cached_tokens, u.completion_tokens);
    for (const choice of Array.isArray(chunk.choices) ? chunk.choices : []) {
      const d = choice?.delta ?? choice?.message ?? {};
      streamedChars += len(d.content) + len(d.reasoning_content) + len(d.reasoning) + len(d.refusal);
      for (const tc of Array.isArray(d.tool_calls) ? d.tool_calls : []) streamedChars += len(tc?.function?.arguments);
    }
  };

  const responses = (ev: Json) => {
    // The final answer (`response.completed`, `.incomplete`, `.failed`, or a whole JSON answer).
    const whole: Json | null = ev.object === 'response' ? ev : ev.response && typeof ev.response === 'object' ? ev.response : null;
    const u = whole?.usage;
    if (u && typeof u === 'object') usage = responsesUsage(u);
    if (typeof ev.type === 'string' && ev.type.endsWith('.delta')) streamedChars += len(ev.delta);
  };

  const take = api === 'anthropic_messages' ? anthropic : api === 'openai_chat' ? chat : responses;
  return {
    record(data) {
      const msg = parse(data);
      if (msg) take(msg);
    },
    json(body) {
      if (body && typeof body === 'object') take(body as Json);
    },
    get usage() {
      return usage;
    },
    get streamedChars() {
      return streamedChars;
    },
  };
}
