// Delivers the outbox: claims due rows (SKIP LOCKED, so several processes share the work),
// POSTs the signed thin body through the outbound guard, and schedules the next attempt at
// 0 s, 5 s and 30 s after the event. A 2xx within the timeout is success; consecutive failures
// disable the endpoint.
//
// A claim is a lease: `lockedBy` (this process's owner id) until `lockedUntil` (the attempt's
// timeout plus a margin). An attempt cut short by a crash or a stop is "interrupted": it counts
// as an attempt (the receiver may have seen it) and the row goes back on the schedule's next
// slot, or is due at once when none is left. A restarted process does that at once for its own
// previous life's leases; other processes do it when a lease expires.
import { inSpan, type Span } from '../telemetry/tracing.js';
import { webhookDeliveries } from '../telemetry/metrics.js';
import { settings } from '../config.js';
import { Prisma } from '../generated/prisma/client.js';
import { prisma } from '../db/client.js';
import { open } from '../crypto/secret-box.js';
import { logger } from '../logger.js';
import { sign } from './signature.js';
import { guardedFetch, outboundErrorMessage } from '../net/outbound-guard.js';
import { onOutboxWrite } from './outbox.js';
import { ownerId, previousLivesPrefix } from '../services/instance.js';

export const RETRY_OFFSETS_MS = settings.webhookRetryOffsetsMs();
export const DISABLE_AFTER = settings.webhookDisableAfter();
const TIMEOUT_MS = settings.webhookTimeoutMs();
const LEASE_MS = TIMEOUT_MS + 10_000;
const POLL_MS = 500;
const BATCH = 20;
const INTERRUPTED = 'interrupted: the process delivering it stopped during the attempt';

/** Puts interrupted attempts matching `owned` back on the schedule. Returns how many. */
async function requeueInterrupted(owned: Prisma.Sql): Promise<number> {
  // offsets[attempts + 1] (0-based) is the slot after the interrupted attempt; none left → now.
  return prisma.$executeRaw`
    UPDATE "WebhookDelivery" SET
      "attempts" = "attempts" + 1, "lastError" = ${INTERRUPTED}, "lastStatusCode" = NULL,
      "nextAttemptAt" = COALESCE("createdAt" + (${RETRY_OFFSETS_MS}::int[])["attempts" + 2] * interval '1 millisecond', now()),
      "lockedUntil" = NULL, "lockedBy" = NULL
    WHERE "status" = 'pending' AND "lockedBy" IS NOT NULL AND ${owned}`;
}

/** At start (after the listen address proved the identity): leases our previous life held. */
export async function reclaimOwnLeases(): Promise<number> {
  const prefix = previousLivesPrefix();
  if (!prefix) return 0;
  return requeueInterrupted(Prisma.sql`starts_with("lockedBy", ${prefix}) AND "lockedBy" <> ${ownerId()}`);
}

async function claimDue(): Promise<string[]> {
  await requeueInterrupted(Prisma.sql`"lockedUntil" < now()`);
  const rows = await prisma.$queryRaw<{ id: string }[]>`
    UPDATE "WebhookDelivery" SET "lockedUntil" = now() + ${LEASE_MS} * interval '1 millisecond', "lockedBy" = ${ownerId()}
    WHERE "id" IN (
      SELECT "id" FROM "WebhookDelivery"
      WHERE "status" = 'pending' AND "nextAttemptAt" <= now()
        AND ("lockedUntil" IS NULL OR ("lockedBy" IS NULL AND "lockedUntil" < now()))
      ORDER BY "nextAttemptAt" LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
    RETURNING "id"`;
  return rows.map((r) => r.id);
}

/** Our lease on a row (every write after the attempt is conditional on still holding it). */
const mine = (id: string) => ({ id, lockedBy: ownerId(), status: 'pending' });

type AttemptResult = 'succeeded' | 'retrying' | 'failed' | 'skipped' | 'requeued';

/** One delivery attempt in its span (`webhook.deliver`: event type, attempt, status code, result), counted by result. */
async function attempt(id: string, inFlight: Set<AbortController>): Promise<void> {
  await inSpan('webhook.deliver', { 'agent_service.webhook.delivery.id': id }, async (span) => {
    const result = await attemptOnce(id, inFlight, span);
    span?.setAttribute('agent_service.webhook.result', result);
    if (result !== 'skipped') webhookDeliveries.inc({ result });
  });
}

