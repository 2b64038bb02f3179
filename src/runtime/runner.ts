// Runs a session's turns, one at a time: claims the session (idle → running) in the database,
// takes every waiting input as one turn, runs the engine, and goes idle when nothing waits.
// Any process may run it (BullMQ); the claim and a heartbeat keep it single and recoverable.
import { prisma } from '../db/client.js';
import { newId } from '../ids.js';
import { appendEvent, appendEventsTx, publishStored } from '../events/store.js';
import { emitSessionEvents } from '../webhooks/outbox.js';
import { pubsub } from '../events/pubsub.js';
import { logger } from '../logger.js';
import { runTurn, type StopReason } from './turn.js';

/** This process's runner identity. */
export const RUNNER_ID = newId('msg').replace('msg_', 'runner_');
const HEARTBEAT_MS = 5_000;

export const interruptChannel = (sessionId: string) => `interrupt:${sessionId}`;

const running = new Map<string, { controller: AbortController | null }>();

async function claim(sessionId: string): Promise<boolean> {
  const n = await prisma.$executeRaw`
    UPDATE "Session" SET "status" = 'running', "runnerId" = ${RUNNER_ID}, "runnerHeartbeatAt" = now()
    WHERE "id" = ${sessionId} AND "status" = 'idle'
      AND "budgetReachedAt" IS NULL
      AND EXISTS (SELECT 1 FROM "SessionEvent" e WHERE e."sessionId" = ${sessionId} AND e."turn" IS NULL
                  AND e."type" IN ('user.message', 'system.message'))`;
  return n === 1;
}

/**
 * Gives every waiting input to a new turn and announces it (session.status_running) in the
 * same transaction: one round trip fewer before the first frame. Null when nothing waits.
 */
async function takeInputs(sessionId: string): Promise<number | null> {
  const result = await prisma.$transaction(async (tx) => {
    const s = await tx.session.update({ where: { id: sessionId }, data: { turnCount: { increment: 1 } }, select: { turnCount: true } });
    const taken = await tx.sessionEvent.updateMany({
      where: { sessionId, turn: null, type: { in: ['user.message', 'system.message'] } },
      data: { turn: s.turnCount },
    });
    if (taken.count === 0) throw new NothingWaiting();
    const stored = await appendEventsTx(tx, sessionId, [{ type: 'session.status_running' }]);
    return { turn: s.turnCount, stored };
  }).catch((err) => {
    if (err instanceof NothingWaiting) return null;
    throw err;
  });
  if (!result) return null;
  await publishStored(sessionId, result.stored);
  await emitSessionEvents(sessionId, result.stored.map((x) => x.event));
  return result.turn;
}
class NothingWaiting extends Error {}

/** Idle again, unless an input arrived meanwhile (then the caller runs another turn). */
async function release(sessionId: string): Promise<boolean> {
  const n = await prisma.$executeRaw`
    UPDATE "Session" SET "status" = 'idle', "runnerId" = NULL
    WHERE "id" = ${sessionId} AND "runnerId" = ${RUNNER_ID}
      AND ("budgetReachedAt" IS NOT NULL OR NOT EXISTS (SELECT 1 FROM "SessionEvent" e WHERE e."sessionId" = ${sessionId}
                      AND e."turn" IS NULL AND e."type" IN ('user.message', 'system.message')))`;
  return n === 1;
}

export async function runSession(sessionId: string): Promise<void> {
  if (running.has(sessionId) || !(await claim(sessionId))) return;
  const state: { controller: AbortController | null } = { controller: null };
  running.set(sessionId, state);
  const beat = setInterval(() => {
    prisma.session.updateMany({ where: { id: sessionId, runnerId: RUNNER_ID }, data: { runnerHeartbeatAt: new Date() } }).catch(() => undefined);
  }, HEARTBEAT_MS);
  beat.unref();
  const unsubscribe = await pubsub().subscribe(interruptChannel(sessionId), () => state.controller?.abort(new Error('interrupted')));
  try {
    for (;;) {
      const turn = await takeInputs(sessionId);
      if (turn === null) {
        if (await release(sessionId)) break;
        continue;
      }
      state.controller = new AbortController();
      let stop: StopReason;
      try {
        stop = await runTurn(sessionId, turn, state.controller.signal);
      } catch (err) {
        logger.error({ err, sessionId }, 'turn failed unexpectedly');
        await appendEvent(sessionId, 'session.error', {
          error: { type: 'engine_error', message: 'the engine failed unexpectedly; the turn is over', retry_status: 'exhausted' },
        });
        stop = { type: 'retries_exhausted' };
      }
      state.controller = null;
      await appendEvent(sessionId, 'session.status_idle', { stop_reason: stop });
    }
  } finally {
    clearInterval(beat);
    running.delete(sessionId);
    await unsubscribe();
  }
}

/** Sessions left `running` by a process that died: an error event, idle, then waiting inputs run. */
export async function recoverStaleSessions(staleMs = Number(process.env.RUNNER_STALE_MS || 30_000)): Promise<string[]> {
  const cutoff = new Date(Date.now() - staleMs);
  const stale = await prisma.session.findMany({
    where: { status: 'running', OR: [{ runnerHeartbeatAt: null }, { runnerHeartbeatAt: { lt: cutoff } }], NOT: { runnerId: RUNNER_ID } },
    select: { id: true, runnerId: true },
  });
  const recovered: string[] = [];
  for (const s of stale) {
    const n = await prisma.session.updateMany({ where: { id: s.id, status: 'running', runnerId: s.runnerId }, data: { status: 'idle', runnerId: null } });
    if (n.count !== 1) continue;
    await appendEvent(s.id, 'session.error', {
      error: { type: 'runner_lost', message: 'the process running this turn stopped; the turn is over', retry_status: 'exhausted' },
    });
    await appendEvent(s.id, 'session.status_idle', { stop_reason: { type: 'retries_exhausted' } });
    recovered.push(s.id);
  }
  return recovered;
}

/** Sessions idle with inputs waiting (after a restart or a lost job). */
export async function sessionsWithWaitingInputs(): Promise<string[]> {
  const rows = await prisma.$queryRaw<{ id: string }[]>`
    SELECT s."id" FROM "Session" s WHERE s."status" = 'idle' AND s."budgetReachedAt" IS NULL AND EXISTS (
      SELECT 1 FROM "SessionEvent" e WHERE e."sessionId" = s."id" AND e."turn" IS NULL AND e."type" IN ('user.message', 'system.message'))`;
  return rows.map((r) => r.id);
}

export function isRunningHere(sessionId: string): boolean {
  return running.has(sessionId);
}

/** Shutdown: stop every turn this process runs (each ends with its idle event). */
export function abortAllTurns(): void {
  for (const state of running.values()) state.controller?.abort(new Error('shutting down'));
}
