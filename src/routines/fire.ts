// One fire of a routine: a fresh session with the routine's first events (target new_session)
// or a turn into an existing session (target session). Every fire writes a RoutineRun with a
// session or an error; unrecoverable errors pause the routine.
import { inSpan } from '../telemetry/tracing.js';
import { routineFires } from '../telemetry/metrics.js';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { logger } from '../logger.js';
import type { Viewer } from '../auth/viewer.js';
import { SCOPES } from '../auth/scopes.js';
import { Prisma, type Routine, type RoutineRun } from '../generated/prisma/client.js';
import { createSession } from '../sessions/sessions.js';
import { sendEvents } from '../sessions/send.js';
import type { InitialEvent } from '../events/content.js';
import { centsToNano } from '../money.js';
import { nudgeDispatchers, queueResourceEvent } from '../webhooks/outbox.js';
import type { NewSessionTargetValue, RoutineErrorType, RoutineRunAgent, RoutineTarget, SessionTargetValue } from './contract.js';
import { nextRun } from './cron.js';
import { routineScheduler } from './scheduling.js';
import { checkVaultIds } from '../vaults/vaults.js';

type Trigger = { type: 'schedule'; scheduledAt: Date } | { type: 'manual' };

/** These leave the routine active; every other error pauses it. */
const TRANSIENT_ERRORS = new Set<RoutineErrorType>(['insufficient_credits_error', 'rate_limited_error', 'session_busy_error']);

class RunError extends Error {
  /** The agent the fire had resolved when it failed, if any. */
  agent: RoutineRunAgent | null = null;
  constructor(
    readonly type: RoutineErrorType,
    message: string,
  ) {
    super(message);
  }
  withAgent(agent: RoutineRunAgent | null): this {
    this.agent = agent;
    return this;
  }
}

/** Acts in the routine's universe as its owner (routines run without a caller). */
async function systemViewer(universeId: string): Promise<Viewer> {
  const universe = await prisma.universe.findUniqueOrThrow({ where: { id: universeId }, include: { owner: true } });
  return { user: universe.owner, auth: 'token', scopes: [...SCOPES], tokenId: 'routine', tokenUniverseId: universeId, universe };
}

/**
 * The routine error type of a failure of the create or send the fire made. A not_found names
 * the agent or session only when that target is really gone (deleted meanwhile); any other
 * referent that is missing (a file in initial_events deleted since the routine was saved) makes
 * the fire's own request invalid: run_rejected_error, with the message naming what is missing.
 */
interface FireTarget {
  kind: 'agent' | 'session';
  id: string;
  environmentId?: string | undefined;
  vaultIds?: string[] | undefined;
}

async function asRunError(err: unknown, target: FireTarget): Promise<RunError> {
  if (err instanceof RunError) return err;
  if (err instanceof AppError) {
    if (err.code === 'insufficient_credits') return new RunError('insufficient_credits_error', err.message);
    if (err.code === 'rate_limited') return new RunError('rate_limited_error', err.message);
    if (err.code === 'session_archived') return new RunError('session_archived_error', err.message);
    if (err.code === 'not_found') {
      const gone =
        target.kind === 'agent' ? !(await prisma.agent.count({ where: { id: target.id } })) : !(await prisma.session.count({ where: { id: target.id } }));
      if (gone) return new RunError(target.kind === 'agent' ? 'agent_not_found_error' : 'session_not_found_error', err.message);
      if (target.vaultIds?.length && (await prisma.vault.count({ where: { id: { in: target.vaultIds } } })) < new Set(target.vaultIds).size) {
        return new RunError('vault_not_found_error', err.message);
      }
      return new RunError('run_rejected_error', err.message);
    }
    if (err.code === 'conflict' && target.kind === 'agent') {
      // Archived after the fire's own checks: say which.
      const agent = await prisma.agent.findUnique({ where: { id: target.id }, select: { archived: true } });
      if (agent?.archived) return new RunError('agent_archived_error', err.message);
      const environment = target.environmentId
        ? await prisma.environment.findUnique({ where: { id: target.environmentId }, select: { archivedAt: true } })
        : null;
      if (environment?.archivedAt) return new RunError('environment_archived_error', err.message);
    }
    return new RunError('run_rejected_error', err.message);
  }
  logger.error({ err }, 'routine fire failed unexpectedly');
  return new RunError('unknown_error', 'the fire failed unexpectedly');
}

type Fired = { sessionId: string; agent: RoutineRunAgent | null; outcomeId: string | null };

