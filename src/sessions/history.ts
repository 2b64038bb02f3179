// Cursor-paged event history, oldest first. The cursor is an event id; `cursor` in the answer is
// the id of the last event returned (pass it back to continue), null when the session has none.
import { z } from 'zod';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { sessionEvent, type SessionEvent } from '../events/types.js';

export const eventsPageBody = z
  .strictObject({
    events: z.array(sessionEvent).describe('Oldest first'),
    cursor: z.string().nullable().describe('Pass back as ?cursor= to continue; null when the session has no events'),
    hasMore: z.boolean(),
  })
  .meta({ id: 'EventsPage' });
export type EventsPage = z.output<typeof eventsPageBody>;

export async function eventsPage(sessionId: string, cursor: string | null | undefined, limit: number): Promise<EventsPage> {
  let afterSeq = 0;
  if (cursor) {
    const at = await prisma.sessionEvent.findFirst({ where: { sessionId, id: cursor }, select: { seq: true } });
    if (!at) throw new AppError('invalid_request', 'unknown cursor for this session');
    afterSeq = at.seq;
  }
  const rows = await prisma.sessionEvent.findMany({
    where: { sessionId, seq: { gt: afterSeq } },
    orderBy: { seq: 'asc' },
    take: limit + 1,
    select: { id: true, payload: true },
  });
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  return {
    events: page.map((r) => r.payload as SessionEvent),
    cursor: page.length ? page[page.length - 1]!.id : (cursor ?? null),
    hasMore,
  };
}
