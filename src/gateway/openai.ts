// OpenAI Chat Completions, streaming. OPENAI_BASE_URL is read with /v1, as the SDK does.
import { postToProvider, type ProviderAnswer } from './provider-http.js';
import { effortFor } from '../catalog/reasoning-effort.js';
import { sseBatches } from './sse.js';
import { networkError, parseStreamJson, providerErrorFrom, streamError, truncatedError } from './http-errors.js';
import { emptyUsage, parseToolInput, ProviderError, type ChatMessage, type ModelEvent, type ModelRequest, type ProviderCredential } from './types.js';

/** The o-series and gpt-5 models reason (gpt-5-chat-latest does not); others refuse reasoning settings. */
export function isOpenAIReasoningModel(model: string): boolean {
  const m = model.toLowerCase();
  return /^o\d/.test(m) || (/^gpt-5/.test(m) && !/-chat/.test(m));
}

/**
 * `reasoning_effort` for a model, or null to leave it out. Only reasoning models take it (a
 * non-reasoning model answers 400), and the accepted values differ by family: o-series
 * low/medium/high; gpt-5 minimal..high; gpt-5.1+ none/low/medium/high. Our wider scale folds in
 * (src/catalog/reasoning-effort.ts).
 */
export function openaiReasoningEffort(model: string, effort: string | null | undefined): string | null {
  if (!effort || !isOpenAIReasoningModel(model)) return null;
  const m = model.toLowerCase();
  if (/^gpt-5(\.\d+)?-pro/.test(m)) return 'high'; // the pro models accept only high
  return effortFor(/^o\d/.test(m) ? 'openai_o' : /^gpt-5\.\d/.test(m) ? 'openai_gpt5x' : 'openai_gpt5', effort);
}

function toOpenAIMessages(system: string, messages: ChatMessage[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = system ? [{ role: 'system', content: system }] : [];
  for (const m of messages) {
    if (m.role === 'assistant') {
      // Reasoning cannot be sent back over Chat Completions; it is dropped.
      const text = m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      const calls = m.content.flatMap((b) => (b.type === 'tool_use' ? [b] : []));
      if (!text && !calls.length) continue; // an assistant message with neither is a 400
      out.push({
        role: 'assistant',
        content: text || null,
        ...(calls.length
          ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) } })) }
          : {}),
      });
      continue;
    }
    // Tool results become `tool` messages right after the assistant's calls (as the API
    // requires); the rest of the user message follows as one user message.
    const parts: Record<string, unknown>[] = [];
    for (const b of m.content) {
      if (b.type === 'tool_result') out.push({ role: 'tool', tool_call_id: b.toolUseId, content: b.content });
      else if (b.type === 'text' && b.text) parts.push({ type: 'text', text: b.text });
      else if (b.type === 'image') parts.push({ type: 'image_url', image_url: { url: `data:${b.mediaType};base64,${b.data}` } });
      else if (b.type === 'document' && b.mediaType === 'text/plain') parts.push({ type: 'text', text: `${b.title ? `# ${b.title}\n\n` : ''}${b.data}` });
      else if (b.type === 'document')
        parts.push({ type: 'file', file: { filename: b.title || 'document.pdf', file_data: `data:${b.mediaType};base64,${b.data}` } });
    }
    if (parts.length) out.push({ role: 'user', content: parts });
  }
  return out;
}

export function openaiBody(req: ModelRequest): Record<string, unknown> {
  const effort = openaiReasoningEffort(req.model, req.reasoningEffort);
  return {
    model: req.model,
    stream: true,
    stream_options: { include_usage: true },
    messages: toOpenAIMessages(req.system, req.messages),
    ...(req.tools.length
      ? { tools: req.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.inputSchema } })) }
      : {}),
    // max_tokens is refused by reasoning models; max_completion_tokens works for all.
    ...(req.maxTokens ? { max_completion_tokens: req.maxTokens } : {}),
    ...(effort ? { reasoning_effort: effort } : {}),
    ...(req.cacheKey ? { prompt_cache_key: req.cacheKey } : {}),
  };
}

