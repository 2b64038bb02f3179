// Runs a session's turns, one at a time: claims the session (idle → running) in the database,
// takes every waiting input as one turn, runs the engine, and goes idle when nothing waits.
// Any process may run it (BullMQ); the claim and a heartbeat keep it single and recoverable.
import { settings } from '../config.js';
import { prisma } from '../db/client.js';
import { ownerId, previousLivesPrefix } from '../services/instance.js';
import { commitEvent, commitEvents, storeEvents, announceEvents, type StoredBatch, type NewEvent, type StoredEvent } from '../events/store.js';
import { storeEventsOfSessions } from '../events/store-many.js';
import { batched } from '../db/batched.js';
import { Prisma } from '../generated/prisma/client.js';
import { pubsub, type PubSub } from '../events/pubsub.js';
import { logger } from '../logger.js';
import { runTurn, type StopReason } from './turn-context.js';
import { moveOf, movableFrom, transition } from './session-state-machine.js';
import { sandboxFilling } from './sandbox-filling.js';
import { service } from '../services/registry.js';
import { finishUnfinishedStreams } from './unfinished-streams.js';
import { turnUsage, turnUsageAndOutcome } from '../billing/usage.js';
import { canStartTurnSql } from '../billing/spend-gate.js';
import { afterAgentTurn, interruptActiveOutcome, type AfterTurn } from './outcomes.js';
import { cancelWaitingRuns, releaseSlot, takeSlot, tryTakeSlot } from './turn-slots.js';
import { INTERRUPTS, publishInterrupt } from './runner-signals.js';
import { isThreadId, threadTurnEnded } from './threads.js';

const HEARTBEAT_MS = 5_000;

// One heartbeat for every session this process runs: one statement per interval for all of
// them (many concurrent turns), not one per session. Runs only while a session is claimed here.
const beating = new Set<string>();
let beat: NodeJS.Timeout | null = null;

function startBeating(sessionId: string): void {
  beating.add(sessionId);
  if (beat) return;
  beat = setInterval(() => {
    prisma.session.updateMany({ where: { id: { in: [...beating] }, runnerId: ownerId() }, data: { runnerHeartbeatAt: new Date() } }).catch(() => undefined);
  }, HEARTBEAT_MS);
  beat.unref();
}

function stopBeating(sessionId: string): void {
  beating.delete(sessionId);
  if (beating.size || !beat) return;
  clearInterval(beat);
  beat = null;
}

export { publishInterrupt };

// Per pub/sub part (a test composes several in turn): its subscription, made at the first run.
const interruptListeners = new WeakMap<PubSub, Promise<unknown>>();

/** Listening for interrupts (once per pub/sub part); resolves when the subscription is in place. */
function listenForInterrupts(): Promise<unknown> {
  const bus = pubsub();
  let listening = interruptListeners.get(bus);
  if (!listening) {
    listening = bus
      .subscribe(INTERRUPTS, (message) => {
        const sessionId = message.slice(0, message.indexOf(' '));
        running.get(sessionId)?.controller?.abort(new Error('interrupted'));
      })
      .catch((err) => {
        // Without it turns still run; only an interrupt cannot reach them. The next run tries again.
        logger.warn({ err }, 'interrupt subscription failed');
        interruptListeners.delete(bus);
      });
    interruptListeners.set(bus, listening);
  }
  return listening;
}

// `again`: a run was asked for while this one was claiming or ending (its claim may have missed
// the new input, its release may have committed before it was stored): run once more after.
interface RunState {
  controller: AbortController | null;
  finished: Promise<void>;
  again: boolean;
}
const running = new Map<string, RunState>();
/** A turn just started: its number and the stored batch (session.status_running last) to announce. */
interface Started {
  turn: number;
  batch: StoredBatch;
}
/**
 * Whether this process still takes turns (`draining` stops new ones at shutdown) and the signal
 * that interrupts every turn once aborted: a composed part (`turnGate`), fresh for each start.
 */
export interface TurnGate {
  draining: boolean;
  readonly shutdown: AbortController;
}

declare module '../services/registry.js' {
  interface Services {
    turnGate: TurnGate;
  }
}

/** An open gate: turns are taken. */
export const openTurnGate = (): TurnGate => ({ draining: false, shutdown: new AbortController() });

const turnGate = (): TurnGate => service('turnGate');

// Claim and release are the state table's moves (src/runtime/session-state-machine.ts), each one
// conditional statement: the table gives the statuses, the statement adds what a runner needs
// (an input waiting, the budget, its own claim). The claim also starts the first turn.
const CLAIM = moveOf('claim');
const RELEASE = moveOf('release');

