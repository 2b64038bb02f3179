// The spend gate (CONTRACT: "a turn that would start with a balance at or below zero on platform
// billing is refused with 402 insufficient_credits"): checked wherever work is accepted, i.e. a
// send with inputs and a session create whose initial_events start the first turn.
import { AppError } from '../errors.js';
import { Prisma } from '../generated/prisma/client.js';
import { balanceNano } from './wallet.js';

/** Throws 402 insufficient_credits when a turn billed this way could not start in this universe. */
export async function assertCanStartTurn(universeId: string, modelBilling: string): Promise<void> {
  // A connected subscription (account billing) pays the provider itself: the wallet is not asked.
  if (modelBilling !== 'platform') return;
  if ((await balanceNano(universeId)) <= 0n) {
    throw new AppError(
      'insufficient_credits',
      'the universe has no credits left: add credits or switch the session to a connected subscription (modelBilling account)',
    );
  }
}

/**
 * The same gate inside a statement that starts a turn (a send's fast path): true when a session
 * row billed by `billing` may start one in universe `universeId` (both SQL expressions).
 */
export const canStartTurnSql = (billing: Prisma.Sql, universeId: Prisma.Sql): Prisma.Sql =>
  Prisma.sql`(${billing} <> 'platform' OR (SELECT u."balanceNanoUsd" FROM "Universe" u WHERE u."id" = ${universeId}) > 0)`;
