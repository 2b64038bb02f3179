// The one way events enter a session: `storeEvents` numbers them (a row lock on the session
// serialises appends) and writes them with their webhook outbox rows in one statement;
// `announceEvents` tells streams and dispatchers after the commit. `commitEvents` does both.
// The stored JSON is exactly what history and streams return.
import { prisma } from '../db/client.js';
import { sqlRows } from '../db/raw-query.js';
import { newId } from '../ids.js';
import { storableJson } from '../wire/text.js';
import { Prisma } from '../generated/prisma/client.js';
import { AppError } from '../errors.js';
import { logger } from '../logger.js';
import { performance } from 'node:perf_hooks';
import { pubsub, type PubSub } from './pubsub.js';
import { handOverLocalBatch } from './local-batches.js';
import { nudgeDispatchers } from '../webhooks/outbox.js';
import { SESSION_WEBHOOK_EVENTS } from '../webhooks/catalog.js';
import { withErrorParts } from './status-parts.js';
import { commitQueue } from './commit-queue.js';
import type { NewEvent, SessionEvent, StoredBatch, StoredEvent } from './types.js';

export type { NewEvent, SessionEvent, StoredBatch, StoredEvent } from './types.js';

export const sessionChannel = (sessionId: string) => `session:${sessionId}`;

/** What storing touches: the client or an interactive transaction (raw SQL on either). */
export type EventTx = Pick<typeof prisma, '$queryRaw'>;

const WEBHOOK_TYPES = [...SESSION_WEBHOOK_EVENTS];

/**
 * A change of the session row made by the statement that stores the events (a runner taking a
 * turn): extra assignments, extra conditions (when the row does not match, nothing is stored),
 * and CTEs that run in the same statement reading `s`, the updated row (with its "turnCount").
 */
export interface SessionRowChange {
  set: Prisma.Sql;
  where: Prisma.Sql;
  with?: Prisma.Sql;
  /** Event types stored with the row's new "turnCount" as their turn (inputs given to the turn the statement starts). */
  turnFor?: readonly string[];
}

/**
 * Stores events and their webhook outbox rows in ONE statement (call `announceEvents` after
 * the commit): the session's sequence bump (its row lock serialises appends and numbers the
 * events), the inserts, and one delivery per subscribed active endpoint of the universe.
 * One round trip instead of an interactive transaction's five or more: this is the path of
 * every streamed chunk and of a turn's first frame. With `change`, the same statement also
 * moves the session row; a row that does not match stores nothing (`stored` empty).
 */
export async function storeEvents(tx: EventTx, sessionId: string, events: NewEvent[], change?: SessionRowChange): Promise<StoredBatch> {
  if (!events.length) return { sessionId, stored: [], deliveries: 0, turnCount: null };
  const n = events.length;
  const iso = new Date().toISOString();
  // One JSON parameter of [id, type, turn, body] rows (as store-many.ts: no text[] escaping of the bodies).
  const input = events.map((e) => {
    const id = newId('evt');
    return [id, e.type, e.turn ?? null, { id, type: e.type, sessionId, at: iso, ...e.fields }];
  });
  const rows = await sqlRows<{ seq: number; payload: SessionEvent; deliveries: bigint | number | string; turnCount: number }>(
    tx,
    Prisma.sql`
    WITH s AS (
      UPDATE "Session" SET "eventSeq" = "eventSeq" + ${n}${change ? Prisma.sql`, ${change.set}` : Prisma.empty}
      WHERE "id" = ${sessionId}${change ? Prisma.sql` AND ${change.where}` : Prisma.empty}
      RETURNING "id", "eventSeq", "agentId", "universeId", "turnCount", "parentSessionId"
    )${change?.with ? Prisma.sql`, ${change.with}` : Prisma.empty}, input AS (
      SELECT v->>0 AS id, v->>1 AS type, (v->>2)::int AS turn, v->3 AS body, ord
        FROM jsonb_array_elements(${storableJson(input)}::jsonb) WITH ORDINALITY AS j(v, ord)
    ), ins AS (
      INSERT INTO "SessionEvent" ("id", "sessionId", "seq", "type", "payload", "turn", "createdAt")
      SELECT input.id, ${sessionId}, (s."eventSeq" - ${n} + input.ord)::int, input.type,
             -- a thread's events (issue #32) name its session and carry thread_id
             input.body || jsonb_build_object('agentId', s."agentId") || CASE WHEN s."parentSessionId" IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('sessionId', s."parentSessionId", 'thread_id', s."id") END,
             ${change?.turnFor ? Prisma.sql`COALESCE(input.turn, CASE WHEN input.type = ANY(${[...change.turnFor]}::text[]) THEN s."turnCount" END)` : Prisma.sql`input.turn`},
             (${iso}::timestamptz AT TIME ZONE 'UTC')
      FROM s, input
      RETURNING "id", "seq", "type", "payload"
    ), webhook_events AS (
      -- stored session events delivered as themselves, and the derived session.requires_action:
      -- one per agent.tool_use awaiting confirmation (named by a requires_action stop), under
      -- that event's id, written with the status_idle event that stops the turn
      SELECT ins."id", ins."type" FROM ins WHERE ins."type" = ANY(${WEBHOOK_TYPES}::text[])
      UNION ALL
      SELECT tool.id, 'session.requires_action'
        FROM ins, jsonb_array_elements_text(ins."payload"->'stop_reason'->'event_ids') AS tool(id)
       WHERE ins."type" = 'session.status_idle' AND ins."payload"->'stop_reason'->>'type' = 'requires_action'
    ), hooks AS (
      INSERT INTO "WebhookDelivery" ("id", "endpointId", "eventId", "eventType", "body", "nextAttemptAt", "updatedAt")
      SELECT 'whdl_' || substr(md5(w."id" || e."id"), 1, 26), e."id", w."id", w."type",
             json_build_object('id', w."id", 'type', w."type", 'created_at', ${iso}::text, 'data', json_build_object('type', 'session', 'id', ${sessionId}::text))::text,
             now(), now()
      FROM webhook_events w JOIN "WebhookEndpoint" e ON e."universeId" = (SELECT "universeId" FROM s) AND e."status" = 'active' AND w."type" = ANY(e."events")
      WHERE (SELECT "parentSessionId" FROM s) IS NULL -- a thread's own events are no webhooks (its session's thread.* are)
      ON CONFLICT DO NOTHING
      RETURNING 1
    )
    SELECT "seq", "payload", (SELECT count(*) FROM hooks) AS "deliveries", (SELECT "turnCount" FROM s) AS "turnCount" FROM ins ORDER BY "seq"`,
  );
  if (change && rows.length === 0) return { sessionId, stored: [], deliveries: 0, turnCount: null };
  // The session was deleted meanwhile (a delete racing an archive or a turn's last event).
  if (rows.length !== n) throw new AppError('not_found', 'session not found');
  return {
    sessionId,
    stored: rows.map((r) => ({ seq: Number(r.seq), event: r.payload })),
    deliveries: Number(rows[0]!.deliveries),
    turnCount: Number(rows[0]!.turnCount),
  };
}

