// Rebuilds the model conversation from stored events, grouped by turn (inputs of a turn first,
// then what the engine did), so a conversation survives restarts and queued messages sent
// mid-turn land in their own, later turn.
import { prisma } from '../../db/client.js';
import { batched } from '../../db/batched.js';
import { sqlRows } from '../../db/raw-query.js';
import { Prisma } from '../../generated/prisma/client.js';
import type { ChatMessage, ContentBlock } from '../../gateway/types.js';
import type { SessionEvent } from '../../events/types.js';
import type { ContentBlockInput } from '../../events/content.js';
import { blobStore } from '../../blobs/blob-store.js';
import { outcomePrompt } from '../outcome-prompt.js';

const CONTEXT_TYPES = ['user.message', 'system.message', 'user.define_outcome', 'agent.message', 'agent.reasoning', 'agent.tool_use', 'agent.tool_result'];
/** With the compactions (compaction.ts): the model gets the latest summary instead of the events it replaces. */
export const CONVERSATION_TYPES = [...CONTEXT_TYPES, 'session.compacted'];

export interface ConversationRow {
  turn: number | null;
  payload: unknown;
}

/** The conversation's events up to `turn` (inputs of a turn first, then the engine's work), in the model's order. */
export function conversationRows(sessionId: string, turn: number): Promise<ConversationRow[]> {
  return prisma.sessionEvent.findMany({
    where: { sessionId, turn: { not: null, lte: turn }, type: { in: CONVERSATION_TYPES } },
    orderBy: [{ turn: 'asc' }, { seq: 'asc' }],
    select: { turn: true, payload: true },
  });
}

// Events streamed in chunks before their complete (`final`) one.
const STREAMED = ['agent.message', 'agent.reasoning'];

// Inputs that are no conversation rows but a turn's start needs to see (engine.ts).
const START_EXTRA = ['user.compact', 'user.tool_confirmation'];

interface StartRow extends ConversationRow {
  type: string;
}

interface StartRead {
  rows: StartRow[];
  lastStop: string | null;
}

// Turns starting together read their conversations in one statement (src/db/batched.ts), each
// with the stop reason of its session's latest idle (a left join: a session without
// conversation rows still gets its one row, with no event). A streamed chunk (agent.message or
// agent.reasoning without `final`) comes as its type and id only: the conversation takes the
// complete message that follows it, and a compaction may name it as the end of what it replaced
// (issue #29: the chunks were most of the rows, parsed at every turn's start).
const startRowsOf = batched(async (keys: { sessionId: string; turn: number }[]): Promise<StartRead[]> => {
  const rows = await sqlRows<{ ord: number | string; stop: string | null; turn: number | null; type: string | null; payload: unknown }>(
    prisma,
    Prisma.sql`
    SELECT k.ord, last."stop", e."turn", e."type",
           CASE WHEN e."type" = ANY(${STREAMED}::text[]) AND (e."payload"->>'final') IS DISTINCT FROM 'true'
                THEN jsonb_build_object('type', e."type", 'id', e."payload"->'id') ELSE e."payload" END AS "payload"
      FROM unnest(${keys.map((k) => k.sessionId)}::text[], ${keys.map((k) => k.turn)}::int[]) WITH ORDINALITY AS k(sid, upto, ord)
      LEFT JOIN LATERAL (
        SELECT i."payload"->'stop_reason'->>'type' AS "stop" FROM "SessionEvent" i
         WHERE i."sessionId" = k.sid AND i."type" = 'session.status_idle' ORDER BY i."seq" DESC LIMIT 1
      ) last ON TRUE
      LEFT JOIN "SessionEvent" e ON e."sessionId" = k.sid AND e."turn" IS NOT NULL AND e."turn" <= k.upto
       AND e."type" = ANY(${[...CONVERSATION_TYPES, ...START_EXTRA]}::text[])
     ORDER BY k.ord, e."turn", e."seq"`,
  );
  // Each key's rows (by its place in the batch: a session asked twice gets its rows twice).
  const of: StartRead[] = keys.map(() => ({ rows: [], lastStop: null }));
  for (const { ord, stop, turn, type, payload } of rows) {
    const read = of[Number(ord) - 1]!;
    read.lastStop = stop;
    if (type !== null) read.rows.push({ turn, type, payload });
  }
  return of;
});

/**
 * A turn's start in ONE read: the conversation's rows (as `conversationRows`), the types of the
 * turn's own inputs among `inputTypes` (user.compact and user.tool_confirmation are no
 * conversation rows; the engine asks whether the turn is a compaction), and how the session's
 * latest turn stopped (`requires_action`: calls may wait for their confirmation).
 */
export async function turnStartRows(
  sessionId: string,
  turn: number,
  inputTypes: readonly string[],
): Promise<{ rows: ConversationRow[]; inputs: string[]; lastStop: string | null }> {
  const { rows: all, lastStop } = await startRowsOf({ sessionId, turn });
  const inputs = all.filter((r) => r.turn === turn && inputTypes.includes(r.type)).map((r) => r.type);
  const rows = all.filter((r) => !START_EXTRA.includes(r.type)).map(({ turn: t, payload }) => ({ turn: t, payload }));
  return { rows, inputs, lastStop };
}

