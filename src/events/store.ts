// Session events are written first, then announced. Each session numbers its events with a
// strict sequence (a row lock on the session serialises appends); the stored JSON is exactly
// what history and streams return.
import { prisma } from '../db/client.js';
import { newId } from '../ids.js';
import { pubsub } from './pubsub.js';
import { emitSessionEvents } from '../webhooks/outbox.js';

export type EventJson = { id: string; type: string; sessionId: string; agentId: string | null; at: string } & Record<string, unknown>;

export interface StoredEvent {
  seq: number;
  event: EventJson;
}

export interface NewEvent {
  type: string;
  fields?: Record<string, unknown>;
  /** The turn an engine event belongs to (inputs get theirs when a turn takes them). */
  turn?: number;
}

export const sessionChannel = (sessionId: string) => `session:${sessionId}`;

type Tx = Pick<typeof prisma, 'session' | 'sessionEvent'>;

/** Appends inside an existing transaction; the caller publishes after commit. */
export async function appendEventsTx(tx: Tx, sessionId: string, events: NewEvent[]): Promise<StoredEvent[]> {
  if (!events.length) return [];
  const session = await tx.session.update({
    where: { id: sessionId },
    data: { eventSeq: { increment: events.length } },
    select: { eventSeq: true, agentId: true },
  });
  const first = session.eventSeq - events.length + 1;
  const at = new Date();
  const stored = events.map((e, i) => {
    const event: EventJson = { id: newId('evt'), type: e.type, sessionId, agentId: session.agentId, at: at.toISOString(), ...(e.fields ?? {}) };
    return { seq: first + i, event, turn: e.turn ?? null };
  });
  await tx.sessionEvent.createMany({
    data: stored.map((s) => ({ id: s.event.id, sessionId, seq: s.seq, type: s.event.type, payload: s.event as object, turn: s.turn, createdAt: at })),
  });
  return stored.map(({ seq, event }) => ({ seq, event }));
}

export async function publishStored(sessionId: string, stored: StoredEvent[]): Promise<void> {
  if (!stored.length) return;
  await pubsub().publish(sessionChannel(sessionId), `${stored[0]!.seq}-${stored[stored.length - 1]!.seq}`);
}

/** Appends and publishes (its own transaction). */
export async function appendEvents(sessionId: string, events: NewEvent[]): Promise<StoredEvent[]> {
  const stored = await prisma.$transaction((tx) => appendEventsTx(tx, sessionId, events));
  await publishStored(sessionId, stored);
  await emitSessionEvents(sessionId, stored.map((s) => s.event));
  return stored;
}

export async function appendEvent(sessionId: string, type: string, fields?: Record<string, unknown>): Promise<EventJson> {
  const [stored] = await appendEvents(sessionId, [{ type, fields }]);
  return stored!.event;
}

export async function eventsAfter(sessionId: string, afterSeq: number, limit = 500): Promise<StoredEvent[]> {
  const rows = await prisma.sessionEvent.findMany({
    where: { sessionId, seq: { gt: afterSeq } },
    orderBy: { seq: 'asc' },
    take: limit,
    select: { seq: true, payload: true },
  });
  return rows.map((r) => ({ seq: r.seq, event: r.payload as EventJson }));
}

/** The sequence number of an event id in a session, or null. */
export async function seqOf(sessionId: string, eventId: string): Promise<number | null> {
  const row = await prisma.sessionEvent.findFirst({ where: { id: eventId, sessionId }, select: { seq: true } });
  return row?.seq ?? null;
}
