// One fire of a routine: a fresh session with the routine's first events (target new_session)
// or a turn into an existing session (target session). Every fire writes a RoutineRun with a
// session or an error; unrecoverable errors pause the routine.
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { logger } from '../logger.js';
import type { Viewer } from '../auth/viewer.js';
import { SCOPES } from '../auth/scopes.js';
import type { Routine, RoutineRun } from '../generated/prisma/client.js';
import { createSession } from '../sessions/sessions.js';
import { sendEvents } from '../sessions/send.js';
import type { UserMessageInput } from '../sessions/content.js';
import { centsToNano, nanoToCents } from '../billing/money.js';
import { emitResourceEvent } from '../webhooks/outbox.js';
import { TRANSIENT_ERRORS, type RoutineErrorType } from './rules.js';
import { nextRun } from './schedule.js';
import { routineScheduler } from './scheduling.js';

export type Trigger = { type: 'schedule'; scheduledAt: Date } | { type: 'manual' };

class RunError extends Error {
  constructor(readonly type: RoutineErrorType, message: string) {
    super(message);
  }
}

/** Acts in the routine's universe as its owner (routines run without a caller). */
async function systemViewer(universeId: string): Promise<Viewer> {
  const universe = await prisma.universe.findUniqueOrThrow({ where: { id: universeId }, include: { owner: true } });
  return { user: universe.owner, auth: 'token', scopes: [...SCOPES], tokenId: 'routine', tokenUniverseId: universeId, universe };
}

function asRunError(err: unknown, kind: 'agent' | 'session'): RunError {
  if (err instanceof RunError) return err;
  if (err instanceof AppError) {
    if (err.code === 'insufficient_credits') return new RunError('insufficient_credits_error', err.message);
    if (err.code === 'rate_limited') return new RunError('rate_limited_error', err.message);
    if (err.code === 'session_archived') return new RunError('session_archived_error', err.message);
    if (err.code === 'not_found') return new RunError(kind === 'agent' ? 'agent_not_found_error' : 'session_not_found_error', err.message);
    if (err.code === 'conflict' && kind === 'agent') return new RunError('agent_archived_error', err.message);
    return new RunError('run_rejected_error', err.message);
  }
  logger.error({ err }, 'routine fire failed unexpectedly');
  return new RunError('unknown_error', 'the fire failed unexpectedly');
}

async function fireNewSession(routine: Routine, viewer: Viewer, target: { agent: string; environment_id?: string; vault_ids?: string[] }) {
  const agent = await prisma.agent.findFirst({ where: { id: target.agent, universeId: routine.universeId } });
  if (!agent) throw new RunError('agent_not_found_error', `agent ${target.agent} not found`);
  const ref = { id: agent.id, name: agent.name, version: agent.version };
  if (agent.archived) throw Object.assign(new RunError('agent_archived_error', 'the agent is archived'), { agent: ref });
  if (target.environment_id) throw Object.assign(new RunError('environment_not_found_error', `environment ${target.environment_id} not found`), { agent: ref });
  if (target.vault_ids?.length) throw Object.assign(new RunError('vault_not_found_error', `vault ${target.vault_ids[0]} not found`), { agent: ref });
  try {
    const session = await createSession(viewer, {
      agent: agent.id,
      title: routine.name.slice(0, 120),
      metadata: { routine_id: routine.id },
      initial_events: storedInitialEvents(routine),
      ...(routine.budgetCents !== null ? { budget: { type: 'limit', max_list_cost: { amount: routine.budgetCents.toString(), currency: 'USD' } } } : {}),
    });
    return { sessionId: session.id, agent: ref };
  } catch (err) {
    throw Object.assign(asRunError(err, 'agent'), { agent: ref });
  }
}