const FINISH: Record<string, 'end_turn' | 'tool_use' | 'max_tokens'> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
};

interface CallState {
  id: string;
  name: string;
  args: string;
  started: boolean;
}

export async function* streamOpenAI(req: ModelRequest, cred: ProviderCredential, signal?: AbortSignal): AsyncGenerator<ModelEvent> {
  let res: ProviderAnswer;
  try {
    res = await postToProvider(
      `${cred.baseUrl.replace(/\/+$/, '')}/chat/completions`,
      { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${cred.apiKey}` },
      JSON.stringify(openaiBody(req)),
      signal,
    );
  } catch (err) {
    if (signal?.aborted) return;
    throw networkError(err, 'openai');
  }
  if (!res.ok) throw await providerErrorFrom(res, 'openai', cred.apiKey);

  const calls = new Map<number, CallState>();
  let finish: string | null = null;
  let done = false;
  let sawUsage = false;
  let reasoning = false; // OpenAI-compatible servers stream reasoning_content; close it once
  try {
    read: for await (const batch of sseBatches(res.body))
      for (const rec of batch) {
        if (rec.data === '[DONE]') {
          done = true;
          break read;
        }
        const chunk = parseStreamJson('openai', rec.data);
        if (chunk.error) throw streamError('openai', chunk.error.type ?? chunk.error.code, chunk.error.message, cred.apiKey);
        const choice = chunk.choices?.[0];
        const delta = choice?.delta ?? {};
        const thought = delta.reasoning_content ?? delta.reasoning;
        if (typeof thought === 'string' && thought) {
          reasoning = true;
          yield { type: 'reasoning_delta', text: thought };
        }
        const text = (typeof delta.content === 'string' ? delta.content : '') + (typeof delta.refusal === 'string' ? delta.refusal : '');
        if (reasoning && (text || delta.tool_calls?.length || choice?.finish_reason)) {
          reasoning = false;
          yield { type: 'reasoning_done', signature: null };
        }
        if (text) yield { type: 'text_delta', text };
        for (const tc of delta.tool_calls ?? []) {
          // Only the first fragment of a call carries its id and name; the rest carry its index.
          let call = calls.get(tc.index ?? 0);
          if (!call) {
            call = { id: tc.id || `call_${tc.index ?? 0}`, name: '', args: '', started: false };
            calls.set(tc.index ?? 0, call);
          }
          if (tc.function?.name && !call.name) call.name = tc.function.name;
          if (!call.started && call.name) {
            call.started = true;
            yield { type: 'tool_call_start', id: call.id, name: call.name };
          }
          if (tc.function?.arguments) {
            call.args += tc.function.arguments;
            yield { type: 'tool_call_delta', id: call.id, argsPartial: tc.function.arguments };
          }
        }
        if (choice?.finish_reason) finish = choice.finish_reason;
        if (chunk.usage) {
          // prompt_tokens includes the cached part; count it once, as cache reads.
          const u = chunk.usage;
          const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
          sawUsage = true;
          yield {
            type: 'usage',
            usage: {
              ...emptyUsage(),
              inputTokens: Math.max(0, (u.prompt_tokens ?? 0) - cached),
              outputTokens: u.completion_tokens ?? 0,
              cacheReadTokens: cached,
            },
          };
        }
      }
  } catch (err) {
    if (signal?.aborted) return;
    throw err instanceof ProviderError ? err : networkError(err, 'openai');
  }
  if (signal?.aborted) return;
  // Without [DONE] (or at least the finish and the usage) the answer or its usage is missing.
  if (!done && !(finish && sawUsage)) throw truncatedError('openai');
  if (reasoning) yield { type: 'reasoning_done', signature: null };
  for (const [, call] of [...calls.entries()].sort((a, b) => a[0] - b[0])) {
    yield { type: 'tool_call', id: call.id, name: call.name, input: parseToolInput(call.args) };
  }
  yield { type: 'stop', reason: finish ? (FINISH[finish] ?? 'other') : 'other' };
}
