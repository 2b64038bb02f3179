// What a finished model call writes (metering.ts): its usage row, its cost on the session's
// consumed total (and on its coordinator's for a thread) and, on the platform's key, the wallet's
// settle (hold released, cost charged) with its ledger line. Calls that end together (many turns
// streaming at once) write in ONE statement (src/db/batched.ts): each session row and each
// universe row updated once by its calls' sums, rows locked in id order first so that two
// batches (of two processes) sharing rows wait for each other instead of deadlocking. A failed
// batch writes each call alone with the one-call statement.
import { prisma } from '../db/client.js';
import { batched } from '../db/batched.js';
import { sqlRows } from '../db/raw-query.js';
import { Prisma } from '../generated/prisma/client.js';
import { newId } from '../ids.js';
import { settleSql } from '../billing/wallet.js';
import { logger } from '../logger.js';
import type { Usage } from './types.js';

export interface UsageWrite {
  sessionId: string;
  universeId: string;
  turn: number;
  provider: string;
  model: string;
  billing: string;
  /** Null: the call reported nothing (its hold is still settled). */
  usage: Usage | null;
  usageId: string | null;
  cost: bigint;
  held: bigint;
  /** The platform's key paid: release the hold and charge the wallet. */
  settle: boolean;
}

/** The one-call statement (a lone call, and each call again when a batch fails). */
async function writeOne(w: UsageWrite): Promise<void> {
  const writes: Prisma.Sql[] = w.usage
    ? [
        Prisma.sql`usage_row AS (
          INSERT INTO "ModelUsage" ("id", "sessionId", "universeId", "turn", "provider", "model", "billing",
            "inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "costNanoUsd", "createdAt")
          VALUES (${w.usageId}, ${w.sessionId}, ${w.universeId}, ${w.turn}, ${w.provider}, ${w.model}, ${w.billing},
            ${w.usage.inputTokens}, ${w.usage.outputTokens}, ${w.usage.cacheReadTokens}, ${w.usage.cacheWriteTokens}, ${w.cost}, now()))`,
        Prisma.sql`consumed AS (
          -- A thread's cost counts on its row and on its session's (whose budget it spends).
          UPDATE "Session" SET "consumedNanoUsd" = "consumedNanoUsd" + ${w.cost},
            "budgetReachedAt" = CASE WHEN "budgetMaxCents" IS NOT NULL AND "budgetReachedAt" IS NULL
              AND "consumedNanoUsd" + ${w.cost} >= "budgetMaxCents" * 10000000 THEN now() ELSE "budgetReachedAt" END
          WHERE "id" = ${w.sessionId} OR "id" = (SELECT p."parentSessionId" FROM "Session" p WHERE p."id" = ${w.sessionId}))`,
      ]
    : [];
  if (w.settle) await prisma.$executeRaw`${settleSql(w.universeId, w.held, w.cost, { sessionId: w.sessionId, usageId: w.usageId }, writes)}`;
  else if (writes.length) await prisma.$executeRaw`WITH ${Prisma.join(writes, ', ')} SELECT 1`;
}

