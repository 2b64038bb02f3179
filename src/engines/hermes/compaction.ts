// Compaction (issue #31): before a hermes model call would fill COMPACT_AT_SHARE of the model's
// context window (catalog `context_window`, capped by CONTEXT_WINDOW_CAP), the older part of the
// conversation is summarised by the same model (a metered, budget-checked call of the turn), the
// recent turns (COMPACT_KEEP_TURNS, the running one always) stay verbatim, and a
// `session.compacted` event records the summary and the range it stands for. History keeps every
// event; the model gets summary + tail (history.ts). `user.compact` asks for it at once (all
// turns before the running one). A tail that alone does not fit the window is a clear
// session.error `context_window_exceeded`, never a provider's 400.
import { settings } from '../../config.js';
import { modelInfo } from '../../catalog/catalog.js';
import type { SessionEvent } from '../../events/types.js';
import type { EmitEvent } from '../../tools/tool-events.js';
import { ProviderError, type ChatMessage, type ModelEvent, type ModelRequest, type ToolSpec } from '../../gateway/types.js';
import { conversationOf, conversationRows, liveRows, type ConversationRow } from './history.js';

/** The answer room a summary gets (and the room reserved for it when choosing what to keep). */
export const SUMMARY_MAX_TOKENS = 2048;
/** Longest tool input / result kept in the transcript the model summarises. */
const TRANSCRIPT_ITEM_CHARS = 2000;

const SUMMARY_SYSTEM = `You compact the history of a conversation between a user and an AI agent working in a sandbox
(/workspace). Write a summary the agent can continue from without the original: the user's goals and
requests, decisions made, what was done (files written or changed, commands run and their outcomes),
facts learnt, open questions and the next steps. Keep names, paths, numbers and identifiers exactly.
Answer with the summary only.`;

/** Estimated prompt tokens (4 characters a token, as the gateway's estimates). */
export function estimateTokens(system: string, messages: ChatMessage[], tools: ToolSpec[]): number {
  return Math.ceil((system.length + JSON.stringify(messages).length + JSON.stringify(tools).length) / 4);
}

/** The window compaction works against: the catalog's, capped by CONTEXT_WINDOW_CAP. */
export function contextWindowOf(model: string): number {
  const window = modelInfo(model)?.context_window ?? 200_000;
  const cap = settings.contextWindowCap();
  return cap ? Math.min(window, cap) : window;
}

export function contextWindowError(model: string, tokens: number, window: number): ProviderError {
  return new ProviderError(
    `the conversation's most recent part (about ${tokens} tokens) does not fit ${model}'s context window of ${window} tokens, even with the older turns summarised: send a shorter message or attach the content as a file`,
    { status: null, retryable: false, code: 'context_window_exceeded' },
  );
}

/** The provider's refusal of a prompt too long for the model (both providers' words). */
export const isContextRefusal = (err: unknown) =>
  err instanceof ProviderError &&
  err.code === 'provider_bad_request' &&
  /prompt is too long|maximum context length|context_length_exceeded|context window/i.test(err.message);

const clip = (s: string, n = TRANSCRIPT_ITEM_CHARS) => (s.length > n ? `${s.slice(0, n)}… [${s.length - n} more characters]` : s);

/** The replaced part as plain text for the summary call (tool calls and results clipped). */
function transcript(previous: string | null, rows: ConversationRow[]): string {
  const lines: string[] = [];
  if (previous !== null) lines.push(`[Summary of the conversation before this point]\n${previous}`);
  for (const { payload } of rows) {
    const e = payload as SessionEvent;
    switch (e.type) {
      case 'user.message':
        lines.push(
          `User: ${e.content.map((b) => (b.type === 'text' ? b.text : b.type === 'document' ? `[document ${b.title ?? ''}]` : `[${b.type}]`)).join('\n')}`,
        );
        break;
      case 'system.message':
        lines.push(`System: ${e.content.map((b) => b.text).join('\n')}`);
        break;
      case 'agent.message':
        if (e.final && e.text) lines.push(`Assistant: ${e.text}`);
        break;
      case 'agent.tool_use':
        if (e.part.type === 'tool_call') lines.push(`Assistant called ${e.part.tool_name}(${clip(JSON.stringify(e.part.args))})`);
        break;
      case 'agent.tool_result':
        if (e.part.type === 'tool_result') lines.push(`Result of ${e.part.tool_name} (${e.part.status}): ${clip(JSON.stringify(e.part.result))}`);
        break;
      default:
        break;
    }
  }
  return lines.join('\n\n');
}

const rowTokens = (r: ConversationRow) => Math.ceil(JSON.stringify(r.payload).length / 4);
const typeOf = (r: ConversationRow) => (r.payload as SessionEvent).type;
const idOf = (r: ConversationRow) => (r.payload as SessionEvent).id;