async function fireIntoSession(routine: Routine, viewer: Viewer, target: { session_id: string }) {
  const session = await prisma.session.findFirst({ where: { id: target.session_id, universeId: routine.universeId }, include: { agent: true } });
  if (!session) throw new RunError('session_not_found_error', `session ${target.session_id} not found`);
  const ref = session.agent ? { id: session.agent.id, name: session.agent.name, version: session.agent.version } : null;
  const fail = (type: RoutineErrorType, message: string) => Object.assign(new RunError(type, message), { agent: ref });
  if (session.status === 'terminated') throw fail('session_archived_error', 'the session is archived');
  const waiting = await prisma.sessionEvent.count({ where: { sessionId: session.id, turn: null, type: { in: ['user.message', 'system.message'] } } });
  if (session.status !== 'idle' || waiting > 0) throw fail('session_busy_error', `the session is ${session.status === 'idle' ? 'about to run a turn' : session.status}`);
  if (routine.budgetCents !== null) {
    // A per-fire allowance on top of what the session has consumed so far.
    const cap = nanoToCents(session.consumedNanoUsd + centsToNano(routine.budgetCents) + 9_999_999n);
    await prisma.session.update({ where: { id: session.id }, data: { budgetMaxCents: cap, budgetReachedAt: null } });
  }
  try {
    await sendEvents(viewer, session.id, { events: storedInitialEvents(routine) });
  } catch (err) {
    throw Object.assign(asRunError(err, 'session'), { agent: ref });
  }
  return { sessionId: session.id, agent: ref };
}

/** A routine's initial events, validated when it was saved (stored in the spec's shape). */
function storedInitialEvents(routine: Routine): UserMessageInput[] {
  return routine.initialEvents as UserMessageInput[];
}

export async function fireRoutine(routineId: string, trigger: Trigger): Promise<RoutineRun> {
  const routine = await prisma.routine.findUniqueOrThrow({ where: { id: routineId } });
  const viewer = await systemViewer(routine.universeId);
  const target = routine.target as { type: string } & Record<string, any>;
  let sessionId: string | null = null;
  let agent: unknown = null;
  let error: RunError | null = null;
  try {
    const r = target.type === 'session' ? await fireIntoSession(routine, viewer, target as never) : await fireNewSession(routine, viewer, target as never);
    sessionId = r.sessionId;
    agent = r.agent;
  } catch (err) {
    error = err instanceof RunError ? err : asRunError(err, target.type === 'session' ? 'session' : 'agent');
    agent = (err as { agent?: unknown }).agent ?? null;
  }
  const run = await prisma.routineRun.create({
    data: {
      id: newId('rrun'),
      routineId,
      triggerType: trigger.type,
      scheduledAt: trigger.type === 'schedule' ? trigger.scheduledAt : null,
      sessionId,
      errorType: error?.type ?? null,
      errorMessage: error?.message ?? null,
      agent: (agent ?? undefined) as never,
    },
  });
  await prisma.routine.update({ where: { id: routineId }, data: { lastRunAt: run.createdAt } });
  await emitResourceEvent(routine.universeId, error ? 'routine_run.failed' : 'routine_run.succeeded', { type: 'routine_run', id: run.id });
  if (error && !TRANSIENT_ERRORS.has(error.type)) {
    const paused = await prisma.routine.updateMany({
      where: { id: routineId, status: 'active' },
      data: { status: 'paused', pausedReason: { type: 'error', error: { type: error.type } }, nextRunAt: null },
    });
    if (paused.count) {
      await routineScheduler().sync({ ...routine, status: 'paused' });
      await emitResourceEvent(routine.universeId, 'routine.paused', { type: 'routine', id: routineId });
    }
  }
  return run;
}

/** The occurrence after `after` for an active scheduled routine (null otherwise). */
export function followingRun(routine: Pick<Routine, 'cronExpression' | 'cronTimezone'>, after: Date): Date | null {
  return routine.cronExpression ? nextRun(routine.cronExpression, routine.cronTimezone ?? 'UTC', after) : null;
}