async function writeMany(ws: UsageWrite[]): Promise<void> {
  const col = <T>(f: (w: UsageWrite) => T) => ws.map(f);
  await sqlRows(
    prisma,
    Prisma.sql`
    WITH rec AS MATERIALIZED (
      SELECT * FROM unnest(
        ${col((w) => w.usageId)}::text[], ${col((w) => w.sessionId)}::text[], ${col((w) => w.universeId)}::text[], ${col((w) => w.turn)}::int[],
        ${col((w) => w.provider)}::text[], ${col((w) => w.model)}::text[], ${col((w) => w.billing)}::text[],
        ${col((w) => w.usage?.inputTokens ?? 0)}::int[], ${col((w) => w.usage?.outputTokens ?? 0)}::int[],
        ${col((w) => w.usage?.cacheReadTokens ?? 0)}::int[], ${col((w) => w.usage?.cacheWriteTokens ?? 0)}::int[],
        ${col((w) => w.cost.toString())}::bigint[], ${col((w) => w.held.toString())}::bigint[], ${col((w) => w.settle)}::bool[],
        ${col(() => newId('msg').replace('msg_', 'wal_'))}::text[], ${col((w) => w.usage !== null)}::bool[]
      ) AS r(usage_id, session_id, universe_id, turn, provider, model, billing, input, output, cache_read, cache_write, cost, held, settle, entry_id, has_usage)
    ), usage_rows AS (
      INSERT INTO "ModelUsage" ("id", "sessionId", "universeId", "turn", "provider", "model", "billing",
        "inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "costNanoUsd", "createdAt")
      SELECT usage_id, session_id, universe_id, turn, provider, model, billing, input, output, cache_read, cache_write, cost, now()
        FROM rec WHERE has_usage
    ), spend AS (
      -- a thread's cost counts on its row and on its session's (whose budget it spends)
      SELECT x.sid, SUM(x.cost)::bigint AS cost FROM (
        SELECT rec.session_id AS sid, rec.cost FROM rec WHERE rec.has_usage
        UNION ALL
        SELECT p."parentSessionId", rec.cost FROM rec JOIN "Session" p ON p."id" = rec.session_id WHERE rec.has_usage AND p."parentSessionId" IS NOT NULL
      ) x GROUP BY x.sid
    ), locked_sessions AS MATERIALIZED (
      SELECT s."id" FROM "Session" s WHERE s."id" IN (SELECT sid FROM spend) ORDER BY s."id" FOR UPDATE
    ), consumed AS (
      UPDATE "Session" s SET "consumedNanoUsd" = s."consumedNanoUsd" + spend.cost,
        "budgetReachedAt" = CASE WHEN s."budgetMaxCents" IS NOT NULL AND s."budgetReachedAt" IS NULL
          AND s."consumedNanoUsd" + spend.cost >= s."budgetMaxCents" * 10000000 THEN now() ELSE s."budgetReachedAt" END
      FROM spend, locked_sessions l WHERE s."id" = spend.sid AND l."id" = s."id"
    ), per_universe AS (
      SELECT universe_id, SUM(held)::bigint AS held, SUM(cost)::bigint AS cost FROM rec WHERE settle GROUP BY universe_id
    ), locked_universes AS MATERIALIZED (
      SELECT u."id" FROM "Universe" u WHERE u."id" IN (SELECT universe_id FROM per_universe) ORDER BY u."id" FOR UPDATE
    ), charged AS (
      UPDATE "Universe" u SET "heldNanoUsd" = u."heldNanoUsd" - pu.held, "balanceNanoUsd" = u."balanceNanoUsd" - pu.cost
      FROM per_universe pu, locked_universes l WHERE u."id" = pu.universe_id AND l."id" = u."id" RETURNING u."id"
    ), entries AS (
      INSERT INTO "WalletEntry" ("id", "universeId", "kind", "amountNanoUsd", "sessionId", "usageId", "createdAt")
      SELECT rec.entry_id, rec.universe_id, 'charge', -rec.cost, rec.session_id, rec.usage_id, now()
        FROM rec JOIN charged ON charged."id" = rec.universe_id WHERE rec.settle
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM entries) AS "entries"`,
  );
}

// Each call's answer: null when written, else its own statement's error.
const writes = batched(async (ws: UsageWrite[]): Promise<unknown[]> => {
  const alone = (w: UsageWrite) =>
    writeOne(w).then(
      () => null,
      (err: unknown) => err ?? new Error('usage write failed'),
    );
  if (ws.length === 1) return [await alone(ws[0]!)];
  try {
    await writeMany(ws);
    return ws.map(() => null);
  } catch (err) {
    logger.warn({ err, calls: ws.length }, "a shared usage statement failed; each call's usage is written alone");
    const answers: unknown[] = [];
    for (const w of ws) answers.push(await alone(w));
    return answers;
  }
});

/** Writes one finished call's usage (possibly in a statement shared with other calls). */
export async function writeUsage(w: Omit<UsageWrite, 'usageId'>): Promise<void> {
  if (!w.usage && !w.settle) return;
  const failed = await writes({ ...w, usageId: w.usage ? newId('msg').replace('msg_', 'use_') : null });
  if (failed) throw failed;
}
