// The gateway's one metering point around every model call: picks the credential (platform key
// or the universe's subscription), enforces the session budget (before and during the stream)
// and the wallet (a hold for the call's worst case), then records usage at list price, adds it
// to the session's consumed cost and charges the wallet.
import { prisma } from '../db/client.js';
import { newId } from '../ids.js';
import { streamModel } from './gateway.js';
import { DEMO_CREDENTIAL, platformCredential } from './credentials.js';
import { ProviderError, BudgetReachedError, emptyUsage, type ModelEvent, type ModelRequest, type Usage, type ProviderCredential } from './types.js';
import { costNanoUsd, priceOf } from '../billing/pricing.js';
import { SPEND_CAP_COLUMNS, turnCapNano } from '../billing/spend-cap.js';
import { hold, settle } from '../billing/wallet.js';
import { accountCredential, markNeedsReconnect, markUsed } from '../billing/subscriptions.js';
import { logger } from '../logger.js';

export interface MeterScope {
  sessionId: string;
  universeId: string;
  turn: number;
}

/** Rough token count of a request (4 characters a token), for holds and in-stream budget checks. */
function estimateInputTokens(req: ModelRequest): number {
  return Math.ceil((req.system.length + JSON.stringify(req.messages).length + JSON.stringify(req.tools).length) / 4);
}

/** What a metered call needs to know before it starts (a passthrough request has no ModelRequest). */
export interface MeterRequest {
  provider: ModelRequest['provider'];
  model: string;
  estimatedInputTokens: number;
  maxTokens: number;
}

/**
 * One model call's meter: the credential to call with (platform key or subscription), the wallet
 * hold for its worst case, a budget check to run while the answer streams, and the recording of
 * its usage at the end (exactly once). Throws BudgetReachedError before any call when the budget
 * is already spent, ProviderError `insufficient_credits` when the wallet cannot hold the call.
 */
export interface Meter {
  readonly cred: ProviderCredential;
  /** Whether the call's projected spend so far reaches the session's budget (stop the stream then). */
  overBudget(usage: Usage | null, streamedChars: number): boolean;
  /** The usage to record when the stream was cut at the budget: estimates filled in. */
  cutUsage(usage: Usage | null, streamedChars: number): Usage;
  /** The provider refused the credential: a subscription is marked for reconnecting; the error to report. */
  refused(err: ProviderError): Promise<ProviderError>;
  record(usage: Usage | null): Promise<void>;
}

export async function openMeter(scope: MeterScope, req: MeterRequest): Promise<Meter> {
  const columns = { modelBilling: true, consumedNanoUsd: true, budgetReachedAt: true, parentSessionId: true, ...SPEND_CAP_COLUMNS } as const;
  const own = await prisma.session.findUniqueOrThrow({ where: { id: scope.sessionId }, select: columns });
  // A thread (multiagent, issue #32) spends its session's budget: the session's row caps it.
  const session = own.parentSessionId ? await prisma.session.findUniqueOrThrow({ where: { id: own.parentSessionId }, select: columns }) : own;
  // The session's cap, or a routine fire's allowance for this turn (the fire's turn then ends
  // with budget_reached, while the session itself stays open for more work).
  const cap = turnCapNano(session, own.parentSessionId ? -1 : scope.turn);
  if (session.budgetReachedAt || (cap !== null && session.consumedNanoUsd >= cap)) throw new BudgetReachedError();

  let cred: ProviderCredential;
  let subscriptionId: string | null = null;
  if (req.provider === 'demo') {
    cred = DEMO_CREDENTIAL; // the demo model calls no provider: nothing to pay with, whatever the billing
  } else if (session.modelBilling === 'account') {
    ({ cred, subscriptionId } = await accountCredential(scope.universeId, req.provider));
  } else {
    cred = platformCredential(req.provider);
  }

  const price = priceOf(req.model) ?? { input: 0n, output: 0n, cacheRead: 0n, cacheWrite: 0n };
  let held = 0n;
  if (cred.kind === 'platform' && req.provider !== 'demo') {
    held = BigInt(req.estimatedInputTokens) * price.input + BigInt(req.maxTokens) * price.output;
    if (!(await hold(scope.universeId, held))) {
      throw new ProviderError("the universe's credit balance is exhausted: add credits or connect a model subscription", {
        status: 402,
        retryable: false,
        code: 'insufficient_credits',
      });
    }
  }
  // Projected spend of this call so far: reported usage, or estimates where the provider reports
  // only at the end.
  const projection = (usage: Usage | null, streamedChars: number) => ({
    outTokens: Math.max(usage?.outputTokens ?? 0, Math.ceil(streamedChars / 4)),
    inTokens: usage?.inputTokens || req.estimatedInputTokens,
  });
  let recorded = false;
  return {
    cred,
    overBudget(usage, streamedChars) {
      if (cap === null) return false;
      const { inTokens, outTokens } = projection(usage, streamedChars);
      return session.consumedNanoUsd + BigInt(inTokens) * price.input + BigInt(outTokens) * price.output >= cap;
    },
    cutUsage(usage, streamedChars) {
      const { inTokens, outTokens } = projection(usage, streamedChars);
      return { ...(usage ?? emptyUsage()), inputTokens: inTokens, outputTokens: outTokens };
    },
    async refused(err) {
      if (err.code !== 'provider_auth' || !subscriptionId) return err;
      await markNeedsReconnect(subscriptionId);
      return new ProviderError(
        `the ${req.provider} subscription's credential was refused by the provider; reconnect it (PUT /v1/model-subscriptions/${req.provider})`,
        { status: err.status, retryable: false, code: 'subscription_needs_reconnect' },
      );
    },
    async record(usage) {
      if (recorded) return;
      recorded = true;
      await record(scope, req, cred, usage, held, subscriptionId);
    },
  };
}