async function fireNewSession(routine: Routine, viewer: Viewer, target: NewSessionTargetValue): Promise<Fired> {
  const agent = await prisma.agent.findFirst({ where: { id: target.agent, universeId: routine.universeId } });
  if (!agent) throw new RunError('agent_not_found_error', `agent ${target.agent} not found`);
  const ref = { id: agent.id, name: agent.name, version: agent.version };
  if (agent.archived) throw new RunError('agent_archived_error', 'the agent is archived').withAgent(ref);
  if (target.environment_id) {
    const environment = await prisma.environment.findFirst({
      where: { id: target.environment_id, universeId: routine.universeId },
      select: { archivedAt: true },
    });
    if (!environment) throw new RunError('environment_not_found_error', `environment ${target.environment_id} not found`).withAgent(ref);
    if (environment.archivedAt) throw new RunError('environment_archived_error', `environment ${target.environment_id} is archived`).withAgent(ref);
  }
  const vaults = await checkVaultIds(routine.universeId, target.vault_ids ?? []);
  if (vaults.missing) throw new RunError('vault_not_found_error', `vault ${vaults.missing} not found`).withAgent(ref);
  const memoryStores = target.memory_stores ?? [];
  const memoryProblem = await memoryStoreProblem(
    routine.universeId,
    memoryStores.map((m) => m.memory_store_id),
  );
  // The spec's run errors have no memory store type: like any other referent, run_rejected_error (pauses).
  if (memoryProblem) throw new RunError('run_rejected_error', memoryProblem).withAgent(ref);
  try {
    const session = await createSession(viewer, {
      agent: agent.id,
      title: routine.name.slice(0, 120),
      metadata: { routine_id: routine.id },
      ...(vaults.ids.length ? { vault_ids: vaults.ids } : {}),
      ...(target.environment_id ? { environment_id: target.environment_id } : {}),
      ...(memoryStores.length
        ? {
            resources: memoryStores.map((m) => ({
              type: 'memory_store' as const,
              memory_store_id: m.memory_store_id,
              access: m.access ?? 'read_write',
              instructions: m.instructions ?? null,
            })),
          }
        : {}),
      initial_events: storedInitialEvents(routine),
      ...(routine.budgetCents !== null ? { budget: { type: 'limit', max_list_cost: { amount: routine.budgetCents.toString(), currency: 'USD' } } } : {}),
    });
    const outcome = await prisma.outcome.findFirst({ where: { sessionId: session.id }, select: { id: true } });
    return { sessionId: session.id, agent: ref, outcomeId: outcome?.id ?? null };
  } catch (err) {
    throw (await asRunError(err, { kind: 'agent', id: agent.id, environmentId: target.environment_id, vaultIds: vaults.ids })).withAgent(ref);
  }
}

/** Why the fire's session cannot mount these stores (one gone or archived since the routine was saved), or null. */
async function memoryStoreProblem(universeId: string, ids: string[]): Promise<string | null> {
  if (!ids.length) return null;
  const found = await prisma.memoryStore.findMany({ where: { id: { in: ids }, universeId }, select: { id: true, archivedAt: true } });
  for (const id of ids) {
    const store = found.find((s) => s.id === id);
    if (!store) return `memory store ${id} not found`;
    if (store.archivedAt) return `memory store ${id} is archived; new sessions cannot mount it`;
  }
  return null;
}

async function fireIntoSession(routine: Routine, viewer: Viewer, target: SessionTargetValue): Promise<Fired> {
  const session = await prisma.session.findFirst({ where: { id: target.session_id, universeId: routine.universeId }, include: { agent: true } });
  if (!session) throw new RunError('session_not_found_error', `session ${target.session_id} not found`);
  const ref = session.agent ? { id: session.agent.id, name: session.agent.name, version: session.agent.version } : null;
  const fail = (type: RoutineErrorType, message: string) => new RunError(type, message).withAgent(ref);
  if (session.status === 'terminated') throw fail('session_archived_error', 'the session is archived');
  const waiting = await prisma.sessionEvent.count({
    where: { sessionId: session.id, turn: null, type: { in: ['user.message', 'system.message', 'user.define_outcome'] } },
  });
  if (session.status !== 'idle' || waiting > 0)
    throw fail('session_busy_error', `the session is ${session.status === 'idle' ? 'about to run a turn' : session.status}`);
  // The fire's turn is the session's next one: its allowance (the routine's budget on top of the
  // cost consumed now) is set with the idle check in one statement; no budget clears an older one.
  const fireTurn = await grantFireAllowance(session.id, routine.budgetCents === null ? null : centsToNano(routine.budgetCents));
  if (fireTurn === null) throw fail('session_busy_error', 'the session is about to run a turn');
  let outcomeId: string | null = null;
  try {
    const sent = await sendEvents(viewer, session.id, { events: storedInitialEvents(routine) });
    for (const e of sent) if (e.type === 'user.define_outcome') outcomeId = e.outcome_id;
  } catch (err) {
    // No turn started: the allowance must not pass to the next turn someone else starts.
    await prisma.session.updateMany({ where: { id: session.id, fireTurn, turnCount: { lt: fireTurn } }, data: { fireTurn: null, fireCapNanoUsd: null } });
    throw (await asRunError(err, { kind: 'session', id: session.id })).withAgent(ref);
  }
  return { sessionId: session.id, agent: ref, outcomeId };
}