export interface CompactionContext {
  sessionId: string;
  turn: number;
  request: Omit<ModelRequest, 'messages' | 'tools'>;
  emit: EmitEvent;
  signal: AbortSignal;
  callModel(req: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent>;
}

/**
 * The messages the next call sends: `messages` when they fit, else the conversation rebuilt
 * after a compaction (stored as its event). `auto`: only when the prompt would pass the share of
 * the window; `user` (user.compact) and `refused` (the provider refused the prompt as too long):
 * now, everything before the running turn. Throws ProviderError `context_window_exceeded`
 * when even the kept tail does not fit, and what the summary call throws (budget, provider).
 */
export async function fitContext(
  c: CompactionContext,
  messages: ChatMessage[],
  tools: ToolSpec[],
  trigger: 'auto' | 'user' | 'refused',
): Promise<ChatMessage[]> {
  const window = contextWindowOf(c.request.model);
  const limit = Math.floor(window * settings.compactAtShare());
  const fixed = Math.ceil((c.request.system.length + JSON.stringify(tools).length) / 4);
  const before = estimateTokens(c.request.system, messages, tools);
  if (trigger === 'auto' && before <= limit) return messages;

  const rows = await conversationRows(c.sessionId, c.turn);
  const { summary: previous, live } = liveRows(rows);
  // Split points: the start of a turn that opens with its input (a turn resumed after a
  // confirmation opens with results of calls made before it). The running turn is always kept.
  const current = live.findIndex((r) => r.turn === c.turn);
  const end = current === -1 ? live.length : current;
  const splits: number[] = [];
  for (let i = 1; i < end; i++) {
    if (live[i]!.turn !== live[i - 1]!.turn && (typeOf(live[i]!) === 'user.message' || typeOf(live[i]!) === 'system.message')) splits.push(i);
  }
  if (end > 0 && (current === -1 || typeOf(live[current]!) === 'user.message' || typeOf(live[current]!) === 'system.message')) splits.push(end);
  let cut: number | null = null;
  if (trigger === 'auto') {
    // Keep COMPACT_KEEP_TURNS turns when they fit with the summary's room, else fewer.
    const keep = Math.max(1, settings.compactKeepTurns());
    const candidates = splits.slice(Math.max(0, splits.length - keep)).filter((b) => b > 0);
    const suffix = (b: number) => live.slice(b).reduce((n, r) => n + rowTokens(r), 0);
    cut = candidates.find((b) => fixed + suffix(b) + SUMMARY_MAX_TOKENS <= limit) ?? candidates.at(-1) ?? null;
  } else {
    cut = splits.at(-1) ?? null; // everything before the running turn
  }
  if (cut === null || cut === 0) {
    // Nothing older to summarise: sent as it is while it fits the window at all.
    if (trigger === 'user' || (trigger === 'auto' && before <= window)) return messages;
    throw contextWindowError(c.request.model, before, window);
  }

  const replaced = live.slice(0, cut);
  // The transcript has to fit the window itself: its latest part is kept when it does not.
  const room = Math.max(1024, (window - SUMMARY_MAX_TOKENS - Math.ceil(SUMMARY_SYSTEM.length / 4) - 256) * 4);
  let text = transcript(previous, replaced);
  if (text.length > room) text = `[the oldest part is omitted]\n${text.slice(text.length - room)}`;
  let summary = '';
  for await (const ev of c.callModel(
    {
      provider: c.request.provider,
      model: c.request.model,
      system: SUMMARY_SYSTEM,
      messages: [{ role: 'user', content: [{ type: 'text', text: `<conversation>\n${text}\n</conversation>\n\nSummarise the conversation above.` }] }],
      tools: [],
      maxTokens: SUMMARY_MAX_TOKENS,
      reasoningEffort: null,
    },
    c.signal,
  )) {
    if (ev.type === 'text_delta') summary += ev.text;
  }
  if (c.signal.aborted) return messages;
  summary = summary.trim() || '(the model returned an empty summary)';

  // The rows before the first live one were replaced by the previous summary: this one stands for them too.
  const firstRow = rows.find((r) => typeOf(r) !== 'session.compacted');
  const from = previous !== null && firstRow ? idOf(firstRow) : idOf(replaced[0]!);
  const to = idOf(replaced.at(-1)!);
  const marker: ConversationRow = { turn: null, payload: { type: 'session.compacted', id: '', summary, replaces: { from_event_id: from, to_event_id: to } } };
  const after = await conversationOf([...replaced, marker, ...live.slice(cut)]);
  const tokensAfter = estimateTokens(c.request.system, after, tools);
  const toIndex = rows.findIndex((r) => idOf(r) === to);
  const replacedCount = rows.slice(0, toIndex + 1).filter((r) => typeOf(r) !== 'session.compacted').length;
  await c.emit({
    type: 'session.compacted',
    fields: {
      summary,
      replaces: { from_event_id: from, to_event_id: to },
      replaced_events: replacedCount,
      trigger: trigger === 'user' ? 'user' : 'auto',
      tokens_before: before,
      tokens_after: tokensAfter,
    },
  });
  if (tokensAfter > window) throw contextWindowError(c.request.model, tokensAfter, window);
  return after;
}
