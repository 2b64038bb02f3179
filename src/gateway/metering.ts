// The gateway's one metering point around every model call: picks the credential (platform key
// or the universe's subscription), enforces the session budget (before and during the stream)
// and the wallet (a hold for the call's worst case), then records usage at list price, adds it
// to the session's consumed cost and charges the wallet.
import { prisma } from '../db/client.js';
import { batched } from '../db/batched.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { streamModel } from './gateway.js';
import { DEMO_CREDENTIAL, platformCredential } from './credentials.js';
import { ProviderError, BudgetReachedError, emptyUsage, type ModelEvent, type ModelRequest, type Usage, type ProviderCredential } from './types.js';
import { costNanoUsd, priceOf } from '../billing/pricing.js';
import { SPEND_CAP_COLUMNS, turnCapNano } from '../billing/spend-cap.js';
import { hold } from '../billing/wallet.js';
import { writeUsage } from './usage-writes.js';
import type { Prisma } from '../generated/prisma/client.js';
import { accountCredential, markNeedsReconnect, markUsed } from '../billing/subscriptions.js';
import { logger } from '../logger.js';
import { failSpan, SpanKind, tracer, tracingOn, type Span } from '../telemetry/tracing.js';
import { modelCalls, modelCost, modelTokens } from '../telemetry/metrics.js';

export interface MeterScope {
  sessionId: string;
  universeId: string;
  turn: number;
  /**
   * The session's spend as its turn read it at the start (the turn's first call): no read of
   * its own before the call (issue #29). Later calls read it again.
   */
  startRow?: MeterRow;
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
  /** The call failed (`error`) or was cut at the budget (`budget`): said on its span and in its metric. */
  failed(how: 'error' | 'budget', err?: unknown): void;
}

/**
 * The model call's span (`chat <model>`, GenAI semantic conventions): opened with the meter,
 * ended when its usage is recorded (with the token counts and cost the metering recorded).
 */