const INPUT_TYPES = ['user.message', 'system.message', 'user.tool_confirmation', 'user.compact', 'user.define_outcome'];
const inputsWaiting = (sessionId: string) => Prisma.sql`EXISTS (SELECT 1 FROM "SessionEvent" e WHERE e."sessionId" = ${sessionId} AND e."turn" IS NULL
                  AND e."type" = ANY(${INPUT_TYPES}::text[]))`;

/**
 * Stores `events` (ending with session.status_running) in ONE statement that starts a turn:
 * turnCount + 1, every input waiting given to it (and `events`' own inputs), with `claim` also
 * claiming the session (idle → running, this process as its runner; not with the budget
 * reached), where `where` also holds. Atomic: a crash leaves either nothing or a running
 * session with its turn announced (recovery ends it). Null when the row did not match.
 */
async function storeTurnStart(sessionId: string, events: NewEvent[], claim: boolean, where: Prisma.Sql): Promise<Started | null> {
  const batch = await storeEvents(prisma, sessionId, events, {
    set: claim
      ? Prisma.sql`"turnCount" = "turnCount" + 1, "status" = ${CLAIM.to}, "runnerId" = ${ownerId()}, "runnerHeartbeatAt" = now()`
      : Prisma.sql`"turnCount" = "turnCount" + 1`,
    where: claim ? Prisma.sql`"status" = ANY(${CLAIM.from}::text[]) AND "budgetReachedAt" IS NULL AND ${where}` : where,
    with: Prisma.sql`taken AS (
      UPDATE "SessionEvent" e SET "turn" = s."turnCount" FROM s
      WHERE e."sessionId" = ${sessionId} AND e."turn" IS NULL AND e."type" = ANY(${INPUT_TYPES}::text[])
    )`,
    turnFor: INPUT_TYPES,
  });
  return batch.turnCount === null ? null : { turn: batch.turnCount, batch };
}

const RUNNING: NewEvent = { type: 'session.status_running', fields: {} };

/** The next turn of the inputs waiting (null when none waits or the session is not claimable); the caller announces it. */
const startTurn = (sessionId: string, claim: boolean) => storeTurnStart(sessionId, [RUNNING], claim, inputsWaiting(sessionId));

const ours = () => Prisma.sql`"status" = ANY(${RELEASE.from}::text[]) AND "runnerId" = ${ownerId()}`;

// Runs ending together are released in ONE statement (the event store's many-session statement
// in release mode, src/db/batched.ts): each row that is still this process's and has no input
// waiting goes idle with its session.status_idle; the others store nothing (turnCount null).
const releases = batched(async (asked: { sessionId: string; idle: NewEvent }[]): Promise<StoredBatch[]> => {
  const alone = (a: { sessionId: string; idle: NewEvent }) =>
    storeEvents(prisma, a.sessionId, [a.idle], {
      set: Prisma.sql`"status" = ${RELEASE.to}, "runnerId" = NULL`,
      where: Prisma.sql`${ours()} AND NOT ${inputsWaiting(a.sessionId)}`,
    });
  if (asked.length === 1 || new Set(asked.map((a) => a.sessionId)).size !== asked.length) return Promise.all(asked.map(alone));
  let batches: Map<string, StoredBatch>;
  try {
    batches = await storeEventsOfSessions(
      asked.map((a) => ({ sessionId: a.sessionId, events: [a.idle] })),
      { kind: 'release', owner: ownerId(), from: RELEASE.from, to: RELEASE.to, inputTypes: INPUT_TYPES },
    );
  } catch (err) {
    logger.warn({ err, sessions: asked.length }, 'a shared release statement failed; each session is released alone');
    return Promise.all(asked.map(alone));
  }
  return asked.map((a) => batches.get(a.sessionId) ?? { sessionId: a.sessionId, stored: [], deliveries: 0, turnCount: null });
});

/**
 * A turn's end: its session.status_idle stored in ONE statement with what follows it, so that no
 * reader sees the stream idle while the row still says running (an archive sent on the idle
 * event is accepted). With inputs waiting (and this process still running the session), the
 * next turn starts in the same statement (returned, to announce and run); otherwise the row is
 * released to idle (null). When the row is no longer this process's, the event is stored alone.
 */
