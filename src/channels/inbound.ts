// Inbound messages are recorded once (the platform's delivery id is the dedupe key, so a retry
// of the same update is dropped), acknowledged at once, and processed off the request path: in
// order per surface, here, and by a sweep for anything a stopped process left behind.
import { settings } from '../config.js';
import { prisma } from '../db/client.js';
import { sqlRows } from '../db/raw-query.js';
import { Prisma } from '../generated/prisma/client.js';
import { logger } from '../logger.js';
import { channelId } from './ids.js';
import { inboundApp } from './apps.js';
import { claimConnection, connectionForSurface, findConnectionById } from './connections.js';
import { adapterFor } from './platforms/index.js';
import { postToThread } from './posting.js';
import { routeInbound } from './routing.js';
import type { InboundMessage } from './platforms/types.js';

interface InboundPayload {
  appId: string | null;
  connectionId: string | null;
  message: InboundMessage;
}

const LEASE_MS = 5 * 60_000;
const SWEEP_MS = settings.channelInboundSweepMs();
const CODE = /\bCONNECT-\d{6}\b/;

/** Records messages (dropping repeats) and schedules them. Returns how many were new. */
export async function recordInbound(universeId: string, source: { appId: string } | { connectionId: string }, messages: InboundMessage[]): Promise<number> {
  const appId = 'appId' in source ? source.appId : null;
  const connectionId = 'connectionId' in source ? source.connectionId : null;
  const owner = appId ?? connectionId!;
  let created = 0;
  for (const message of messages) {
    const payload: InboundPayload = { appId, connectionId, message };
    // The acknowledgement waits for this one statement (ON CONFLICT: a platform's retry is
    // dropped), sent as a prepared statement without Prisma's pipeline.
    const rows = await sqlRows<{ id: string }>(
      prisma,
      Prisma.sql`
      INSERT INTO "ChannelInbound" ("id", "universeId", "appId", "connectionId", "dedupeKey", "payload")
      VALUES (${channelId('chin')}, ${universeId}, ${appId}, ${connectionId}, ${`${owner}:${message.dedupeId}`}, ${JSON.stringify(payload)}::jsonb)
      ON CONFLICT ("dedupeKey") DO NOTHING RETURNING "id"`,
    );
    if (!rows.length) continue;
    created++;
    schedule(rows[0]!.id, orderKey(payload));
  }
  return created;
}

const orderKey = (p: InboundPayload) => `${p.appId ?? p.connectionId}:${p.message.surfaceId}`;

// One chain per surface: messages of a conversation reach the session in the order they came.
const chains = new Map<string, Promise<void>>();
function schedule(id: string, key: string): void {
  const next = (chains.get(key) ?? Promise.resolve())
    // After the current I/O turn: the platform's acknowledgement is written first.
    .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
    .then(() => processInbound(id))
    .catch((err) => logger.error({ err, id }, 'inbound message processing failed'))
    .finally(() => {
      if (chains.get(key) === next) chains.delete(key);
    });
  chains.set(key, next);
}

// A flood of inbound messages is processed beside their acknowledgements: the claim (which
// returns the payload) and the outcome are one prepared statement each, without Prisma's pipeline.
async function processInbound(id: string): Promise<void> {
  // Times as UTC ISO strings: the columns are Prisma's timestamp(3) in UTC.
  const now = Date.now();
  const [claimed] = await sqlRows<{ payload: InboundPayload }>(
    prisma,
    Prisma.sql`
    UPDATE "ChannelInbound" SET "status" = 'processing', "lockedUntil" = (${new Date(now + LEASE_MS).toISOString()}::timestamptz AT TIME ZONE 'UTC')
    WHERE "id" = ${id} AND ("status" = 'received' OR ("status" = 'processing' AND "lockedUntil" < (${new Date(now).toISOString()}::timestamptz AT TIME ZONE 'UTC')))
    RETURNING "payload"`,
  );
  if (!claimed) return;
  let status = 'done';
  let note: string;
  try {
    note = await handle(claimed.payload);
    if (note.startsWith('ignored')) status = 'ignored';
  } catch (err) {
    status = 'failed';
    note = (err as Error).message;
    logger.error({ err, id }, 'inbound message failed');
  }
  await sqlRows(
    prisma,
    Prisma.sql`
    UPDATE "ChannelInbound" SET "status" = ${status}, "note" = ${note.slice(0, 500)}, "lockedUntil" = NULL,
      "processedAt" = (${new Date().toISOString()}::timestamptz AT TIME ZONE 'UTC')
    WHERE "id" = ${id}`,
  );
}

async function handle(payload: InboundPayload): Promise<string> {
  const msg = payload.message;
  if (payload.connectionId) {
    const conn = await findConnectionById(payload.connectionId).catch(() => null);
    if (!conn || conn.status !== 'CONNECTED') return 'ignored: the connection is not connected';
    return routeInbound(conn, msg);
  }
  const found = await inboundApp(payload.appId!); // the acknowledgement's lookup, remembered briefly
  const adapter = found ? adapterFor(found.row.platform) : null;
  if (!found || !adapter) return 'ignored: the app is gone';
  const { row: app, record } = found;
  if (adapter.acknowledge) await adapter.acknowledge(record, msg).catch((err) => logger.warn({ err: (err as Error).message }, 'acknowledge failed'));

  // Claims: telegram `/start <token>`, whatsapp's code sent from the end user's phone.
  const claim =
    adapter.connectFlow === 'start' && msg.kind === 'command' && msg.command?.name === 'start' && msg.command.text
      ? { token: msg.command.text.trim() }
      : adapter.connectFlow === 'code' && CODE.test(msg.text)
        ? { appId: app.id, code: CODE.exec(msg.text)![0] }
        : null;
  if (claim) {
    const claimed = await claimConnection(claim, msg.surfaceId);
    if (claimed) {
      await postToThread(claimed, msg.threadId, { text: `Connected: ${claimed.label}. Messages here now reach it.`, markdown: false }).catch((err) =>
        logger.warn({ err: (err as Error).message }, 'could not confirm the connection to the end user'),
      );
      return 'claimed';
    }
  }
  const conn = await connectionForSurface(app.id, msg.surfaceId);
  if (!conn) return 'ignored: no connection for this surface';
  return routeInbound(conn, msg);
}

/** Picks up what nobody is processing: left by a stopped process, or received elsewhere. */
async function sweep(): Promise<void> {
  const stale = await prisma.channelInbound.findMany({
    where: {
      OR: [
        { status: 'received', createdAt: { lt: new Date(Date.now() - SWEEP_MS) } },
        { status: 'processing', lockedUntil: { lt: new Date() } },
      ],
    },
    orderBy: { createdAt: 'asc' },
    take: 100,
    select: { id: true, payload: true },
  });
  for (const row of stale) schedule(row.id, orderKey(row.payload as unknown as InboundPayload));
}

export function startInboundSweeper(): { stop(): Promise<void> } {
  let running: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (running) return;
    running = sweep()
      .catch((err) => logger.warn({ err }, 'inbound sweep failed'))
      .finally(() => (running = null));
  }, SWEEP_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
      await Promise.allSettled([...chains.values()]);
    },
  };
}
