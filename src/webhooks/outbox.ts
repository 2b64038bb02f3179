// Queuing webhook deliveries: one outbox row per subscribed, active endpoint of the universe,
// written in the SAME transaction as the change it announces (a crash can lose neither one
// without the other; session events write theirs in src/events/store.ts's statement); after
// commit, a nudge wakes the dispatchers.
import { prisma } from '../db/client.js';
import { newId } from '../ids.js';
import type { WebhookEventType } from './catalog.js';

export interface ThinEvent {
  id: string;
  type: WebhookEventType;
  createdAt: string;
  data: { type: string; id: string };
}

/** The tables an outbox write touches: the client itself or an interactive transaction. */
export type OutboxTx = Pick<typeof prisma, 'webhookEndpoint' | 'webhookDelivery'>;

type Listener = () => void;
const listeners = new Set<Listener>();
/** Dispatchers subscribe to learn of new rows at once (they also poll). Returns the unsubscribe. */
export function onOutboxWrite(fn: Listener): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}
/** Call after the transaction that queued deliveries has committed. */
export function nudgeDispatchers(): void {
  for (const fn of listeners) fn();
}

/** Writes the delivery rows of `events` inside `tx`; returns how many rows were queued. */
export async function queueWebhookEvents(tx: OutboxTx, universeId: string, events: ThinEvent[]): Promise<number> {
  if (!events.length) return 0;
  const types = [...new Set(events.map((e) => e.type))];
  const endpoints = await tx.webhookEndpoint.findMany({
    where: { universeId, status: 'active', events: { hasSome: types } },
    select: { id: true, events: true },
  });
  const rows = events.flatMap((event) => {
    const body = JSON.stringify({ id: event.id, type: event.type, created_at: event.createdAt, data: event.data });
    return endpoints
      .filter((e) => e.events.includes(event.type))
      .map((e) => ({
        id: newId('whdl'),
        endpointId: e.id,
        eventId: event.id,
        eventType: event.type,
        body,
        nextAttemptAt: new Date(),
      }));
  });
  if (!rows.length) return 0;
  await tx.webhookDelivery.createMany({ data: rows, skipDuplicates: true });
  return rows.length;
}

/** A resource change's webhook event, queued in `tx` (pass the change's transaction). */
export async function queueResourceEvent(tx: OutboxTx, universeId: string, type: WebhookEventType, data: { type: string; id: string }): Promise<number> {
  return queueWebhookEvents(tx, universeId, [{ id: newId('evt'), type, createdAt: new Date().toISOString(), data }]);
}

/** For changes made outside a transaction: queue the event on its own, then nudge. */
export async function emitResourceEvent(universeId: string, type: WebhookEventType, data: { type: string; id: string }): Promise<void> {
  if (await queueResourceEvent(prisma, universeId, type, data)) nudgeDispatchers();
}
