// Runs a session's turns, one at a time: claims the session (idle → running) in the database,
// takes every waiting input as one turn, runs the engine, and goes idle when nothing waits.
// Any process may run it (BullMQ); the claim and a heartbeat keep it single and recoverable.
import { prisma } from '../db/client.js';
import { ownerId, previousLivesPrefix } from './instance.js';
import { commitEvent, commitEvents, storeEvents, announceEvents } from '../events/store.js';
import { pubsub } from '../events/pubsub.js';
import { logger } from '../logger.js';
import { runTurn, type StopReason } from './turn.js';
import { moveOf, movableFrom, transition } from '../sessions/state-machine.js';

const HEARTBEAT_MS = 5_000;

export const interruptChannel = (sessionId: string) => `interrupt:${sessionId}`;

// `again`: a run was asked for while this one was ending (its release may already have
// committed before the new input was stored): run once more when this one is gone.
interface RunState { controller: AbortController | null; finished: Promise<void>; again: boolean }
const running = new Map<string, RunState>();
// Shutdown: `draining` stops new turns; `shutdown` (once aborted) interrupts every turn.
let draining = false;
let shutdown = new AbortController();

// Claim and release are the state table's moves (src/sessions/state-machine.ts), each one
// conditional statement: the table gives the statuses, the statement adds what a runner needs
// (an input waiting, the budget, its own claim).
const CLAIM = moveOf('claim');
const RELEASE = moveOf('release');

async function claim(sessionId: string): Promise<boolean> {
  const n = await prisma.$executeRaw`
    UPDATE "Session" SET "status" = ${CLAIM.to}, "runnerId" = ${ownerId()}, "runnerHeartbeatAt" = now()
    WHERE "id" = ${sessionId} AND "status" = ANY(${CLAIM.from}::text[])
      AND "budgetReachedAt" IS NULL
      AND EXISTS (SELECT 1 FROM "SessionEvent" e WHERE e."sessionId" = ${sessionId} AND e."turn" IS NULL
                  AND e."type" IN ('user.message', 'system.message', 'user.tool_confirmation'))`;
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
      where: { sessionId, turn: null, type: { in: ['user.message', 'system.message', 'user.tool_confirmation'] } },
      data: { turn: s.turnCount },
    });
    if (taken.count === 0) throw new NothingWaiting();
    const batch = await storeEvents(tx, sessionId, [{ type: 'session.status_running', fields: {} }]);
    return { turn: s.turnCount, batch };
  }).catch((err) => {
    if (err instanceof NothingWaiting) return null;
    throw err;
  });
  if (!result) return null;
  await announceEvents(result.batch);
  return result.turn;
}
class NothingWaiting extends Error {}

/** Idle again, unless an input arrived meanwhile (then the caller runs another turn). */
async function release(sessionId: string): Promise<boolean> {
  const n = await prisma.$executeRaw`
    UPDATE "Session" SET "status" = ${RELEASE.to}, "runnerId" = NULL
    WHERE "id" = ${sessionId} AND "status" = ANY(${RELEASE.from}::text[]) AND "runnerId" = ${ownerId()}
      AND ("budgetReachedAt" IS NOT NULL OR NOT EXISTS (SELECT 1 FROM "SessionEvent" e WHERE e."sessionId" = ${sessionId}
                      AND e."turn" IS NULL AND e."type" IN ('user.message', 'system.message', 'user.tool_confirmation')))`;
  return n === 1;
}

export async function runSession(sessionId: string): Promise<void> {
  const live = running.get(sessionId);
  if (live) {
    live.again = true;
    return;
  }
  if (draining || !(await claim(sessionId))) return;
  let finish!: () => void;
  const state: RunState = { controller: null, finished: new Promise<void>((r) => (finish = r)), again: false };
  running.set(sessionId, state);
  const beat = setInterval(() => {
    prisma.session.updateMany({ where: { id: sessionId, runnerId: ownerId() }, data: { runnerHeartbeatAt: new Date() } }).catch(() => undefined);
  }, HEARTBEAT_MS);
  beat.unref();
  const unsubscribe = await pubsub().subscribe(interruptChannel(sessionId), () => state.controller?.abort(new Error('interrupted')));
  try {
    for (;;) {
      if (draining) {
        await releaseForShutdown(sessionId);
        break;
      }
      const turn = await takeInputs(sessionId);
      if (turn === null) {
        if (await release(sessionId)) break;
        continue;
      }
      state.controller = new AbortController();
      if (shutdown.signal.aborted) state.controller.abort(shutdown.signal.reason);
      let stop: StopReason;
      try {
        stop = await runTurn(sessionId, turn, state.controller.signal);
      } catch (err) {
        logger.error({ err, sessionId }, 'turn failed unexpectedly');
        await commitEvent(sessionId, { type: 'session.error', fields: {
          error: { type: 'engine_error', message: 'the engine failed unexpectedly; the turn is over', retry_status: 'exhausted' },
        } });
        stop = { type: 'retries_exhausted' };
      }
      state.controller = null;
      await commitEvent(sessionId, { type: 'session.status_idle', fields: { stop_reason: stop } });
    }
  } finally {
    clearInterval(beat);
    running.delete(sessionId);
    finish();
    await unsubscribe();
    if (state.again && !draining) void runSession(sessionId).catch((err) => logger.error({ err, sessionId }, 'session run failed'));
  }
}

