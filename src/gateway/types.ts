// The gateway's normalized request and stream, shared by every provider adapter and engine.
/** `demo`: the built-in demo model (demo.ts), answered in-process with no key and no cost. */
export type Provider = 'anthropic' | 'openai' | 'demo';

export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; mediaType: string; data: string }
  | { type: 'document'; mediaType: string; data: string; title?: string | null }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; toolUseId: string; content: string; isError?: boolean }
  | { type: 'reasoning'; text: string; signature?: string | null; redacted?: boolean };

export interface ChatMessage {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface ModelRequest {
  provider: Provider;
  model: string;
  system: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
  maxTokens?: number;
  reasoningEffort?: string | null;
  /** OpenAI only: the wire API to call; unset, OPENAI_API_MODE or the catalog's choice for the model. */
  api?: 'responses' | 'chat';
  /**
   * Prompt caching, set per session (null/unset: none). Anthropic: `cache_control` breakpoints on
   * the system prompt (which caches the tools with it) and on the conversation's moving tail;
   * OpenAI: this value as `prompt_cache_key`, so every call of the session lands on the same cache.
   */
  cacheKey?: string | null;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/**
 * `usage` events carry the running totals of one call (cumulative, never increments; the last one
 * is final). `inputTokens` excludes cache reads and writes on both providers, so each counter is
 * priced at its own rate. A stream that ends normally ends with `stop`; an aborted one just ends.
 */
export type ModelEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'reasoning_delta'; text: string }
  | { type: 'reasoning_done'; signature?: string | null; redacted?: boolean }
  | { type: 'tool_call_start'; id: string; name: string }
  | { type: 'tool_call_delta'; id: string; argsPartial: string }
  | { type: 'tool_call'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'usage'; usage: Usage }
  | { type: 'stop'; reason: 'end_turn' | 'tool_use' | 'max_tokens' | 'other' };

export interface ProviderCredential {
  apiKey: string;
  baseUrl: string;
  kind: 'platform' | 'account';
}

/**
 * A provider call that failed. `code`: provider_unavailable (5xx, network, truncated stream),
 * provider_rate_limited (429), provider_auth (401/403), provider_bad_request (other 4xx).
 * The message carries the provider's own words, with anything key-like redacted.
 */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  readonly status: number | null;
  readonly retryable: boolean;
  readonly code: string;
  /** The provider's Retry-After, when it sent one (a hint for the caller's backoff). */
  readonly retryAfterMs: number | null;
  constructor(message: string, opts: { status: number | null; retryable: boolean; code: string; retryAfterMs?: number | null }) {
    super(message);
    this.status = opts.status;
    this.retryable = opts.retryable;
    this.code = opts.code;
    this.retryAfterMs = opts.retryAfterMs ?? null;
  }
}

export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

/**
 * Reasoning signatures are provider-specific. OpenAI's encrypted reasoning (Responses API) is
 * kept in a reasoning block's `signature` behind this tag, so each adapter sends back only its
 * own provider's reasoning (a session may change model between turns).
 */
export const OPENAI_REASONING_TAG = 'openai-encrypted:';

/** Tool input as sent; arguments that are not a JSON object are kept for the tool to reject. */
export function parseToolInput(json: string): Record<string, unknown> {
  if (!json) return {};
  try {
    const v: unknown = JSON.parse(json);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { _unparsed: json };
  } catch {
    return { _unparsed: json };
  }
}

/** The session's budget is reached: the gateway stopped (or refused) the call. */
export class BudgetReachedError extends Error {}