function modelSpan(scope: MeterScope, req: MeterRequest, billing: string): Span | undefined {
  if (!tracingOn()) return undefined;
  return tracer().startSpan(`chat ${req.model}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': req.provider,
      'gen_ai.request.model': req.model,
      'gen_ai.request.max_tokens': req.maxTokens,
      'agent_service.session.id': scope.sessionId,
      'agent_service.turn': scope.turn,
      'agent_service.billing': billing,
    },
  });
}

const METER_COLUMNS = { id: true, modelBilling: true, consumedNanoUsd: true, budgetReachedAt: true, parentSessionId: true, ...SPEND_CAP_COLUMNS } as const;
export type MeterRow = Prisma.SessionGetPayload<{ select: typeof METER_COLUMNS }>;

// Calls starting together read their sessions' spend in one query (src/db/batched.ts; issue #29).
const meterRows = batched(async (ids: string[]): Promise<(MeterRow | null)[]> => {
  const rows = await prisma.session.findMany({ where: { id: { in: ids } }, select: METER_COLUMNS });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id) ?? null);
});
async function meterRowOf(id: string): Promise<MeterRow> {
  const row = await meterRows(id);
  if (!row) throw new AppError('not_found', `session ${id} not found`);
  return row;
}

export async function openMeter(scope: MeterScope, req: MeterRequest): Promise<Meter> {
  const own = scope.startRow ?? (await meterRowOf(scope.sessionId));
  // A thread (multiagent, issue #32) spends its session's budget: the session's row caps it.
  const session = own.parentSessionId ? await meterRowOf(own.parentSessionId) : own;
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
  // Once the provider reported usage, its input side is exact (with prompt caching most input is
  // cache reads and writes, each at its own price; a fully cached prompt has 0 plain input tokens).
  const projection = (usage: Usage | null, streamedChars: number) => ({
    outTokens: Math.max(usage?.outputTokens ?? 0, Math.ceil(streamedChars / 4)),
    inTokens: usage ? usage.inputTokens : req.estimatedInputTokens,
    cacheNano: usage ? BigInt(usage.cacheReadTokens) * price.cacheRead + BigInt(usage.cacheWriteTokens) * price.cacheWrite : 0n,
  });
  let recorded = false;
  let outcome: 'ok' | 'error' | 'budget' = 'ok';
  const span = modelSpan(scope, req, cred.kind);
  return {
    cred,
    failed(how, err) {
      outcome = how;
      if (how === 'error') failSpan(span, err);
      else span?.setAttribute('agent_service.budget_reached', true);
    },
    overBudget(usage, streamedChars) {
      if (cap === null) return false;
      const { inTokens, outTokens, cacheNano } = projection(usage, streamedChars);
      return session.consumedNanoUsd + BigInt(inTokens) * price.input + BigInt(outTokens) * price.output + cacheNano >= cap;
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
      const cost = await record(scope, req, cred, usage, held, subscriptionId);
      observeCall(req, outcome, usage, cost, span);
    },
  };
}

/**
 * The provider's stream, metered: the meter opens before the call, each event counts toward the
 * budget (reaching it cuts the stream: BudgetReachedError), the usage is recorded at the end
 * however the stream ends (done, failed, cut, or left by its reader).
 */
export function meteredModelStream(scope: MeterScope, req: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
  return { [Symbol.asyncIterator]: () => new MeteredStream(scope, req, signal) };
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true });

// A hand-written iterator rather than an async generator wrapping the provider's: each event
// passes with one promise instead of a generator's several (issue #29: every streamed event of
// every turn goes through here).
class MeteredStream implements AsyncIterator<ModelEvent> {
  private meter: Meter | null = null;
  private inner: AsyncIterator<ModelEvent> | null = null;
  private readonly upstream = new AbortController();
  private readonly onAbort = () => this.upstream.abort();
  private usage: Usage | null = null;
  private streamedChars = 0;
  private ended = false;

  constructor(
    private readonly scope: MeterScope,
    private readonly req: ModelRequest,
    private readonly signal: AbortSignal,
  ) {}

  next(): Promise<IteratorResult<ModelEvent>> {
    if (this.ended) return Promise.resolve(DONE);
    if (!this.inner)
      return this.open().then(
        () => this.next(),
        (err: unknown) => {
          this.ended = true; // refused before the call (budget, wallet): nothing to record
          throw err;
        },
      );
    return this.inner.next().then(
      (r) => this.step(r),
      (err: unknown) => this.fail(err),
    );
  }

  async return(): Promise<IteratorResult<ModelEvent>> {
    if (this.ended || !this.inner) {
      this.ended = true;
      return DONE;
    }
    try {
      await this.inner.return?.();
    } finally {
      await this.finish(null);
    }
    return DONE;
  }

  private async open(): Promise<void> {
    const { req } = this;
    this.meter = await openMeter(this.scope, {
      provider: req.provider,
      model: req.model,
      estimatedInputTokens: estimateInputTokens(req),
      maxTokens: req.maxTokens ?? 8192,
    });
    this.signal.addEventListener('abort', this.onAbort, { once: true });
    this.inner = streamModel(req, this.meter.cred, this.upstream.signal)[Symbol.asyncIterator]();
  }

  private step(r: IteratorResult<ModelEvent>): IteratorResult<ModelEvent> | Promise<IteratorResult<ModelEvent>> {
    if (r.done) return this.finish(null).then(() => DONE);
    const ev = r.value;
    if (ev.type === 'usage') this.usage = mergeUsage(this.usage, ev.usage);
    if (ev.type === 'text_delta' || ev.type === 'reasoning_delta') this.streamedChars += ev.text.length;
    if (ev.type === 'tool_call_delta') this.streamedChars += ev.argsPartial.length;
    const meter = this.meter!;
    if (!meter.overBudget(this.usage, this.streamedChars)) return r;
    // Reaching the cap stops the stream mid-way.
    this.usage = meter.cutUsage(this.usage, this.streamedChars);
    this.upstream.abort();
    return Promise.resolve(this.inner!.return?.())
      .catch(() => undefined)
      .then(() => this.finish('budget'))
      .then(() => {
        throw new BudgetReachedError();
      });
  }

  private async fail(err: unknown): Promise<never> {
    let failed = err;
    try {
      if (err instanceof ProviderError) failed = await this.meter!.refused(err);
    } catch (e) {
      failed = e;
    }
    await this.finish('error', failed);
    throw failed;
  }

  private async finish(how: 'error' | 'budget' | null, err?: unknown): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    if (how) this.meter!.failed(how, err);
    this.signal.removeEventListener('abort', this.onAbort);
    await this.meter!.record(this.usage);
  }
}

async function record(
  scope: MeterScope,
  req: MeterRequest,
  cred: ProviderCredential,
  usage: Usage | null,
  held: bigint,
  subscriptionId: string | null,
): Promise<bigint> {
  const cost = usage ? costNanoUsd(req.model, usage) : 0n;
  try {
    // One statement (possibly shared with other calls ending now: usage-writes.ts): the usage row,
    // the session's consumed cost (list price on either billing; the budget caps it) and, on the
    // platform's key, the wallet's settle and charge line.
    await writeUsage({
      sessionId: scope.sessionId,
      universeId: scope.universeId,
      turn: scope.turn,
      provider: req.provider,
      model: req.model,
      billing: cred.kind,
      usage,
      cost,
      held,
      settle: cred.kind === 'platform' && req.provider !== 'demo',
    });
    if (subscriptionId) await markUsed(subscriptionId);
  } catch (err) {
    logger.error({ err, sessionId: scope.sessionId }, 'could not record model usage');
  }
  return cost;
}

/** The call's metrics, and its span's usage attributes (the same numbers the metering recorded); ends the span. */
function observeCall(req: MeterRequest, outcome: 'ok' | 'error' | 'budget', usage: Usage | null, costNano: bigint, span: Span | undefined): void {
  const { provider, model } = req;
  modelCalls.inc({ provider, model, result: outcome });
  const usd = Number(costNano) / 1e9;
  if (usage) {
    modelTokens.inc({ provider, model, kind: 'input' }, usage.inputTokens);
    modelTokens.inc({ provider, model, kind: 'output' }, usage.outputTokens);
    modelTokens.inc({ provider, model, kind: 'cache_read' }, usage.cacheReadTokens);
    modelTokens.inc({ provider, model, kind: 'cache_write' }, usage.cacheWriteTokens);
    modelCost.inc({ provider, model }, usd);
  }
  if (!span) return;
  if (usage) {
    span.setAttributes({
      'gen_ai.usage.input_tokens': usage.inputTokens,
      'gen_ai.usage.output_tokens': usage.outputTokens,
      'gen_ai.usage.cache_read.input_tokens': usage.cacheReadTokens,
      'gen_ai.usage.cache_creation.input_tokens': usage.cacheWriteTokens,
      'agent_service.cost.usd': usd,
      'agent_service.cost.nano_usd': costNano.toString(),
    });
  }
  span.end();
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