async function endTurn(sessionId: string, idle: NewEvent): Promise<Started | null> {
  for (;;) {
    // Released first (the common end: nothing waits; one statement), idle unless an input
    // arrived meanwhile; at shutdown the inputs stay for the next process.
    const draining = turnGate().draining;
    const released = draining
      ? await storeEvents(prisma, sessionId, [idle], { set: Prisma.sql`"status" = ${RELEASE.to}, "runnerId" = NULL`, where: ours() })
      : await releases({ sessionId, idle });
    if (released.turnCount !== null) {
      announceEvents(released);
      return null;
    }
    // Inputs wait: the next turn starts in the same statement as this one's idle.
    if (!draining) {
      const next = await storeTurnStart(sessionId, [idle, RUNNING], false, Prisma.sql`${ours()} AND ${inputsWaiting(sessionId)}`);
      if (next) return next;
    }
    const row = await prisma.session.findUnique({ where: { id: sessionId }, select: { status: true, runnerId: true } });
    if (!row || row.runnerId !== ownerId() || !(RELEASE.from as readonly string[]).includes(row.status)) {
      // Recovered by another process, or changed under us: the event is still the turn's end.
      if (row) await commitEvent(sessionId, idle);
      return null;
    }
  }
}

/**
 * A revision turn (an outcome's grader asked for one): the feedback stored and the next turn
 * started in ONE statement while the session stays running and this process's (no idle between);
 * null when the row is no longer ours or the process drains (the caller ends the run idle).
 */
function startRevisionTurn(sessionId: string, feedback: NewEvent): Promise<Started | null> {
  if (turnGate().draining) return Promise.resolve(null);
  return storeTurnStart(sessionId, [feedback, RUNNING], false, ours());
}

export async function runSession(sessionId: string): Promise<void> {
  const live = running.get(sessionId);
  if (live) {
    live.again = true;
    return;
  }
  if (turnGate().draining) return;
  await beginRun(sessionId, () => startTurn(sessionId, true), false).finished;
}

/**
 * What a send's fast path asks of the session's row besides being claimable: to be in this
 * universe, whose wallet can pay on platform billing (a send); null: nothing more (a thread's
 * message, whose session the coordinator's turn holds).
 */
export type StartGate = { universeId: string } | null;

const gateSql = (gate: StartGate): Prisma.Sql =>
  gate ? Prisma.sql`"universeId" = ${gate.universeId} AND ${canStartTurnSql(Prisma.sql`"modelBilling"`, Prisma.sql`${gate.universeId}`)}` : Prisma.sql`TRUE`;

interface StartAsked {
  sessionId: string;
  events: NewEvent[];
  gate: StartGate;
}

// Sends to idle sessions arriving together start their turns in ONE statement (src/db/batched.ts,
// the event store's statement for many sessions in claim mode); a lone one, a session asked twice,
// and each one again when the shared statement fails, take the one-session statement.
const turnStarts = batched(async (asked: StartAsked[]): Promise<(Started | null)[]> => {
  const alone = (a: StartAsked) => storeTurnStart(a.sessionId, a.events, true, gateSql(a.gate));
  if (asked.length === 1 || new Set(asked.map((a) => a.sessionId)).size !== asked.length) return Promise.all(asked.map(alone));
  let batches: Map<string, StoredBatch>;
  try {
    batches = await storeEventsOfSessions(
      asked.map((a) => ({ sessionId: a.sessionId, events: a.events, universeId: a.gate?.universeId ?? null })),
      { kind: 'claim', owner: ownerId(), from: CLAIM.from, to: CLAIM.to, turnFor: INPUT_TYPES, gate: canStartTurnSql },
    );
  } catch (err) {
    logger.warn({ err, sessions: asked.length }, 'a shared turn-start statement failed; each session is started alone');
    return Promise.all(asked.map(alone));
  }
  return asked.map((a) => {
    const batch = batches.get(a.sessionId);
    return batch && batch.turnCount !== null ? { turn: batch.turnCount, batch } : null;
  });
});

/**
 * The send's fast path: when no run of the session is live in this process, stores `inputs`
 * and starts their turn in ONE statement (the claim of `startTurn`, the new inputs and any
 * already waiting given to the turn, session.status_running), only where `gate` also holds
 * (possibly one statement with other sessions' sends of the same moment); the turn then runs
 * here. Returns the stored inputs, or null when nothing was stored (a run is live here, the
 * session is not claimable, the gate failed): the caller takes the ordinary path, which gives
 * the precise answer.
 */
