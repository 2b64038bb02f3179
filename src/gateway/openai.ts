// OpenAI Chat Completions, streaming. OPENAI_BASE_URL is read with /v1, as the SDK does.
import { parseSse } from './sse.js';
import { providerErrorFrom, networkError } from './http-errors.js';
import { emptyUsage, ProviderError, type ChatMessage, type ModelEvent, type ModelRequest, type ProviderCredential } from './types.js';

/** reasoning_effort for reasoning models; our wider scale folds into theirs. */
const EFFORT: Record<string, string> = { none: 'minimal', off: 'minimal', minimal: 'minimal', low: 'low', medium: 'medium', high: 'high', xhigh: 'high', max: 'high', ultra: 'high' };
const isReasoningModel = (model: string) => /^(o\d|gpt-5)/.test(model);

function toOpenAIMessages(system: string, messages: ChatMessage[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [{ role: 'system', content: system }];
  for (const m of messages) {
    if (m.role === 'assistant') {
      const text = m.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join('');
      const calls = m.content.filter((b) => b.type === 'tool_use') as { id: string; name: string; input: Record<string, unknown> }[];
      out.push({
        role: 'assistant',
        content: text || null,
        ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) } })) } : {}),
      });
      continue;
    }
    // Tool results are their own `tool` messages; the rest of a user turn is one user message.
    const parts: Record<string, unknown>[] = [];
    for (const b of m.content) {
      if (b.type === 'tool_result') out.push({ role: 'tool', tool_call_id: b.toolUseId, content: b.content });
      else if (b.type === 'text') parts.push({ type: 'text', text: b.text });
      else if (b.type === 'image') parts.push({ type: 'image_url', image_url: { url: `data:${b.mediaType};base64,${b.data}` } });
      else if (b.type === 'document' && b.mediaType === 'text/plain') parts.push({ type: 'text', text: `${b.title ? `# ${b.title}\n` : ''}${b.data}` });
      else if (b.type === 'document') parts.push({ type: 'file', file: { filename: b.title || 'document.pdf', file_data: `data:${b.mediaType};base64,${b.data}` } });
    }
    if (parts.length) out.push({ role: 'user', content: parts });
  }
  return out;
}

export function openaiBody(req: ModelRequest): Record<string, unknown> {
  const effort = req.reasoningEffort ? EFFORT[req.reasoningEffort] : undefined;
  return {
    model: req.model,
    stream: true,
    stream_options: { include_usage: true },
    messages: toOpenAIMessages(req.system, req.messages),
    ...(req.tools.length ? { tools: req.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.inputSchema } })) } : {}),
    ...(req.maxTokens ? { max_completion_tokens: req.maxTokens } : {}),
    ...(effort && isReasoningModel(req.model) ? { reasoning_effort: effort } : {}),
  };
}

export async function* streamOpenAI(req: ModelRequest, cred: ProviderCredential, signal?: AbortSignal): AsyncGenerator<ModelEvent> {
  let res: Response;
  try {
    res = await fetch(`${cred.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${cred.apiKey}`, accept: 'text/event-stream' },
      body: JSON.stringify(openaiBody(req)),
      signal,
    });
  } catch (err) {
    if (signal?.aborted) return;
    throw networkError(err, 'openai');
  }
  if (!res.ok || !res.body) throw await providerErrorFrom(res, 'openai');

  const calls = new Map<number, { id: string; name: string; args: string }>();
  let finish: string | null = null;
  try {
    for await (const rec of parseSse(res.body as unknown as AsyncIterable<Uint8Array>)) {
      if (!rec.data || rec.data === '[DONE]') continue;
      const chunk = JSON.parse(rec.data) as Record<string, any>;
      if (chunk.error) throw new ProviderError(`openai stream error: ${chunk.error.message ?? 'error'}`, { status: null, retryable: true, code: 'provider_unavailable' });
      const choice = chunk.choices?.[0];
      const delta = choice?.delta ?? {};
      if (typeof delta.reasoning_content === 'string' && delta.reasoning_content) yield { type: 'reasoning_delta', text: delta.reasoning_content };
      if (typeof delta.content === 'string' && delta.content) yield { type: 'text_delta', text: delta.content };
      for (const tc of delta.tool_calls ?? []) {
        let call = calls.get(tc.index);
        if (!call) {
          call = { id: tc.id ?? `call_${tc.index}`, name: tc.function?.name ?? '', args: '' };
          calls.set(tc.index, call);
          yield { type: 'tool_call_start', id: call.id, name: call.name };
        }
        if (tc.function?.name && !call.name) call.name = tc.function.name;
        if (tc.function?.arguments) {
          call.args += tc.function.arguments;
          yield { type: 'tool_call_delta', id: call.id, argsPartial: tc.function.arguments };
        }
      }
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.usage) {
        const u = chunk.usage;
        const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
        yield {
          type: 'usage',
          usage: { ...emptyUsage(), inputTokens: (u.prompt_tokens ?? 0) - cached, outputTokens: u.completion_tokens ?? 0, cacheReadTokens: cached },
        };
      }
    }
  } catch (err) {
    if (signal?.aborted) return;
    if (err instanceof ProviderError) throw err;
    throw networkError(err, 'openai');
  }
  for (const call of [...calls.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c)) {
    let input: Record<string, unknown> = {};
    try {
      input = call.args ? JSON.parse(call.args) : {};
    } catch {
      input = { _unparsed: call.args };
    }
    yield { type: 'tool_call', id: call.id, name: call.name, input };
  }
  if (finish) yield { type: 'stop', reason: finish === 'stop' ? 'end_turn' : finish === 'tool_calls' ? 'tool_use' : finish === 'length' ? 'max_tokens' : 'other' };
}