const INPUT_TYPES = ['user.message', 'system.message', 'user.tool_confirmation', 'user.compact', 'user.define_outcome'];

/**
 * Where the session is idle with no input waiting: marks its next turn as this fire's, allowed
 * to consume `allowance` more than now (none: no allowance). Returns that turn's number, or null
 * when the session is not idle or an input waits (busy).
 */
async function grantFireAllowance(sessionId: string, allowance: bigint | null): Promise<number | null> {
  const rows = await prisma.$queryRaw<{ fireTurn: number }[]>`
    UPDATE "Session" SET "fireTurn" = "turnCount" + 1, "fireCapNanoUsd" = "consumedNanoUsd" + ${allowance}::bigint
    WHERE "id" = ${sessionId} AND "status" = 'idle' AND NOT EXISTS (
      SELECT 1 FROM "SessionEvent" e WHERE e."sessionId" = ${sessionId} AND e."turn" IS NULL AND e."type" = ANY(${INPUT_TYPES}::text[]))
    RETURNING "fireTurn"`;
  return rows[0]?.fireTurn ?? null;
}

/** A routine's initial events, validated when it was saved (stored in the spec's shape). */
function storedInitialEvents(routine: Routine): InitialEvent[] {
  return routine.initialEvents as InitialEvent[];
}

/**
 * Fires once and records the run. The run, the routine's last run time, a pause on an
 * unrecoverable error and their webhook events are written in one transaction.
 */
export async function fireRoutine(routineId: string, trigger: Trigger): Promise<RoutineRun> {
  return inSpan('routine.fire', { 'agent_service.routine.id': routineId, 'agent_service.routine.trigger': trigger.type }, async (span) => {
    const run = await fireOnce(routineId, trigger);
    const result = run.errorType ? 'error' : 'ok';
    routineFires.inc({ trigger: trigger.type, result });
    span?.setAttributes({
      'agent_service.routine.run.id': run.id,
      'agent_service.routine.result': result,
      ...(run.sessionId ? { 'agent_service.session.id': run.sessionId } : {}),
    });
    if (run.errorType) span?.setAttribute('error.type', run.errorType);
    return run;
  });
}

async function fireOnce(routineId: string, trigger: Trigger): Promise<RoutineRun> {
  const routine = await prisma.routine.findUniqueOrThrow({ where: { id: routineId } });
  const viewer = await systemViewer(routine.universeId);
  // Stored as validated at save time, in the spec's shape.
  const target = routine.target as RoutineTarget;
  let fired: Fired | null = null;
  let error: RunError | null = null;
  try {
    fired = target.type === 'session' ? await fireIntoSession(routine, viewer, target) : await fireNewSession(routine, viewer, target);
  } catch (err) {
    error = await asRunError(
      err,
      target.type === 'session'
        ? { kind: 'session', id: target.session_id }
        : { kind: 'agent', id: target.agent, environmentId: target.environment_id, vaultIds: target.vault_ids },
    );
  }
  const agent = fired?.agent ?? error?.agent ?? null;
  const pauseFor = error && !TRANSIENT_ERRORS.has(error.type) ? error.type : null;
  const { run, paused, queued } = await prisma.$transaction(async (tx) => {
    const run = await tx.routineRun.create({
      data: {
        id: newId('rrun'),
        routineId,
        triggerType: trigger.type,
        scheduledAt: trigger.type === 'schedule' ? trigger.scheduledAt : null,
        sessionId: fired?.sessionId ?? null,
        errorType: error?.type ?? null,
        errorMessage: error?.message ?? null,
        agent: agent ?? Prisma.DbNull,
        outcomeId: fired?.outcomeId ?? null,
      },
    });
    await tx.routine.update({ where: { id: routineId }, data: { lastRunAt: run.createdAt } });
    let queued = await queueResourceEvent(tx, routine.universeId, error ? 'routine_run.failed' : 'routine_run.succeeded', { type: 'routine_run', id: run.id });
    let paused = false;
    if (pauseFor) {
      const n = await tx.routine.updateMany({
        where: { id: routineId, status: 'active' },
        data: { status: 'paused', pausedReason: { type: 'error', error: { type: pauseFor } }, nextRunAt: null },
      });
      paused = n.count > 0;
      if (paused) queued += await queueResourceEvent(tx, routine.universeId, 'routine.paused', { type: 'routine', id: routineId });
    }
    return { run, paused, queued };
  });
  if (queued) nudgeDispatchers();
  if (paused) await routineScheduler().sync({ ...routine, status: 'paused' });
  return run;
}

/** The occurrence after `after` for an active scheduled routine (null otherwise). */
export function followingRun(routine: Pick<Routine, 'cronExpression' | 'cronTimezone'>, after: Date): Date | null {
  return routine.cronExpression ? nextRun(routine.cronExpression, routine.cronTimezone ?? 'UTC', after) : null;
}
