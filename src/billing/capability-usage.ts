// Metering of platform capability calls, like model usage: the session's budget is checked
// before the call, the wallet holds the call's worst case, and the cost at list price (from the
// units the vendor reported) is recorded as a usage row, added to the session's consumed cost
// and charged to the wallet. Capabilities run on the platform's vendor keys, so the wallet is
// charged whatever the session's modelBilling.
import { prisma } from '../db/client.js';
import { newId } from '../ids.js';
import { SPEND_CAP_COLUMNS, turnCapNano } from './spend-cap.js';
import { hold, settle } from './wallet.js';
import { capabilityCostNano, capabilityHoldNano, capabilityVendor } from '../catalog/capability-prices.js';
import { logger } from '../logger.js';

export interface CapabilityScope {
  sessionId: string;
  universeId: string;
  turn: number;
}

export class CapabilityRefused extends Error {
  constructor(
    readonly code: 'budget_reached' | 'insufficient_credits',
    message: string,
  ) {
    super(message);
    this.name = 'CapabilityRefused';
  }
}

/** Checks the budget and holds the worst case; returns the hold to settle with `chargeCapability`. */
export async function reserveCapability(scope: CapabilityScope, capability: string): Promise<bigint> {
  const s = await prisma.session.findUniqueOrThrow({
    where: { id: scope.sessionId },
    select: { consumedNanoUsd: true, budgetReachedAt: true, ...SPEND_CAP_COLUMNS },
  });
  const cap = turnCapNano(s, scope.turn);
  if (s.budgetReachedAt || (cap !== null && s.consumedNanoUsd >= cap)) {
    throw new CapabilityRefused('budget_reached', 'the session reached its budget');
  }
  const held = capabilityHoldNano(capability);
  if (!(await hold(scope.universeId, held))) {
    throw new CapabilityRefused('insufficient_credits', "the universe's credit balance does not cover this call");
  }
  return held;
}

/** Records the call's cost (units at list price), releases the hold and charges the wallet. */
export async function chargeCapability(scope: CapabilityScope, capability: string, held: bigint, units: Record<string, number> | null): Promise<bigint> {
  let cost = 0n;
  try {
    cost = units ? capabilityCostNano(capability, units) : 0n;
  } catch (err) {
    logger.error({ err, capability, units }, 'capability units without a price');
  }
  const usageId = units ? `use_${newId('msg').slice(4)}` : null;
  try {
    if (units) {
      await prisma.modelUsage.create({
        data: {
          id: usageId!,
          sessionId: scope.sessionId,
          universeId: scope.universeId,
          turn: scope.turn,
          provider: capabilityVendor(capability),
          model: capability,
          billing: 'platform',
          costNanoUsd: cost,
        },
      });
      await prisma.$executeRaw`
        UPDATE "Session" SET "consumedNanoUsd" = "consumedNanoUsd" + ${cost},
          "budgetReachedAt" = CASE WHEN "budgetMaxCents" IS NOT NULL AND "budgetReachedAt" IS NULL
            AND "consumedNanoUsd" + ${cost} >= "budgetMaxCents" * 10000000 THEN now() ELSE "budgetReachedAt" END
        WHERE "id" = ${scope.sessionId}`;
    }
    await settle(scope.universeId, held, cost, { sessionId: scope.sessionId, usageId });
  } catch (err) {
    logger.error({ err, sessionId: scope.sessionId, capability }, 'could not record capability usage');
  }
  return cost;
}
