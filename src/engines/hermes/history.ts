// Rebuilds the model conversation from stored events, grouped by turn (inputs of a turn first,
// then what the engine did), so a conversation survives restarts and queued messages sent
// mid-turn land in their own, later turn.
import { prisma } from '../../db/client.js';
import type { ChatMessage, ContentBlock } from '../../gateway/types.js';
import type { SessionEvent } from '../../events/types.js';
import type { ContentBlockInput } from '../../events/content.js';
import { blobStore } from '../../blobs/blob-store.js';
import { outcomePrompt } from '../outcome-prompt.js';

const CONTEXT_TYPES = ['user.message', 'system.message', 'user.define_outcome', 'agent.message', 'agent.reasoning', 'agent.tool_use', 'agent.tool_result'];

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
  const rows = await prisma.sessionEvent.findMany({
    where: { sessionId, turn: { not: null, lte: turn }, type: { in: CONTEXT_TYPES } },
    orderBy: [{ turn: 'asc' }, { seq: 'asc' }],
    select: { payload: true },
  });
  const messages: ChatMessage[] = [];
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
