// OpenAI Responses API, streaming (POST {OPENAI_BASE_URL}/responses). Stateless on OpenAI's side
// (`store: false`): every call sends the whole conversation as `input` items. Reasoning models
// are asked for reasoning summaries (shown as agent.reasoning) and their encrypted reasoning,
// which is kept in the reasoning block's signature and sent back in later calls, so the model
// keeps its chain of thought across tool calls and turns.
import { postToProvider, type ProviderAnswer } from './provider-http.js';
import { sseBatches } from './sse.js';
import { networkError, parseStreamJson, providerErrorFrom, streamError, truncatedError } from './http-errors.js';
import { isOpenAIReasoningModel, openaiReasoningEffort } from './openai.js';
import { responsesUsage } from './wire-usage.js';
import {
  OPENAI_REASONING_TAG,
  parseToolInput,
  ProviderError,
  type ChatMessage,
  type ContentBlock,
  type ModelEvent,
  type ModelRequest,
  type ProviderCredential,
} from './types.js';

type Item = Record<string, unknown>;

/** A reasoning block this API produced: its encrypted content, or null (Anthropic's, unsigned). */
const encryptedOf = (b: Extract<ContentBlock, { type: 'reasoning' }>) =>
  b.signature?.startsWith(OPENAI_REASONING_TAG) ? b.signature.slice(OPENAI_REASONING_TAG.length) : null;

function toInput(messages: ChatMessage[], reasoningModel: boolean): Item[] {
  const out: Item[] = [];
  for (const m of messages) {
    if (m.role === 'assistant') {
      // In the order the model produced them: reasoning, the text, then the calls. Items carry no
      // `id`: with store=false the API keeps none, and an id it does not know is a 400.
      for (const b of m.content) {
        const encrypted = b.type === 'reasoning' && reasoningModel ? encryptedOf(b) : null;
        if (b.type === 'reasoning' && encrypted) {
          out.push({ type: 'reasoning', summary: b.text && !b.redacted ? [{ type: 'summary_text', text: b.text }] : [], encrypted_content: encrypted });
        }
      }
      const text = m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      if (text) out.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] });
      for (const b of m.content) {
        if (b.type === 'tool_use') out.push({ type: 'function_call', call_id: b.id, name: b.name, arguments: JSON.stringify(b.input) });
      }
      continue;
    }
    // Tool results answer the calls just before them; the rest of the user message follows.
    const parts: Item[] = [];
    for (const b of m.content) {
      if (b.type === 'tool_result') out.push({ type: 'function_call_output', call_id: b.toolUseId, output: b.content });
      else if (b.type === 'text' && b.text) parts.push({ type: 'input_text', text: b.text });
      else if (b.type === 'image') parts.push({ type: 'input_image', image_url: `data:${b.mediaType};base64,${b.data}`, detail: 'auto' });
      else if (b.type === 'document' && b.mediaType === 'text/plain') parts.push({ type: 'input_text', text: `${b.title ? `# ${b.title}\n\n` : ''}${b.data}` });
      else if (b.type === 'document')
        parts.push({ type: 'input_file', filename: b.title || 'document.pdf', file_data: `data:${b.mediaType};base64,${b.data}` });
    }
    if (parts.length) out.push({ type: 'message', role: 'user', content: parts });
  }
  return out;
}

export function responsesBody(req: ModelRequest): Record<string, unknown> {
  const reasoningModel = isOpenAIReasoningModel(req.model);
  const effort = openaiReasoningEffort(req.model, req.reasoningEffort);
  return {
    model: req.model,
    stream: true,
    store: false,
    ...(req.system ? { instructions: req.system } : {}),
    input: toInput(req.messages, reasoningModel),
    // strict defaults to true on this API, which needs schemas our tools do not promise.
    ...(req.tools.length
      ? { tools: req.tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.inputSchema, strict: false })) }
      : {}),
    // Counts reasoning and answer together, as max_completion_tokens does on Chat Completions.
    ...(req.maxTokens ? { max_output_tokens: req.maxTokens } : {}),
    // Non-reasoning models refuse `reasoning` (a 400), so only reasoning models get it.
    ...(reasoningModel ? { reasoning: { ...(effort ? { effort } : {}), summary: 'auto' }, include: ['reasoning.encrypted_content'] } : {}),
    ...(req.cacheKey ? { prompt_cache_key: req.cacheKey } : {}),
  };
}

/** A failed response's error code in the terms streamError classifies (invalid_* will not get better). */
function errorType(code: unknown): string | undefined {
  if (typeof code !== 'string' || !code) return undefined;
  if (/^invalid_|context_length_exceeded|^unsupported_/.test(code)) return 'invalid_request_error';
  return code;
}

interface CallState {
  id: string;
  name: string;
  args: string;
  started: boolean;
}

interface ReasoningState {
  text: string;
  part: number;
}