/** The rows the model still sees verbatim, and the summary before them (the latest compaction's). */
export function liveRows(rows: ConversationRow[]): { summary: string | null; live: ConversationRow[] } {
  let cut = -1;
  let summary: string | null = null;
  for (const r of rows) {
    const e = r.payload as SessionEvent;
    if (e.type !== 'session.compacted') continue;
    const to = rows.findIndex((x) => (x.payload as SessionEvent).id === e.replaces.to_event_id);
    if (to === -1) continue;
    cut = Math.max(cut, to);
    summary = e.summary;
  }
  const live = rows.slice(cut + 1).filter((r) => (r.payload as SessionEvent).type !== 'session.compacted');
  return { summary, live };
}

export const summaryMessage = (summary: string): ContentBlock => ({
  type: 'text',
  text: `<conversation-summary>\nThe earlier part of this conversation, summarised:\n${summary}\n</conversation-summary>`,
});

/** Message attachments are per-session file copies: the model gets their bytes inline. */
async function userBlocks(content: ContentBlockInput[]): Promise<ContentBlock[]> {
  const out: ContentBlock[] = [];
  for (const b of content) {
    if (b.type === 'text') {
      out.push({ type: 'text', text: b.text });
      continue;
    }
    const title = b.type === 'document' ? (b.title ?? null) : null;
    if (b.source.type === 'file') {
      const f = await prisma.file.findUnique({ where: { id: b.source.file_id } });
      if (!f) {
        out.push({ type: 'text', text: `[${b.type} ${b.source.file_id} is no longer available]` });
        continue;
      }
      const data = await blobStore().read(f.blobKey);
      if (b.type === 'image') out.push({ type: 'image', mediaType: f.mimeType, data: data.toString('base64') });
      else if (f.mimeType === 'text/plain') out.push({ type: 'document', mediaType: 'text/plain', data: data.toString('utf8'), title });
      else out.push({ type: 'document', mediaType: f.mimeType, data: data.toString('base64'), title });
      continue;
    }
    if (b.type === 'image' && b.source.type === 'base64') out.push({ type: 'image', mediaType: b.source.media_type, data: b.source.data });
    else if (b.type === 'document' && b.source.type === 'base64') out.push({ type: 'document', mediaType: b.source.media_type, data: b.source.data, title });
    else if (b.type === 'document' && b.source.type === 'text') out.push({ type: 'document', mediaType: 'text/plain', data: b.source.data, title });
    else if (b.source.type === 'url') out.push({ type: 'text', text: `[${b.type} at ${b.source.url}]` });
  }
  return out;
}

function push(messages: ChatMessage[], role: 'user' | 'assistant', blocks: ContentBlock[]): void {
  if (!blocks.length) return;
  const last = messages[messages.length - 1];
  if (last && last.role === role) last.content.push(...blocks);
  else messages.push({ role, content: [...blocks] });
}

/** Messages for the model, up to and including `turn`'s inputs and the engine's work so far. */
export async function buildConversation(sessionId: string, turn: number): Promise<ChatMessage[]> {
  return conversationOf(await conversationRows(sessionId, turn));
}

/** The model's messages from conversation rows: the latest summary, then the events after it. */
export async function conversationOf(all: ConversationRow[]): Promise<ChatMessage[]> {
  const { summary, live: rows } = liveRows(all);
  const messages: ChatMessage[] = [];
  if (summary !== null) push(messages, 'user', [summaryMessage(summary)]);
  const openCalls = new Map<string, string>();
  const closeOpenCalls = () => {
    // A turn cut short (interrupt, error) can leave tool calls without results: providers
    // require one, so they are answered as interrupted.
    if (!openCalls.size) return;
    push(
      messages,
      'user',
      [...openCalls.keys()].map((id) => ({ type: 'tool_result', toolUseId: id, content: '{"error":"interrupted"}', isError: true }) as ContentBlock),
    );
    openCalls.clear();
  };
  for (const { payload } of rows) {
    const e = payload as SessionEvent;
    switch (e.type) {
      case 'user.message':
        closeOpenCalls();
        push(messages, 'user', await userBlocks(e.content));
        break;
      case 'user.define_outcome':
        closeOpenCalls();
        push(messages, 'user', [{ type: 'text', text: outcomePrompt(e) }]);
        break;
      case 'system.message':
        closeOpenCalls();
        push(
          messages,
          'user',
          e.content.map((b) => ({ type: 'text', text: `<system-message>\n${b.text}\n</system-message>` })),
        );
        break;
      case 'agent.reasoning':
        if (e.final && e.part.type === 'reasoning')
          push(messages, 'assistant', [{ type: 'reasoning', text: e.part.text, signature: e.signature ?? null, redacted: e.part.redacted }]);
        break;
      case 'agent.message':
        if (e.final && e.text) push(messages, 'assistant', [{ type: 'text', text: e.text }]);
        break;
      case 'agent.tool_use':
        if (e.part.type !== 'tool_call') break;
        push(messages, 'assistant', [{ type: 'tool_use', id: e.part.call_id, name: e.part.tool_name, input: e.part.args }]);
        openCalls.set(e.part.call_id, e.part.tool_name);
        break;
      case 'agent.tool_result':
        if (e.part.type !== 'tool_result') break;
        if (summary !== null && !openCalls.has(e.part.call_id)) {
          // Its call is inside the summary: the result travels as text (an unanswered id is a 400).
          push(messages, 'user', [{ type: 'text', text: `[result of ${e.part.tool_name}: ${JSON.stringify(e.part.result)}]` }]);
          break;
        }
        openCalls.delete(e.part.call_id);
        push(messages, 'user', [
          { type: 'tool_result', toolUseId: e.part.call_id, content: JSON.stringify(e.part.result), isError: e.part.status === 'error' },
        ]);
        break;
      default:
        break;
    }
  }
  closeOpenCalls();
  return messages;
}