export async function storeInputsAndStartTurn(sessionId: string, inputs: NewEvent[], gate: StartGate): Promise<StoredEvent[] | null> {
  // Every turn slot taken: the ordinary path stores the inputs and queues the run.
  if (turnGate().draining || running.has(sessionId) || !tryTakeSlot()) return null;
  const run = beginRun(sessionId, () => turnStarts({ sessionId, events: [...inputs, RUNNING], gate }), true);
  run.finished.catch((err) => logger.error({ err, sessionId }, 'session run failed'));
  const started = await run.started;
  return started ? started.batch.stored.slice(0, inputs.length) : null;
}

/**
 * One run of a session in this process (the caller checked that none is live): registers it,
 * makes its first start with `start` (null: not claimed, the run ends), then runs turns until
 * the session goes idle. `started` settles with the first start, `finished` when the run ends.
 * The run holds one of the process's turn slots (TURN_CONCURRENCY) from before its claim to its
 * end: `slotTaken` when the caller took it, else the run waits for one (in arrival order).
 */
function beginRun(sessionId: string, start: () => Promise<Started | null>, slotTaken: boolean): { started: Promise<Started | null>; finished: Promise<void> } {
  // Registered before the claim: a start asked for meanwhile (another send, the queued job)
  // marks this run instead of racing it with a claim of its own.
  let finish!: () => void;
  const state: RunState = { controller: null, finished: new Promise<void>((r) => (finish = r)), again: false };
  running.set(sessionId, state);
  let onStart!: (s: Started | null) => void;
  let onStartFailed!: (err: unknown) => void;
  const started = new Promise<Started | null>((resolve, reject) => {
    onStart = resolve;
    onStartFailed = reject;
  });
  started.catch(() => undefined); // a failed start is reported through `finished`
  // Interrupts are listened to from before the turn starts (the process's one subscription; at
  // the first run its round trip overlaps the claim's).
  const subscribed = listenForInterrupts();
  let holdsSlot = slotTaken;
  const finished = (async () => {
    try {
      if (!holdsSlot) holdsSlot = await takeSlot();
      if (!holdsSlot || turnGate().draining) {
        onStart(null);
        return;
      }
      let first: Started | null;
      try {
        first = await start();
      } catch (err) {
        onStartFailed(err);
        throw err;
      }
      // The turn's first frame (session.status_running) goes to this process's streams before
      // the send that started it (if one did) is answered.
      if (first) announceEvents(first.batch);
      onStart(first);
      if (!first) return;
      let current: Started | null = first;
      let revisionController: AbortController | null = null;
      startBeating(sessionId);
      while (current) {
        await subscribed;
        // A revision turn keeps the controller of the turn it revises: an interrupt between the
        // verdict and the revision's start stops the revision (issue #33).
        state.controller = revisionController ?? new AbortController();
        revisionController = null;
        const { shutdown } = turnGate();
        if (shutdown.signal.aborted) state.controller.abort(shutdown.signal.reason);
        let stop: StopReason;
        const startedAt = Date.now();
        try {
          stop = await runTurn(sessionId, current.turn, state.controller.signal);
        } catch (err) {
          logger.error({ err, sessionId }, 'turn failed unexpectedly');
          await commitEvent(sessionId, {
            type: 'session.error',
            fields: {
              error: { type: 'engine_error', message: 'the engine failed unexpectedly; the turn is over', retry_status: 'exhausted' },
            },
          });
          stop = { type: 'retries_exhausted' };
        }
        await sandboxFilling().syncMemoryBack(sessionId, current.turn); // memory stores: the turn's writes become versions (never throws)
        // Beyond the spec (issue #31): the idle event carries what the turn used; the same
        // statement says whether an outcome waits for grading (issues #33, #29).
        const sumFailed = (err: unknown) => {
          logger.error({ err, sessionId }, 'could not sum the turn usage');
          return undefined;
        };
        const facts = await turnUsageAndOutcome(sessionId, current.turn, startedAt).catch(sumFailed);
        let usage = facts?.usage;
        let after: AfterTurn = { stop };
        if (!facts || facts.outcomeActive) {
          // An outcome the turn carried is graded while the session stays running (src/runtime/outcomes.ts).
          after = await afterAgentTurn(sessionId, current.turn, stop, state.controller.signal).catch(async (err): Promise<AfterTurn> => {
            logger.error({ err, sessionId }, 'outcome evaluation failed unexpectedly');
            return { stop };
          });
          if (after.revision) {
            const revision = await startRevisionTurn(sessionId, after.revision);
            if (revision) {
              revisionController = state.controller;
              announceEvents(revision.batch);
              current = revision;
              continue;
            }
          }
          usage = await turnUsage(sessionId, current.turn, startedAt).catch(sumFailed); // the grader's calls are the turn's too
        }
        state.controller = null;
        const ended = current.turn;
        current = await endTurn(sessionId, {
          type: 'session.status_idle',
          fields: { stop_reason: after.stop ?? { type: 'end_turn' }, ...(usage ? { usage } : {}) },
        });
        if (current) announceEvents(current.batch); // the next turn, started with this one's end
        if (isThreadId(sessionId)) await threadTurnEnded(sessionId, ended, after.stop ?? { type: 'end_turn' }); // multiagent: its session hears of it
      }
    } finally {
      if (holdsSlot) releaseSlot();
      stopBeating(sessionId);
      running.delete(sessionId);
      finish();
      if (state.again && !turnGate().draining) void runSession(sessionId).catch((err) => logger.error({ err, sessionId }, 'session run failed'));
    }
  })();
  return { started, finished };
}