export async function* streamOpenAIResponses(req: ModelRequest, cred: ProviderCredential, signal?: AbortSignal): AsyncGenerator<ModelEvent> {
  let res: ProviderAnswer;
  try {
    res = await postToProvider(
      `${cred.baseUrl.replace(/\/+$/, '')}/responses`,
      { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${cred.apiKey}` },
      JSON.stringify(responsesBody(req)),
      signal,
    );
  } catch (err) {
    if (signal?.aborted) return;
    throw networkError(err, 'openai');
  }
  if (!res.ok) throw await providerErrorFrom(res, 'openai', cred.apiKey);

  const calls = new Map<string, CallState>(); // by output item id (argument deltas name the item)
  const reasoning = new Map<string, ReasoningState>();
  let sawCall = false;
  let stop: Extract<ModelEvent, { type: 'stop' }>['reason'] | null = null;
  try {
    read: for await (const batch of sseBatches(res.body))
      for (const rec of batch) {
        const ev = parseStreamJson('openai', rec.data);
        switch (ev.type) {
          case 'response.output_item.added': {
            const item = ev.item ?? {};
            if (item.type === 'function_call') {
              const call: CallState = { id: item.call_id || item.id, name: item.name ?? '', args: '', started: !!item.name };
              calls.set(item.id, call);
              if (call.started) yield { type: 'tool_call_start', id: call.id, name: call.name };
            } else if (item.type === 'reasoning') reasoning.set(item.id, { text: '', part: 0 });
            break;
          }
          case 'response.reasoning_summary_text.delta': {
            if (!ev.delta) break;
            let r = reasoning.get(ev.item_id);
            if (!r) reasoning.set(ev.item_id, (r = { text: '', part: ev.summary_index ?? 0 }));
            // Each summary part is a paragraph of its own.
            const sep = r.text && (ev.summary_index ?? 0) !== r.part ? '\n\n' : '';
            r.part = ev.summary_index ?? 0;
            r.text += sep + ev.delta;
            yield { type: 'reasoning_delta', text: sep + ev.delta };
            break;
          }
          case 'response.output_text.delta':
          case 'response.refusal.delta':
            if (ev.delta) yield { type: 'text_delta', text: ev.delta };
            break;
          case 'response.function_call_arguments.delta': {
            const call = calls.get(ev.item_id);
            if (!call || !ev.delta) break;
            call.args += ev.delta;
            yield { type: 'tool_call_delta', id: call.id, argsPartial: ev.delta };
            break;
          }
          case 'response.output_item.done': {
            const item = ev.item ?? {};
            if (item.type === 'function_call') {
              const call = calls.get(item.id) ?? { id: item.call_id || item.id, name: '', args: '', started: false };
              call.name ||= item.name ?? '';
              if (!call.started) yield { type: 'tool_call_start', id: call.id, name: call.name };
              sawCall = true;
              yield { type: 'tool_call', id: call.id, name: call.name, input: parseToolInput(typeof item.arguments === 'string' ? item.arguments : call.args) };
            } else if (item.type === 'reasoning') {
              const streamed = reasoning.get(item.id)?.text ?? '';
              // A summary given only in the finished item (no deltas) is still shown.
              const whole = Array.isArray(item.summary)
                ? item.summary
                    .map((p: { text?: string }) => p?.text ?? '')
                    .filter(Boolean)
                    .join('\n\n')
                : '';
              if (!streamed && whole) yield { type: 'reasoning_delta', text: whole };
              const text = streamed || whole;
              const encrypted = typeof item.encrypted_content === 'string' && item.encrypted_content ? item.encrypted_content : null;
              // Reasoning without a summary is still kept (redacted) when it can be sent back.
              if (text || encrypted) yield { type: 'reasoning_done', signature: encrypted ? OPENAI_REASONING_TAG + encrypted : null, redacted: !text };
            }
            break;
          }
          case 'response.completed':
          case 'response.incomplete': {
            const r = ev.response ?? {};
            if (r.usage && typeof r.usage === 'object') yield { type: 'usage', usage: responsesUsage(r.usage) };
            stop =
              ev.type === 'response.completed'
                ? sawCall
                  ? 'tool_use'
                  : 'end_turn'
                : r.incomplete_details?.reason === 'max_output_tokens'
                  ? 'max_tokens'
                  : 'other';
            break read; // do not wait for the server to close the connection
          }
          case 'response.failed': {
            const r = ev.response ?? {};
            if (r.usage && typeof r.usage === 'object') yield { type: 'usage', usage: responsesUsage(r.usage) };
            throw streamError('openai', errorType(r.error?.code), r.error?.message ?? 'the response failed', cred.apiKey);
          }
          case 'error': {
            const e = ev.error && typeof ev.error === 'object' ? ev.error : ev;
            throw streamError('openai', errorType(e.code ?? e.type), e.message, cred.apiKey);
          }
          default:
            break; // created, in_progress, *.done echoes, and event types added later
        }
      }
  } catch (err) {
    if (signal?.aborted) return;
    throw err instanceof ProviderError ? err : networkError(err, 'openai');
  }
  if (signal?.aborted) return;
  if (!stop) throw truncatedError('openai');
  yield { type: 'stop', reason: stop };
}
