// The universe wallet: a balance in nano-dollars, holds for model calls in flight (so parallel
// turns cannot spend the same money twice) and a ledger of grants and charges.
import { prisma } from '../db/client.js';
import { batched } from '../db/batched.js';
import { sqlRows } from '../db/raw-query.js';
import { Prisma } from '../generated/prisma/client.js';
import { newId } from '../ids.js';
import { centsToNano } from '../money.js';

async function holdOne(universeId: string, nano: bigint): Promise<boolean> {
  const n = await prisma.$executeRaw`
    UPDATE "Universe" SET "heldNanoUsd" = "heldNanoUsd" + ${nano}
    WHERE "id" = ${universeId} AND "balanceNanoUsd" - "heldNanoUsd" >= ${nano} AND "balanceNanoUsd" > 0`;
  return n === 1;
}

// Calls starting together hold in one statement (src/db/batched.ts), each universe's row updated
// once by the sum of its calls (rows locked in id order: two batches wait for each other instead
// of deadlocking): when the sum fits, each of its parts does. A universe whose sum does not fit
// holds call by call, so the calls that fit still start; a failed statement, call by call too.
const holds = batched(async (calls: { universeId: string; nano: bigint }[]): Promise<boolean[]> => {
  const alone = () => Promise.all(calls.map((c) => holdOne(c.universeId, c.nano)));
  if (calls.length === 1) return alone();
  let held: { id: string }[];
  try {
    held = await sqlRows<{ id: string }>(
      prisma,
      Prisma.sql`
      WITH req AS (
        SELECT r.u, SUM(r.n)::bigint AS n FROM unnest(${calls.map((c) => c.universeId)}::text[], ${calls.map((c) => c.nano.toString())}::bigint[]) AS r(u, n) GROUP BY r.u
      ), locked AS MATERIALIZED (
        SELECT x."id" FROM "Universe" x WHERE x."id" IN (SELECT u FROM req) ORDER BY x."id" FOR UPDATE
      )
      UPDATE "Universe" x SET "heldNanoUsd" = x."heldNanoUsd" + req.n FROM req, locked
       WHERE x."id" = req.u AND locked."id" = x."id" AND x."balanceNanoUsd" - x."heldNanoUsd" >= req.n AND x."balanceNanoUsd" > 0
      RETURNING x."id"`,
    );
  } catch {
    return alone();
  }
  const ok = new Set(held.map((r) => r.id));
  return Promise.all(calls.map((c) => (ok.has(c.universeId) ? true : holdOne(c.universeId, c.nano))));
});

/** Reserves `nano` if the available balance (balance − holds) covers it. */
export const hold = (universeId: string, nano: bigint): Promise<boolean> => holds({ universeId, nano });

/** Releases a hold and charges the actual cost (one atomic update plus a ledger line). */
export async function settle(universeId: string, held: bigint, cost: bigint, ref: { sessionId: string; usageId: string | null }): Promise<void> {
  // One statement (no BEGIN/COMMIT round trips): under hundreds of concurrent turns a two-statement
  // transaction waits for a pooled connection between its parts and can time out, leaving the hold.
  await prisma.$executeRaw`${settleSql(universeId, held, cost, ref)}`;
}

/**
 * The settle as one statement, `before` (data-modifying CTEs, each `name AS (…)`) running in the
 * same statement: the model call's usage row and the session's consumed cost with its charge.
 */
export function settleSql(
  universeId: string,
  held: bigint,
  cost: bigint,
  ref: { sessionId: string; usageId: string | null },
  before: Prisma.Sql[] = [],
): Prisma.Sql {
  const entryId = newId('msg').replace('msg_', 'wal_');
  return Prisma.sql`
    WITH ${Prisma.join(
      [
        ...before,
        Prisma.sql`charged AS (
      UPDATE "Universe" SET "heldNanoUsd" = "heldNanoUsd" - ${held}, "balanceNanoUsd" = "balanceNanoUsd" - ${cost}
      WHERE "id" = ${universeId} RETURNING "id")`,
      ],
      ', ',
    )}
    INSERT INTO "WalletEntry" ("id", "universeId", "kind", "amountNanoUsd", "sessionId", "usageId", "createdAt")
    SELECT ${entryId}, "id", 'charge', ${-cost}, ${ref.sessionId}, ${ref.usageId}, now() FROM charged`;
}

export async function grant(universeId: string, cents: bigint, note: string | null): Promise<void> {
  const nano = centsToNano(cents);
  await prisma.$transaction([
    prisma.universe.update({ where: { id: universeId }, data: { balanceNanoUsd: { increment: nano } } }),
    prisma.walletEntry.create({ data: { id: newId('msg').replace('msg_', 'wal_'), universeId, kind: 'grant', amountNanoUsd: nano, note } }),
  ]);
}

export async function availableNano(universeId: string): Promise<bigint> {
  const u = await prisma.universe.findUniqueOrThrow({ where: { id: universeId }, select: { balanceNanoUsd: true, heldNanoUsd: true } });
  return u.balanceNanoUsd - u.heldNanoUsd;
}

export async function balanceNano(universeId: string): Promise<bigint> {
  return (await prisma.universe.findUniqueOrThrow({ where: { id: universeId }, select: { balanceNanoUsd: true } })).balanceNanoUsd;
}
