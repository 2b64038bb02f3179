// Emitting a webhook event: one outbox row per subscribed, active endpoint of the universe, in
// the database (so deliveries survive restarts), then a nudge to the dispatcher.
import { prisma } from '../db/client.js';
import { newId } from '../ids.js';
import { logger } from '../logger.js';
import { SESSION_WEBHOOK_EVENTS, type WebhookEventType } from './catalog.js';
import type { EventJson } from '../events/store.js';

export interface ThinEvent {
  id: string;
  type: WebhookEventType;
  createdAt: string;
  data: { type: string; id: string };
}

let nudge: () => void = () => undefined;
export function onOutboxWrite(fn: () => void): void {
  nudge = fn;
}

export async function emitWebhookEvent(universeId: string, event: ThinEvent): Promise<void> {
  const endpoints = await prisma.webhookEndpoint.findMany({ where: { universeId, status: 'active', events: { has: event.type } }, select: { id: true } });
  if (!endpoints.length) return;
  const body = JSON.stringify({ id: event.id, type: event.type, created_at: event.createdAt, data: event.data });
  await prisma.webhookDelivery.createMany({
    data: endpoints.map((e) => ({ id: newId('msg').replace('msg_', 'whdl_'), endpointId: e.id, eventId: event.id, eventType: event.type, body, nextAttemptAt: new Date() })),
    skipDuplicates: true,
  });
  nudge();
}

/** Session events that endpoints can subscribe to (called after they are stored). */
export async function emitSessionEvents(sessionId: string, events: EventJson[]): Promise<void> {
  const relevant = events.filter((e) => SESSION_WEBHOOK_EVENTS.has(e.type));
  if (!relevant.length) return;
  try {
    const session = await prisma.session.findUnique({ where: { id: sessionId }, select: { universeId: true } });
    if (!session) return;
    for (const e of relevant) {
      await emitWebhookEvent(session.universeId, { id: e.id, type: e.type as WebhookEventType, createdAt: e.at, data: { type: 'session', id: sessionId } });
    }
  } catch (err) {
    logger.error({ err, sessionId }, 'could not queue webhook deliveries');
  }
}

export async function emitResourceEvent(universeId: string, type: WebhookEventType, data: { type: string; id: string }): Promise<void> {
  try {
    await emitWebhookEvent(universeId, { id: newId('evt'), type, createdAt: new Date().toISOString(), data });
  } catch (err) {
    logger.error({ err, type }, 'could not queue webhook deliveries');
  }
}