export async function* meteredModelStream(scope: MeterScope, req: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
  const meter = await openMeter(scope, {
    provider: req.provider,
    model: req.model,
    estimatedInputTokens: estimateInputTokens(req),
    maxTokens: req.maxTokens ?? 8192,
  });
  const upstream = new AbortController();
  const onAbort = () => upstream.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  let usage: Usage | null = null;
  let streamedChars = 0;
  let budgetHit = false;
  let failed: unknown = null;
  try {
    for await (const ev of streamModel(req, meter.cred, upstream.signal)) {
      if (ev.type === 'usage') usage = mergeUsage(usage, ev.usage);
      if (ev.type === 'text_delta' || ev.type === 'reasoning_delta') streamedChars += ev.text.length;
      if (ev.type === 'tool_call_delta') streamedChars += ev.argsPartial.length;
      // Reaching the cap stops the stream mid-way.
      if (meter.overBudget(usage, streamedChars)) {
        budgetHit = true;
        usage = meter.cutUsage(usage, streamedChars);
        upstream.abort();
        break;
      }
      yield ev;
    }
  } catch (err) {
    failed = err instanceof ProviderError ? await meter.refused(err) : err;
  } finally {
    signal.removeEventListener('abort', onAbort);
    await meter.record(usage);
  }
  if (failed) throw failed;
  if (budgetHit) throw new BudgetReachedError();
}

async function record(
  scope: MeterScope,
  req: MeterRequest,
  cred: ProviderCredential,
  usage: Usage | null,
  held: bigint,
  subscriptionId: string | null,
): Promise<void> {
  const cost = usage ? costNanoUsd(req.model, usage) : 0n;
  const usageId = usage ? newId('msg').replace('msg_', 'use_') : null;
  try {
    if (usage) {
      await prisma.modelUsage.create({
        data: {
          id: usageId!,
          sessionId: scope.sessionId,
          universeId: scope.universeId,
          turn: scope.turn,
          provider: req.provider,
          model: req.model,
          billing: cred.kind,
          inputTokens: usage.inputTokens,
          outputTokens: usage.outputTokens,
          cacheReadTokens: usage.cacheReadTokens,
          cacheWriteTokens: usage.cacheWriteTokens,
          costNanoUsd: cost,
        },
      });
      // Consumed cost counts list price on either billing; the budget caps it. A thread's cost
      // counts on its row and on its session's (whose budget it spends).
      await prisma.$executeRaw`
        UPDATE "Session" SET "consumedNanoUsd" = "consumedNanoUsd" + ${cost},
          "budgetReachedAt" = CASE WHEN "budgetMaxCents" IS NOT NULL AND "budgetReachedAt" IS NULL
            AND "consumedNanoUsd" + ${cost} >= "budgetMaxCents" * 10000000 THEN now() ELSE "budgetReachedAt" END
        WHERE "id" = ${scope.sessionId} OR "id" = (SELECT p."parentSessionId" FROM "Session" p WHERE p."id" = ${scope.sessionId})`;
    }
    if (cred.kind === 'platform' && req.provider !== 'demo') await settle(scope.universeId, held, cost, { sessionId: scope.sessionId, usageId });
    if (subscriptionId) await markUsed(subscriptionId);
  } catch (err) {
    logger.error({ err, sessionId: scope.sessionId }, 'could not record model usage');
  }
}

/** Usage events carry running totals: keep the largest value of each counter. */
export function mergeUsage(a: Usage | null, b: Usage): Usage {
  if (!a) return { ...b };
  return {
    inputTokens: Math.max(a.inputTokens, b.inputTokens),
    outputTokens: Math.max(a.outputTokens, b.outputTokens),
    cacheReadTokens: Math.max(a.cacheReadTokens, b.cacheReadTokens),
    cacheWriteTokens: Math.max(a.cacheWriteTokens, b.cacheWriteTokens),
  };
}