async function attemptOnce(id: string, inFlight: Set<AbortController>, span: Span | undefined): Promise<AttemptResult> {
  const d = await prisma.webhookDelivery.findUnique({ where: { id }, include: { endpoint: true } });
  if (!d || d.status !== 'pending' || d.lockedBy !== ownerId()) return 'skipped';
  span?.setAttributes({
    'agent_service.webhook.event_type': d.eventType,
    'agent_service.webhook.endpoint.id': d.endpointId,
    'agent_service.webhook.attempt': d.attempts + 1,
  });
  if (d.endpoint.status !== 'active') {
    await prisma.webhookDelivery.updateMany({
      where: mine(id),
      data: { status: 'failed', lastError: 'the endpoint is disabled', lockedUntil: null, lockedBy: null },
    });
    return 'failed';
  }
  const timestamp = Math.floor(Date.now() / 1000);
  let statusCode: number | null = null;
  let error: string | null = null;
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(new DOMException('timed out', 'TimeoutError')), TIMEOUT_MS);
  inFlight.add(ctl);
  try {
    const res = await guardedFetch(d.endpoint.url, {
      method: 'POST',
      redirect: 'manual', // a redirect could point anywhere; receivers answer where they are
      headers: {
        'content-type': 'application/json',
        'user-agent': 'agent-service-webhooks/1',
        'x-service-event': d.eventType,
        'x-service-delivery': d.id,
        'x-service-timestamp': String(timestamp),
        'x-service-signature': sign(open(d.endpoint.secret), timestamp, d.body),
      },
      body: d.body,
      signal: ctl.signal,
    });
    statusCode = res.status;
    await res.body?.cancel().catch(() => undefined);
    if (res.status < 200 || res.status >= 300) error = `the receiver answered ${res.status}`;
  } catch (err) {
    if (ctl.signal.reason instanceof StopRequested) {
      // Cut short by a stop: back on the schedule like a crash, without blaming the endpoint.
      await requeueInterrupted(Prisma.sql`"id" = ${id} AND "lockedBy" = ${ownerId()}`);
      return 'requeued';
    }
    error = ctl.signal.aborted ? `no answer within ${TIMEOUT_MS} ms` : outboundErrorMessage(err);
  } finally {
    clearTimeout(timer);
    inFlight.delete(ctl);
  }
  if (statusCode !== null) span?.setAttribute('http.response.status_code', statusCode);
  const attempts = d.attempts + 1;
  if (!error) {
    const done = await prisma.webhookDelivery.updateMany({
      where: mine(id),
      data: { status: 'succeeded', attempts, lastStatusCode: statusCode, lastError: null, lockedUntil: null, lockedBy: null, nextAttemptAt: null },
    });
    if (done.count) await prisma.webhookEndpoint.update({ where: { id: d.endpointId }, data: { failureCount: 0 } });
    return 'succeeded';
  }
  const next = attempts < RETRY_OFFSETS_MS.length ? new Date(d.createdAt.getTime() + RETRY_OFFSETS_MS[attempts]!) : null;
  const recorded = await prisma.webhookDelivery.updateMany({
    where: mine(id),
    data: {
      attempts,
      lastStatusCode: statusCode,
      lastError: error,
      lockedUntil: null,
      lockedBy: null,
      nextAttemptAt: next,
      status: next ? 'pending' : 'failed',
    },
  });
  if (!recorded.count) return 'skipped'; // the lease was lost meanwhile: whoever holds it now decides
  const endpoint = await prisma.webhookEndpoint.update({ where: { id: d.endpointId }, data: { failureCount: { increment: 1 } } });
  if (endpoint.failureCount >= DISABLE_AFTER && endpoint.status === 'active') {
    await prisma.webhookEndpoint.update({ where: { id: d.endpointId }, data: { status: 'disabled' } });
    logger.warn({ endpointId: d.endpointId, failures: endpoint.failureCount }, 'webhook endpoint disabled after sustained failures');
  }
  return next ? 'retrying' : 'failed';
}

class StopRequested extends Error {}

export interface Dispatcher {
  kick(): void;
  /** Stops claiming; in-flight attempts get `graceMs` to finish, then are cut and requeued. */
  stop(graceMs?: number): Promise<void>;
}

export function startDispatcher(): Dispatcher {
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  const inFlight = new Set<AbortController>();
  const pass = async () => {
    do {
      again = false;
      const ids = await claimDue();
      await Promise.all(ids.map((id) => attempt(id, inFlight).catch((err) => logger.error({ err, id }, 'webhook attempt failed unexpectedly'))));
      if (ids.length === BATCH) again = true;
    } while (again && !stopped);
  };
  const kick = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = pass()
      .catch((err) => logger.warn({ err }, 'webhook dispatch pass failed'))
      .finally(() => (running = null));
  };
  const timer = setInterval(kick, POLL_MS);
  timer.unref();
  const unsubscribe = onOutboxWrite(kick);
  kick();
  return {
    kick,
    async stop(graceMs = 0) {
      stopped = true;
      clearInterval(timer);
      unsubscribe?.();
      const current = running;
      if (!current) return;
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([current, new Promise<void>((r) => (timeout = setTimeout(r, graceMs)))]);
      clearTimeout(timeout);
      for (const ctl of inFlight) ctl.abort(new StopRequested());
      await current;
    },
  };
}
