// A turn lost with its process (kill -9, a crash) may have streamed chunks of a message or of a
// reasoning block (`final: false`) without the complete event that follows them. Recovery
// completes each such stream from its stored chunks, so that history, streams and the next
// turn's conversation keep the words the client already saw instead of a message left open.
import { prisma } from '../db/client.js';
import type { NewEvent, SessionEvent } from '../events/types.js';

type Streamed = Extract<SessionEvent, { type: 'agent.message' | 'agent.reasoning' }>;

const streamIdOf = (e: Streamed): string | null => (e.type === 'agent.message' ? e.messageId : 'stream_id' in e.part ? e.part.stream_id : null);
const textOf = (e: Streamed): string => (e.type === 'agent.message' ? e.text : e.part.type === 'reasoning' ? e.part.text : '');

/** The complete events of the last turn's streams that have chunks but no complete event, in the order the streams began. */
export async function finishUnfinishedStreams(sessionId: string): Promise<NewEvent[]> {
  const start = await prisma.sessionEvent.findFirst({
    where: { sessionId, type: 'session.status_running' },
    orderBy: { seq: 'desc' },
    select: { seq: true },
  });
  if (!start) return [];
  const rows = await prisma.sessionEvent.findMany({
    where: { sessionId, seq: { gt: start.seq }, type: { in: ['agent.message', 'agent.reasoning'] } },
    orderBy: { seq: 'asc' },
    select: { payload: true, turn: true },
  });
  const chunks = new Map<string, Streamed[]>();
  const turns = new Map<string, number | null>();
  const finished = new Set<string>();
  for (const { payload, turn } of rows) {
    const e = payload as Streamed;
    const id = streamIdOf(e);
    if (!id) continue;
    if (e.final === false) {
      const stream = chunks.get(id);
      if (stream) stream.push(e);
      else {
        chunks.set(id, [e]);
        turns.set(id, turn);
      }
    } else finished.add(id);
  }
  const out: NewEvent[] = [];
  for (const [id, parts] of chunks) {
    if (finished.has(id)) continue;
    const text = parts.map(textOf).join('');
    // The turn the chunks belong to: the next turn's conversation reads the complete event there.
    const turn = turns.get(id) ?? undefined;
    if (parts[0]!.type === 'agent.message') {
      out.push({
        type: 'agent.message',
        turn,
        fields: { messageId: id, final: true, text, parts: [{ type: 'text', index: 0, text, stream_id: id, stream_index: null }] },
      });
    } else {
      out.push({
        type: 'agent.reasoning',
        turn,
        fields: { final: true, signature: null, part: { type: 'reasoning', index: 0, text, redacted: false, stream_id: id, stream_index: null } },
      });
    }
  }
  return out;
}
