// The event store's statement for several sessions at once (the commit queue's batches, many
// turns streaming together): one INSERT for every session's events instead of one statement
// per session. Same rows, numbering and webhook outbox rows as `storeEvents` (store.ts) for
// each session alone; the session rows are locked in id order first, so two batches (of two
// processes) that share sessions wait for each other instead of deadlocking.
import { prisma } from '../db/client.js';
import { sqlRows } from '../db/raw-query.js';
import { newId } from '../ids.js';
import { storableJson } from '../wire/text.js';
import { Prisma } from '../generated/prisma/client.js';
import { SESSION_WEBHOOK_EVENTS } from '../webhooks/catalog.js';
import type { NewEvent, SessionEvent } from './types.js';
import type { StoredBatch } from './types.js';

const WEBHOOK_TYPES = [...SESSION_WEBHOOK_EVENTS];

/** One session's events of a batch, in order (one session appears once). */
export interface SessionEvents {
  sessionId: string;
  events: NewEvent[];
  /** With a claim: the universe the session must be in, meeting the claim's gate (null: no condition). */
  universeId?: string | null;
}

/**
 * The same statement also starts each session's turn (a send's fast path, many at once): the
 * row is claimed (`from` → `to`, this process its runner, turnCount + 1, not with the budget
 * reached, the group's universe condition), inputs already waiting are given to the new turn and
 * so are the group's events of `turnFor`. A session whose row does not match stores nothing.
 */
export interface TurnClaim {
  kind: 'claim';
  owner: string;
  from: readonly string[];
  to: string;
  turnFor: readonly string[];
  /** The condition a group with a universe also meets, given the row's billing and that universe (SQL). */
  gate: (billing: Prisma.Sql, universeId: Prisma.Sql) => Prisma.Sql;
}

/**
 * The same statement also ends each session's run (turns ending together): the row, still this
 * process's (`from`, runner `owner`), goes to `to` without a runner, unless an input of
 * `inputTypes` waits (then it stores nothing: the runner starts the next turn instead).
 */
export interface RunRelease {
  kind: 'release';
  owner: string;
  from: readonly string[];
  to: string;
  inputTypes: readonly string[];
}

/**
 * Stores every group's events in ONE statement (its own transaction). The answer has a batch per
 * stored session; a session missing from it was deleted meanwhile (nothing of it stored).
 */
