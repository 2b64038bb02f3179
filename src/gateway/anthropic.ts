// Anthropic Messages API, streaming. ANTHROPIC_BASE_URL is read without /v1, as the SDK does.
import { parseSse } from './sse.js';
import { providerErrorFrom, networkError } from './http-errors.js';
import { emptyUsage, ProviderError, type ChatMessage, type ContentBlock, type ModelEvent, type ModelRequest, type ProviderCredential, type Usage } from './types.js';

/** Extended-thinking budgets by reasoningEffort (none/off: no thinking). */
export const THINKING_BUDGET: Record<string, number> = { minimal: 1024, low: 2048, medium: 4096, high: 8192, xhigh: 16_000, max: 24_000, ultra: 32_000 };

function toAnthropicBlock(b: ContentBlock): Record<string, unknown> | null {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: b.text };
    case 'image':
      return { type: 'image', source: { type: 'base64', media_type: b.mediaType, data: b.data } };
    case 'document':
      return b.mediaType === 'text/plain'
        ? { type: 'document', source: { type: 'text', media_type: 'text/plain', data: b.data }, ...(b.title ? { title: b.title } : {}) }
        : { type: 'document', source: { type: 'base64', media_type: b.mediaType, data: b.data }, ...(b.title ? { title: b.title } : {}) };
    case 'tool_use':
      return { type: 'tool_use', id: b.id, name: b.name, input: b.input };
    case 'tool_result':
      return { type: 'tool_result', tool_use_id: b.toolUseId, content: b.content, ...(b.isError ? { is_error: true } : {}) };
    case 'reasoning':
      // Only signed thinking can be sent back; unsigned reasoning (another provider's) is dropped.
      if (b.redacted && b.signature) return { type: 'redacted_thinking', data: b.signature };
      return b.signature ? { type: 'thinking', thinking: b.text, signature: b.signature } : null;
  }
}

export function anthropicBody(req: ModelRequest): Record<string, unknown> {
  const budget = req.reasoningEffort ? THINKING_BUDGET[req.reasoningEffort] : undefined;
  const maxTokens = Math.max(req.maxTokens ?? 8192, budget ? budget + 4096 : 0);
  return {
    model: req.model,
    max_tokens: maxTokens,
    stream: true,
    system: req.system,
    messages: req.messages.map((m: ChatMessage) => ({ role: m.role, content: m.content.map(toAnthropicBlock).filter(Boolean) })),
    ...(req.tools.length ? { tools: req.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema })) } : {}),
    ...(budget ? { thinking: { type: 'enabled', budget_tokens: budget } } : {}),
  };
}

interface BlockState {
  type: string;
  id?: string;
  name?: string;
  json: string;
  signature: string | null;
}

export async function* streamAnthropic(req: ModelRequest, cred: ProviderCredential, signal?: AbortSignal): AsyncGenerator<ModelEvent> {
  let res: Response;
  try {
    res = await fetch(`${cred.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': cred.apiKey, 'anthropic-version': '2023-06-01', accept: 'text/event-stream' },
      body: JSON.stringify(anthropicBody(req)),
      signal,
    });
  } catch (err) {
    if (signal?.aborted) return;
    throw networkError(err, 'anthropic');
  }
  if (!res.ok || !res.body) throw await providerErrorFrom(res, 'anthropic');

  const usage: Usage = emptyUsage();
  const blocks = new Map<number, BlockState>();
  try {
    for await (const rec of parseSse(res.body as unknown as AsyncIterable<Uint8Array>)) {
      if (!rec.data) continue;
      const msg = JSON.parse(rec.data) as Record<string, any>;
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
          blocks.set(msg.index, { type: cb.type, id: cb.id, name: cb.name, json: '', signature: cb.type === 'redacted_thinking' ? (cb.data ?? null) : null });
          if (cb.type === 'tool_use') yield { type: 'tool_call_start', id: cb.id, name: cb.name };
          if (cb.type === 'text' && cb.text) yield { type: 'text_delta', text: cb.text };
          break;
        }
        case 'content_block_delta': {
          const block = blocks.get(msg.index);
          const d = msg.delta ?? {};
          if (d.type === 'text_delta') yield { type: 'text_delta', text: d.text };
          else if (d.type === 'thinking_delta') yield { type: 'reasoning_delta', text: d.thinking };
          else if (d.type === 'signature_delta' && block) block.signature = (block.signature ?? '') + d.signature;
          else if (d.type === 'input_json_delta' && block) {
            block.json += d.partial_json;
            yield { type: 'tool_call_delta', id: block.id!, argsPartial: d.partial_json };
          }
          break;
        }
        case 'content_block_stop': {
          const block = blocks.get(msg.index);
          if (!block) break;
          if (block.type === 'tool_use') {
            let input: Record<string, unknown> = {};
            try {
              input = block.json ? JSON.parse(block.json) : {};
            } catch {
              input = { _unparsed: block.json };
            }
            yield { type: 'tool_call', id: block.id!, name: block.name!, input };
          } else if (block.type === 'thinking' || block.type === 'redacted_thinking') {
            yield { type: 'reasoning_done', signature: block.signature, redacted: block.type === 'redacted_thinking' };
          }
          break;
        }
        case 'message_delta': {
          const u = msg.usage ?? {};
          if (u.output_tokens !== undefined) usage.outputTokens = u.output_tokens;
          if (u.input_tokens !== undefined) usage.inputTokens = u.input_tokens;
          if (u.cache_read_input_tokens !== undefined) usage.cacheReadTokens = u.cache_read_input_tokens;
          if (u.cache_creation_input_tokens !== undefined) usage.cacheWriteTokens = u.cache_creation_input_tokens;
          yield { type: 'usage', usage: { ...usage } };
          const reason = msg.delta?.stop_reason;
          if (reason) yield { type: 'stop', reason: reason === 'end_turn' || reason === 'tool_use' || reason === 'max_tokens' ? reason : 'other' };
          break;
        }
        case 'error': {
          const type = msg.error?.type ?? 'error';
          const overloaded = type === 'overloaded_error' || type === 'api_error';
          throw new ProviderError(`anthropic stream error: ${msg.error?.message ?? type}`, { status: null, retryable: overloaded || type === 'rate_limit_error', code: overloaded ? 'provider_unavailable' : type === 'rate_limit_error' ? 'provider_rate_limited' : 'provider_error' });
        }
        default:
          break;
      }
    }
  } catch (err) {
    if (signal?.aborted) return;
    if (err instanceof ProviderError) throw err;
    throw networkError(err, 'anthropic');
  }
}