/** Idle without taking waiting inputs: they stay for the next process (or this one restarted). */
async function releaseForShutdown(sessionId: string): Promise<void> {
  await transition(sessionId, 'release', { runnerId: null }, prisma, { runnerId: ownerId() });
}

/** Sessions left `running` by a process that died: an error event, idle, then waiting inputs run. */
export async function recoverStaleSessions(staleMs = Number(process.env.RUNNER_STALE_MS || 30_000)): Promise<string[]> {
  const cutoff = new Date(Date.now() - staleMs);
  const stale = await prisma.session.findMany({
    where: { status: { in: movableFrom('recover') }, OR: [{ runnerHeartbeatAt: null }, { runnerHeartbeatAt: { lt: cutoff } }], NOT: { runnerId: ownerId() } },
    select: { id: true, runnerId: true },
  });
  return endLostTurns(stale);
}

async function endLostTurns(stale: { id: string; runnerId: string | null }[]): Promise<string[]> {
  const recovered: string[] = [];
  for (const s of stale) {
    if (!(await transition(s.id, 'recover', { runnerId: null }, prisma, { runnerId: s.runnerId }))) continue;
    await commitEvents(s.id, [
      { type: 'session.error', fields: { error: { type: 'runner_lost', message: 'the process running this turn stopped; the turn is over', retry_status: 'exhausted' } } },
      { type: 'session.status_idle', fields: { stop_reason: { type: 'retries_exhausted' } } },
    ]);
    recovered.push(s.id);
  }
  return recovered;
}

/** Sessions idle with inputs waiting (after a restart or a lost job). */
export async function sessionsWithWaitingInputs(): Promise<string[]> {
  const rows = await prisma.$queryRaw<{ id: string }[]>`
    SELECT s."id" FROM "Session" s WHERE s."status" = ANY(${CLAIM.from}::text[]) AND s."budgetReachedAt" IS NULL AND EXISTS (
      SELECT 1 FROM "SessionEvent" e WHERE e."sessionId" = s."id" AND e."turn" IS NULL AND e."type" IN ('user.message', 'system.message', 'user.tool_confirmation'))`;
  return rows.map((r) => r.id);
}

export function isRunningHere(sessionId: string): boolean {
  return running.has(sessionId);
}

const settle = (promises: Promise<void>[], ms: number) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    void Promise.allSettled(promises).then(() => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * Shutdown: no new turns; running turns get `finishMs` to end on their own, then are
 * interrupted (the engine makes the partial message final and the turn ends with
 * session.status_idle `end_turn`) and get `abortMs` more to record it. Every session this
 * process ran is left idle; inputs still waiting stay for the next process. Returns the
 * sessions still running after both windows (the restarted instance recovers them at once).
 */
export async function drainTurns(finishMs: number, abortMs: number): Promise<string[]> {
  draining = true;
  await settle([...running.values()].map((s) => s.finished), finishMs);
  if (running.size) {
    logger.info({ sessions: [...running.keys()] }, 'interrupting turns still running at shutdown');
    abortAllTurns();
    await settle([...running.values()].map((s) => s.finished), abortMs);
  }
  return [...running.keys()];
}

/** Opens the runner for turns again (each start of the service in this process). */
export function acceptTurns(): void {
  draining = false;
  shutdown = new AbortController();
}

/** Shutdown without waiting: interrupt every turn this process runs. */
export function abortAllTurns(): void {
  draining = true;
  shutdown.abort(new Error('shutting down'));
  for (const state of running.values()) state.controller?.abort(shutdown.signal.reason);
}

/**
 * Right after start (once the listen address proved our identity): turns that a previous life
 * of this instance was running end at once, as a stale runner's would after its timeout.
 */
export async function recoverOwnTurns(): Promise<string[]> {
  const prefix = previousLivesPrefix();
  if (!prefix) return [];
  const rows = await prisma.$queryRaw<{ id: string; runnerId: string }[]>`
    SELECT "id", "runnerId" FROM "Session"
    WHERE "status" = ANY(${movableFrom('recover')}::text[]) AND starts_with("runnerId", ${prefix}) AND "runnerId" <> ${ownerId()}`;
  return endLostTurns(rows);
}
