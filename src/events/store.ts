// The one way events enter a session: `storeEvents` numbers them (a row lock on the session
// serialises appends) and writes them with their webhook outbox rows in one transaction;
// `announceEvents` tells streams and dispatchers after the commit. `commitEvents` does both.
// The stored JSON is exactly what history and streams return.
import { prisma } from '../db/client.js';
import { newId } from '../ids.js';
import { pubsub } from './pubsub.js';
import { queueWebhookEvents, sessionWebhookEvents, nudgeDispatchers, type OutboxTx } from '../webhooks/outbox.js';
import type { NewEvent, SessionEvent, StoredEvent } from './types.js';

export type { NewEvent, SessionEvent, StoredEvent } from './types.js';

export const sessionChannel = (sessionId: string) => `session:${sessionId}`;

/** What storing touches: the client or an interactive transaction. */
export type EventTx = Pick<typeof prisma, 'session' | 'sessionEvent'> & OutboxTx;

export interface StoredBatch {
  sessionId: string;
  stored: StoredEvent[];
  /** Webhook deliveries queued with the events. */
  deliveries: number;
}

/** Stores events and their outbox rows inside `tx`; call `announceEvents` after commit. */
export async function storeEvents(tx: EventTx, sessionId: string, events: NewEvent[]): Promise<StoredBatch> {
  if (!events.length) return { sessionId, stored: [], deliveries: 0 };
  const session = await tx.session.update({
    where: { id: sessionId },
    data: { eventSeq: { increment: events.length } },
    select: { eventSeq: true, agentId: true, universeId: true },
  });
  const first = session.eventSeq - events.length + 1;
  const at = new Date();
  const stored = events.map((e, i) => {
    const event = { id: newId('evt'), type: e.type, sessionId, agentId: session.agentId, at: at.toISOString(), ...e.fields } as SessionEvent;
    return { seq: first + i, event, turn: e.turn ?? null };
  });
  await tx.sessionEvent.createMany({
    data: stored.map((s) => ({ id: s.event.id, sessionId, seq: s.seq, type: s.event.type, payload: s.event as object, turn: s.turn, createdAt: at })),
  });
  const deliveries = await queueWebhookEvents(tx, session.universeId, sessionWebhookEvents(sessionId, stored.map((s) => s.event)));
  return { sessionId, stored: stored.map(({ seq, event }) => ({ seq, event })), deliveries };
}

/** After commit: streams learn the new sequence range; dispatchers learn of new deliveries. */
export async function announceEvents(batch: StoredBatch): Promise<void> {
  const { stored } = batch;
  if (batch.deliveries) nudgeDispatchers();
  if (!stored.length) return;
  await pubsub().publish(sessionChannel(batch.sessionId), `${stored[0]!.seq}-${stored[stored.length - 1]!.seq}`);
}

/** Stores (own transaction) and announces. */
export async function commitEvents(sessionId: string, events: NewEvent[]): Promise<StoredEvent[]> {
  const batch = await prisma.$transaction((tx) => storeEvents(tx, sessionId, events));
  await announceEvents(batch);
  return batch.stored;
}

/** One event, stored and announced. */
export async function commitEvent(sessionId: string, event: NewEvent): Promise<SessionEvent> {
  const [stored] = await commitEvents(sessionId, [event]);
  return stored!.event;
}

export async function eventsAfter(sessionId: string, afterSeq: number, limit = 500): Promise<StoredEvent[]> {
  const rows = await prisma.sessionEvent.findMany({
    where: { sessionId, seq: { gt: afterSeq } },
    orderBy: { seq: 'asc' },
    take: limit,
    select: { seq: true, payload: true },
  });
  return rows.map((r) => ({ seq: r.seq, event: r.payload as SessionEvent }));
}

/** The sequence number of an event id in a session, or null. */
export async function seqOf(sessionId: string, eventId: string): Promise<number | null> {
  const row = await prisma.sessionEvent.findFirst({ where: { id: eventId, sessionId }, select: { seq: true } });
  return row?.seq ?? null;
}