/** Sessions left `running` by a process that died: its streams completed, an error event, idle, then waiting inputs run. */
export async function recoverStaleSessions(staleMs = settings.runnerStaleMs()): Promise<string[]> {
  const cutoff = new Date(Date.now() - staleMs);
  const stale = await prisma.session.findMany({
    where: { status: { in: movableFrom('recover') }, OR: [{ runnerHeartbeatAt: null }, { runnerHeartbeatAt: { lt: cutoff } }], NOT: { runnerId: ownerId() } },
    select: { id: true, runnerId: true },
  });
  return endLostTurns(stale);
}

/**
 * Each lost turn is taken over first (still running, this process its runner: no new turn starts
 * meanwhile, and one process alone recovers it), its memory stores read back (what its tools
 * wrote before the process died becomes versions by the session), then it ends. A process dying
 * here leaves it running under its own name: recovered again later.
 */
async function endLostTurns(stale: { id: string; runnerId: string | null }[]): Promise<string[]> {
  const recovered: string[] = [];
  for (const s of stale) {
    const taken = await prisma.session.updateMany({
      where: { id: s.id, status: { in: movableFrom('recover') }, runnerId: s.runnerId },
      data: { runnerId: ownerId(), runnerHeartbeatAt: new Date() },
    });
    if (!taken.count) continue;
    const row = await prisma.session.findUnique({ where: { id: s.id }, select: { turnCount: true } });
    if (row) await sandboxFilling().syncMemoryBack(s.id, row.turnCount); // never throws
    const turn = row?.turnCount ?? 0;
    if (!(await transition(s.id, 'recover', { runnerId: null }, prisma, { runnerId: ownerId() }))) continue;
    await interruptActiveOutcome(s.id); // an outcome whose turn or evaluation was lost ends interrupted
    await commitEvents(s.id, [
      ...(await finishUnfinishedStreams(s.id)),
      {
        type: 'session.error',
        fields: { error: { type: 'runner_lost', message: 'the process running this turn stopped; the turn is over', retry_status: 'exhausted' } },
      },
      { type: 'session.status_idle', fields: { stop_reason: { type: 'retries_exhausted' } } },
    ]);
    if (isThreadId(s.id)) await threadTurnEnded(s.id, turn, { type: 'retries_exhausted' });
    recovered.push(s.id);
  }
  return recovered;
}

/** Sessions idle with inputs waiting (after a restart or a lost job). */
export async function sessionsWithWaitingInputs(): Promise<string[]> {
  const rows = await prisma.$queryRaw<{ id: string }[]>`
    SELECT s."id" FROM "Session" s WHERE s."status" = ANY(${CLAIM.from}::text[]) AND s."budgetReachedAt" IS NULL AND EXISTS (
      SELECT 1 FROM "SessionEvent" e WHERE e."sessionId" = s."id" AND e."turn" IS NULL AND e."type" = ANY(${INPUT_TYPES}::text[]))`;
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
  turnGate().draining = true;
  cancelWaitingRuns();
  await settle(
    [...running.values()].map((s) => s.finished),
    finishMs,
  );
  if (running.size) {
    logger.info({ sessions: [...running.keys()] }, 'interrupting turns still running at shutdown');
    abortAllTurns();
    await settle(
      [...running.values()].map((s) => s.finished),
      abortMs,
    );
  }
  return [...running.keys()];
}

/** Shutdown without waiting: interrupt every turn this process runs. */
export function abortAllTurns(): void {
  const gate = turnGate();
  gate.draining = true;
  cancelWaitingRuns();
  gate.shutdown.abort(new Error('shutting down'));
  for (const state of running.values()) state.controller?.abort(gate.shutdown.signal.reason);
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