export async function storeEventsOfSessions(groups: SessionEvents[], change?: TurnClaim | RunRelease): Promise<Map<string, StoredBatch>> {
  const claim = change?.kind === 'claim' ? change : undefined;
  const release = change?.kind === 'release' ? change : undefined;
  const sorted = [...groups].sort((a, b) => (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0));
  const iso = new Date().toISOString();
  // Every event as one JSON row [session, id, type, turn, ord, body], all in ONE parameter: the
  // bodies are not escaped again into text[] literals (issue #29: that was the largest share of
  // what a turn allocated), and PostgreSQL parses them once, as the jsonb they are stored as.
  const input: unknown[] = [];
  for (const { sessionId, events } of sorted) {
    events.forEach((e, i) => {
      const id = newId('evt');
      input.push([sessionId, id, e.type, e.turn ?? null, i + 1, { id, type: e.type, sessionId, at: iso, ...e.fields }]);
    });
  }
  const rows = await sqlRows<{ sessionId: string; seq: number; payload: SessionEvent; deliveries: bigint | number | string; turnCount: number }>(
    prisma,
    Prisma.sql`
    WITH locked AS MATERIALIZED (
      SELECT x."id" FROM "Session" x WHERE x."id" = ANY(${sorted.map((g) => g.sessionId)}::text[]) ORDER BY x."id" FOR UPDATE
    ), counts AS (
      SELECT * FROM unnest(${sorted.map((g) => g.sessionId)}::text[], ${sorted.map((g) => g.events.length)}::int[], ${sorted.map((g) => g.universeId ?? null)}::text[])
        AS c(session_id, n, universe_id)
    ), s AS (
      UPDATE "Session" x SET "eventSeq" = x."eventSeq" + counts.n${
        claim
          ? Prisma.sql`, "turnCount" = x."turnCount" + 1, "status" = ${claim.to}, "runnerId" = ${claim.owner}, "runnerHeartbeatAt" = now()`
          : release
            ? Prisma.sql`, "status" = ${release.to}, "runnerId" = NULL`
            : Prisma.empty
      }
      FROM counts, locked WHERE x."id" = counts.session_id AND locked."id" = x."id"${
        claim
          ? Prisma.sql` AND x."status" = ANY(${[...claim.from]}::text[]) AND x."budgetReachedAt" IS NULL
        AND (counts.universe_id IS NULL OR (x."universeId" = counts.universe_id AND ${claim.gate(Prisma.sql`x."modelBilling"`, Prisma.sql`counts.universe_id`)}))`
          : release
            ? Prisma.sql` AND x."status" = ANY(${[...release.from]}::text[]) AND x."runnerId" = ${release.owner}
        AND NOT EXISTS (SELECT 1 FROM "SessionEvent" e WHERE e."sessionId" = x."id" AND e."turn" IS NULL AND e."type" = ANY(${[...release.inputTypes]}::text[]))`
            : Prisma.empty
      }
      RETURNING x."id", x."eventSeq", x."agentId", x."universeId", x."turnCount", x."parentSessionId", counts.n
    )${
      claim
        ? Prisma.sql`, taken AS (
      UPDATE "SessionEvent" e SET "turn" = s."turnCount" FROM s
      WHERE e."sessionId" = s."id" AND e."turn" IS NULL AND e."type" = ANY(${[...claim.turnFor]}::text[])
    )`
        : Prisma.empty
    }, input AS (
      SELECT v->>0 AS session_id, v->>1 AS id, v->>2 AS type, (v->>3)::int AS turn, (v->>4)::int AS ord, v->5 AS body
        FROM jsonb_array_elements(${storableJson(input)}::jsonb) AS j(v)
    ), ins AS (
      INSERT INTO "SessionEvent" ("id", "sessionId", "seq", "type", "payload", "turn", "createdAt")
      SELECT input.id, input.session_id, (s."eventSeq" - s.n + input.ord)::int, input.type,
             input.body || jsonb_build_object('agentId', s."agentId") || CASE WHEN s."parentSessionId" IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('sessionId', s."parentSessionId", 'thread_id', s."id") END,
             ${claim ? Prisma.sql`COALESCE(input.turn, CASE WHEN input.type = ANY(${[...claim.turnFor]}::text[]) THEN s."turnCount" END)` : Prisma.sql`input.turn`},
             (${iso}::timestamptz AT TIME ZONE 'UTC')
      FROM input JOIN s ON s."id" = input.session_id
      RETURNING "id", "sessionId", "seq", "type", "payload"
    ), webhook_events AS (
      -- as in storeEvents: stored session events, and one session.requires_action per tool use
      -- awaiting confirmation named by a requires_action stop
      SELECT ins."id", ins."type", ins."sessionId" FROM ins WHERE ins."type" = ANY(${WEBHOOK_TYPES}::text[])
      UNION ALL
      SELECT tool.id, 'session.requires_action', ins."sessionId"
        FROM ins, jsonb_array_elements_text(ins."payload"->'stop_reason'->'event_ids') AS tool(id)
       WHERE ins."type" = 'session.status_idle' AND ins."payload"->'stop_reason'->>'type' = 'requires_action'
    ), hooks AS (
      INSERT INTO "WebhookDelivery" ("id", "endpointId", "eventId", "eventType", "body", "nextAttemptAt", "updatedAt")
      SELECT 'whdl_' || substr(md5(w."id" || e."id"), 1, 26), e."id", w."id", w."type",
             json_build_object('id', w."id", 'type', w."type", 'created_at', ${iso}::text, 'data', json_build_object('type', 'session', 'id', w."sessionId"))::text,
             now(), now()
      FROM webhook_events w JOIN s ON s."id" = w."sessionId"
      JOIN "WebhookEndpoint" e ON e."universeId" = s."universeId" AND e."status" = 'active' AND w."type" = ANY(e."events")
      WHERE s."parentSessionId" IS NULL
      ON CONFLICT DO NOTHING
      RETURNING 1
    )
    SELECT ins."sessionId", ins."seq", ins."payload", (SELECT count(*) FROM hooks) AS "deliveries", s."turnCount"
      FROM ins JOIN s ON s."id" = ins."sessionId" ORDER BY ins."sessionId", ins."seq"`,
  );
  const batches = new Map<string, StoredBatch>();
  // Every delivery of the statement is counted once, on the first batch (the caller nudges the dispatchers).
  const deliveries = rows.length ? Number(rows[0]!.deliveries) : 0;
  for (const r of rows) {
    let batch = batches.get(r.sessionId);
    if (!batch) {
      batch = { sessionId: r.sessionId, stored: [], deliveries: batches.size === 0 ? deliveries : 0, turnCount: Number(r.turnCount) };
      batches.set(r.sessionId, batch);
    }
    batch.stored.push({ seq: Number(r.seq), event: r.payload });
  }
  return batches;
}
