// Channel events: each is stored in the universe's numbered feed (the SSE mirror reads it) and
// queued for channel webhook endpoints in the SAME transaction, as rows of the shared webhook
// outbox (src/webhooks: one dispatcher signs, retries at 0/5/30 s and disables endpoints).
// message.received and command.received go to the endpoint their binding names; every other
// type goes to each active channel endpoint subscribed to it.
import { prisma } from '../db/client.js';
import { logger } from '../logger.js';
import { pubsub } from '../events/pubsub.js';
import { nudgeDispatchers } from '../webhooks/outbox.js';
import { channelId } from './ids.js';
import type { ChannelEventJson, ChannelEventType } from './contract.js';

export interface NewChannelEvent {
  type: ChannelEventType;
  data: Record<string, unknown>;
  /** For routed messages: the one endpoint the binding names. */
  endpointId?: string;
}

export const feedChannel = (universeId: string) => `channel-events:${universeId}`;
const ROUTED = new Set<ChannelEventType>(['message.received', 'command.received']);

export interface StoredChannelEvent {
  seq: number;
  event: ChannelEventJson;
}

export async function emitChannelEvents(universeId: string, events: NewChannelEvent[]): Promise<ChannelEventJson[]> {
  if (!events.length) return [];
  const { stored, deliveries } = await prisma.$transaction(async (tx) => {
    // The feed row's lock orders a universe's events: sequence order is commit order.
    const [feed] = await tx.$queryRaw<{ seq: number }[]>`
      INSERT INTO "ChannelEventFeed" ("universeId", "seq") VALUES (${universeId}, ${events.length})
      ON CONFLICT ("universeId") DO UPDATE SET "seq" = "ChannelEventFeed"."seq" + ${events.length}
      RETURNING "seq"`;
    const first = feed!.seq - events.length + 1;
    const createdAt = new Date();
    const stored = events.map((e, i) => ({
      seq: first + i,
      endpointId: e.endpointId,
      event: { id: channelId('evt'), type: e.type, createdAt: createdAt.toISOString(), data: e.data } satisfies ChannelEventJson,
    }));
    await tx.channelEvent.createMany({
      data: stored.map((s) => ({ id: s.event.id, universeId, seq: s.seq, type: s.event.type, payload: s.event as object, createdAt })),
    });
    const broadcastTypes = [...new Set(stored.filter((s) => !ROUTED.has(s.event.type)).map((s) => s.event.type))];
    const subscribed = broadcastTypes.length
      ? await tx.webhookEndpoint.findMany({
          where: { universeId, kind: 'channel', status: 'active', events: { hasSome: broadcastTypes } },
          select: { id: true, events: true },
        })
      : [];
    const routedIds = [...new Set(stored.map((s) => s.endpointId).filter((id): id is string => !!id))];
    const routed = routedIds.length
      ? await tx.webhookEndpoint.findMany({ where: { id: { in: routedIds }, universeId, kind: 'channel', status: 'active' }, select: { id: true } })
      : [];
    const routedActive = new Set(routed.map((e) => e.id));
    const rows = stored.flatMap((s) => {
      const targets = ROUTED.has(s.event.type)
        ? s.endpointId && routedActive.has(s.endpointId)
          ? [s.endpointId]
          : []
        : subscribed.filter((e) => e.events.includes(s.event.type)).map((e) => e.id);
      const body = JSON.stringify(s.event);
      return targets.map((endpointId) => ({ id: channelId('whdl'), endpointId, eventId: s.event.id, eventType: s.event.type, body, nextAttemptAt: createdAt }));
    });
    if (rows.length) await tx.webhookDelivery.createMany({ data: rows, skipDuplicates: true });
    return { stored, deliveries: rows.length };
  });
  if (deliveries) nudgeDispatchers();
  await pubsub()
    .publish(feedChannel(universeId), `${stored[0]!.seq}-${stored[stored.length - 1]!.seq}`)
    .catch((err) => logger.warn({ err }, 'channel event notice failed'));
  return stored.map((s) => s.event);
}

export async function emitChannelEvent(universeId: string, event: NewChannelEvent): Promise<ChannelEventJson> {
  const [stored] = await emitChannelEvents(universeId, [event]);
  return stored!;
}

export async function channelEventsAfter(universeId: string, afterSeq: number, limit = 500): Promise<StoredChannelEvent[]> {
  const rows = await prisma.channelEvent.findMany({
    where: { universeId, seq: { gt: afterSeq } },
    orderBy: { seq: 'asc' },
    take: limit,
    select: { seq: true, payload: true },
  });
  return rows.map((r) => ({ seq: r.seq, event: r.payload as ChannelEventJson }));
}

/** The sequence number of an event id in the universe's feed, or null (unknown or another universe's). */
export async function channelEventSeq(universeId: string, eventId: string): Promise<number | null> {
  const row = await prisma.channelEvent.findFirst({ where: { id: eventId, universeId }, select: { seq: true } });
  return row?.seq ?? null;
}

/** The latest sequence number of the feed (a stream without a resume point starts after it). */
export async function channelFeedHead(universeId: string): Promise<number> {
  const row = await prisma.channelEventFeed.findUnique({ where: { universeId } });
  return row?.seq ?? 0;
}