/**
 * After commit: streams learn the new sequence range (this process's at once, with the events);
 * dispatchers learn of new deliveries. Nothing waits for the notice's round trip to Redis (issue
 * #29: it was on every commit's path and before each turn's model call): one connection keeps
 * its commands in the order they are given, and another process reads from the store any range
 * a notice skips. A notice that fails is logged (noticeFailed); its range reaches the other
 * processes' streams with the session's next notice. Never throws: the batch is stored already.
 */
export function announceEvents(batch: StoredBatch): void {
  const { stored, sessionId } = batch;
  try {
    if (batch.deliveries) nudgeDispatchers();
    if (!stored.length) return;
    handOverLocalBatch(sessionId, stored); // this process's streams, at once
    const bus = pubsub();
    bus
      .notify(sessionChannel(sessionId), `${stored[0]!.seq}-${stored[stored.length - 1]!.seq}`, () => carriedEvents(stored))
      .catch((err: unknown) => noticeFailed(bus, err, sessionId));
  } catch (err) {
    logger.error({ err, sessionId }, 'a stored batch could not be announced; streams read it at the next');
  }
}

// While Redis is away every notice fails: said at most once per NOTICE_WARN_MS per pub/sub part,
// with how many failed since the last warning.
const NOTICE_WARN_MS = 10_000;
const noticeWarnings = new WeakMap<PubSub, { failed: number; at: number }>();
function noticeFailed(bus: PubSub, err: unknown, sessionId: string): void {
  let w = noticeWarnings.get(bus);
  if (!w) noticeWarnings.set(bus, (w = { failed: 0, at: Number.NEGATIVE_INFINITY }));
  w.failed++;
  const now = performance.now();
  if (now - w.at < NOTICE_WARN_MS) return;
  logger.warn(
    { err, sessionId, failed_since_last_warning: w.failed },
    'notices to other processes failed; their streams get those events with the next notice of each session',
  );
  w.failed = 0;
  w.at = now;
}

/** Events up to this size travel in their notice to other processes' streams (no read back there). */
const NOTICE_EVENTS_MAX_CHARS = 64 * 1024;

/**
 * What a committed batch's notice ("first-last") carries to other processes' streams: the events
 * themselves when small (src/events/hub.ts delivers them without reading the store; issue #29:
 * with several processes, a stream's read per batch was most of the other process's statements).
 */
function carriedEvents(stored: StoredEvent[]): string {
  const events = JSON.stringify(stored);
  return events.length <= NOTICE_EVENTS_MAX_CHARS ? events : '';
}

// Commits of many sessions share statements under load (commit-queue.ts).
const commits = commitQueue((sessionId, events) => storeEvents(prisma, sessionId, events));

/**
 * Stores (one statement, its own transaction, possibly shared with other sessions' commits of
 * the same moment: commit-queue.ts) and announces. Each session.error gets its agent.status
 * `error` part right after it (status-parts.ts); the answer is the events given.
 */
export async function commitEvents(sessionId: string, events: NewEvent[]): Promise<StoredEvent[]> {
  const expanded = withErrorParts(events);
  const batch = expanded.events.length ? await commits.store(sessionId, expanded.events) : await storeEvents(prisma, sessionId, []);
  announceEvents(batch);
  return expanded.events === events ? batch.stored : expanded.positions.map((i) => batch.stored[i]!);
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
