// Delivers the outbox: claims due rows (SKIP LOCKED, so several processes share the work),
// POSTs the signed thin body, and schedules the next attempt at 0 s, 5 s and 30 s after the
// event. A 2xx within the timeout is success; consecutive failures disable the endpoint.
import { prisma } from '../db/client.js';
import { open } from '../crypto/secret-box.js';
import { logger } from '../logger.js';
import { sign } from './signature.js';
import { checkResolvedHost, checkUrlShape } from './ssrf.js';
import { onOutboxWrite } from './outbox.js';

export const RETRY_OFFSETS_MS = (process.env.WEBHOOK_RETRY_OFFSETS_MS || '0,5000,30000').split(',').map(Number);
export const DISABLE_AFTER = Number(process.env.WEBHOOK_DISABLE_AFTER || 20);
const TIMEOUT_MS = Number(process.env.WEBHOOK_TIMEOUT_MS || 10_000);
const POLL_MS = 500;

async function claimDue(): Promise<string[]> {
  const rows = await prisma.$queryRaw<{ id: string }[]>`
    UPDATE "WebhookDelivery" SET "lockedUntil" = now() + interval '2 minutes'
    WHERE "id" IN (
      SELECT "id" FROM "WebhookDelivery"
      WHERE "status" = 'pending' AND "nextAttemptAt" <= now() AND ("lockedUntil" IS NULL OR "lockedUntil" < now())
      ORDER BY "nextAttemptAt" LIMIT 20 FOR UPDATE SKIP LOCKED)
    RETURNING "id"`;
  return rows.map((r) => r.id);
}

async function attempt(id: string): Promise<void> {
  const d = await prisma.webhookDelivery.findUnique({ where: { id }, include: { endpoint: true } });
  if (!d || d.status !== 'pending') return;
  if (d.endpoint.status !== 'active') {
    await prisma.webhookDelivery.update({ where: { id }, data: { status: 'failed', lastError: 'the endpoint is disabled', lockedUntil: null } });
    return;
  }
  const timestamp = Math.floor(Date.now() / 1000);
  let statusCode: number | null = null;
  let error: string | null = null;
  try {
    const blocked = checkUrlShape(d.endpoint.url) ?? (await checkResolvedHost(d.endpoint.url));
    if (blocked) throw new Error(blocked);
    const res = await fetch(d.endpoint.url, {
      method: 'POST',
      redirect: 'manual', // a redirect could point anywhere, including inside
      headers: {
        'content-type': 'application/json',
        'user-agent': 'agent-service-webhooks/1',
        'x-service-event': d.eventType,
        'x-service-delivery': d.id,
        'x-service-timestamp': String(timestamp),
        'x-service-signature': sign(open(d.endpoint.secret), timestamp, d.body),
      },
      body: d.body,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    statusCode = res.status;
    await res.body?.cancel().catch(() => undefined);
    if (res.status < 200 || res.status >= 300) error = `the receiver answered ${res.status}`;
  } catch (err) {
    error = (err as Error).name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS} ms` : (err as Error).message;
  }
  const attempts = d.attempts + 1;
  if (!error) {
    await prisma.$transaction([
      prisma.webhookDelivery.update({ where: { id }, data: { status: 'succeeded', attempts, lastStatusCode: statusCode, lastError: null, lockedUntil: null, nextAttemptAt: null } }),
      prisma.webhookEndpoint.update({ where: { id: d.endpointId }, data: { failureCount: 0 } }),
    ]);
    return;
  }
  const next = attempts < RETRY_OFFSETS_MS.length ? new Date(d.createdAt.getTime() + RETRY_OFFSETS_MS[attempts]!) : null;
  await prisma.webhookDelivery.update({
    where: { id },
    data: { attempts, lastStatusCode: statusCode, lastError: error, lockedUntil: null, nextAttemptAt: next, status: next ? 'pending' : 'failed' },
  });
  const endpoint = await prisma.webhookEndpoint.update({ where: { id: d.endpointId }, data: { failureCount: { increment: 1 } } });
  if (endpoint.failureCount >= DISABLE_AFTER && endpoint.status === 'active') {
    await prisma.webhookEndpoint.update({ where: { id: d.endpointId }, data: { status: 'disabled' } });
    logger.warn({ endpointId: d.endpointId, failures: endpoint.failureCount }, 'webhook endpoint disabled after sustained failures');
  }
}

export interface Dispatcher {
  kick(): void;
  stop(): Promise<void>;
}

export function startDispatcher(): Dispatcher {
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  const pass = async () => {
    do {
      again = false;
      const ids = await claimDue();
      await Promise.all(ids.map((id) => attempt(id).catch((err) => logger.error({ err, id }, 'webhook attempt failed unexpectedly'))));
      if (ids.length === 20) again = true;
    } while (again && !stopped);
  };
  const kick = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = pass().catch((err) => logger.warn({ err }, 'webhook dispatch pass failed')).finally(() => (running = null));
  };
  const timer = setInterval(kick, POLL_MS);
  timer.unref();
  onOutboxWrite(kick);
  kick();
  return {
    kick,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
