// The universe wallet: a balance in nano-dollars, holds for model calls in flight (so parallel
// turns cannot spend the same money twice) and a ledger of grants and charges.
import { prisma } from '../db/client.js';
import { Prisma } from '../generated/prisma/client.js';
import { newId } from '../ids.js';
import { centsToNano } from '../money.js';

/** Reserves `nano` if the available balance (balance − holds) covers it. */
export async function hold(universeId: string, nano: bigint): Promise<boolean> {
  const n = await prisma.$executeRaw`
    UPDATE "Universe" SET "heldNanoUsd" = "heldNanoUsd" + ${nano}
    WHERE "id" = ${universeId} AND "balanceNanoUsd" - "heldNanoUsd" >= ${nano} AND "balanceNanoUsd" > 0`;
  return n === 1;
}

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
