// Routine rules: create, read, patch (all optional, nullable where the spec says), pause,
// resume, archive. The schedule's next occurrence is kept in `nextRunAt` for the scheduler.
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { Viewer } from '../auth/viewer.js';
import { Prisma, type Routine } from '../generated/prisma/client.js';
import type { CreateRoutineBody, PatchRoutineBody, RoutineTarget } from './contract.js';
import { checkMemoryMountCount } from '../memory/mount.js';
import { memoryStoreForMount } from '../memory/stores.js';
import { nextRun, validateSchedule } from './cron.js';
import { routineScheduler } from './scheduling.js';

export async function findRoutine(viewer: Viewer, id: string): Promise<Routine> {
  const routine = await prisma.routine.findFirst({ where: { id, universeId: viewer.universe.id } });
  if (!routine) throw new AppError('not_found', 'routine not found');
  return routine;
}

/** A page of the universe's routines (the caller's bounds, order and size): one query. */
export function listRoutines(
  viewer: Viewer,
  page: { where?: Prisma.RoutineWhereInput; orderBy: Prisma.RoutineOrderByWithRelationInput; take: number },
): Promise<Routine[]> {
  return prisma.routine.findMany({ where: { ...page.where, universeId: viewer.universe.id }, orderBy: page.orderBy, take: page.take });
}

function nextFor(r: { cronExpression: string | null; cronTimezone: string | null; status: string; archivedAt: Date | null }): Date | null {
  if (!r.cronExpression || r.archivedAt || r.status !== 'active') return null;
  return nextRun(r.cronExpression, r.cronTimezone ?? 'UTC');
}

const archivedConflict = () => new AppError('conflict', 'the routine is archived');

/**
 * A target as saved: its memory stores checked as session create checks them (each once, of the
 * universe: 404; not archived: 409), `access` and `instructions` filled in. The fire checks them again.
 */
async function savedTarget(universeId: string, target: RoutineTarget): Promise<RoutineTarget> {
  if (target.type !== 'new_session' || !target.memory_stores) return target;
  const stores = target.memory_stores.map((m) => ({ ...m, access: m.access ?? ('read_write' as const), instructions: m.instructions ?? null }));
  checkMemoryMountCount(stores.map((m) => ({ type: 'memory_store' as const, ...m })));
  for (const m of stores) await memoryStoreForMount(universeId, m.memory_store_id);
  return { ...target, memory_stores: stores };
}

export async function createRoutine(viewer: Viewer, body: CreateRoutineBody): Promise<Routine> {
  if (body.schedule) validateSchedule(body.schedule.expression, body.schedule.timezone);
  const target = await savedTarget(viewer.universe.id, body.target);
  const cron = body.schedule
    ? { cronExpression: body.schedule.expression.trim(), cronTimezone: body.schedule.timezone }
    : { cronExpression: null, cronTimezone: null };
  const created = await prisma.routine.create({
    data: {
      id: newId('rtn'),
      universeId: viewer.universe.id,
      name: body.name,
      description: body.description ?? null,
      metadata: body.metadata ?? {},
      target,
      initialEvents: body.initial_events,
      ...cron,
      budgetCents: body.budget ? BigInt(body.budget.max_list_cost.amount) : null,
      nextRunAt: nextFor({ ...cron, status: 'active', archivedAt: null }),
    },
  });
  return synced(created);
}

function mergeMetadata(current: Prisma.JsonValue, patch: Record<string, string | null>): Record<string, string> {
  const merged = { ...(current as Record<string, string>) };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete merged[k];
    else merged[k] = v;
  }
  return merged;
}

export async function patchRoutine(viewer: Viewer, id: string, body: PatchRoutineBody): Promise<Routine> {
  const routine = await findRoutine(viewer, id);
  if (routine.archivedAt) throw archivedConflict();
  const data: Prisma.RoutineUpdateInput = {};
  if (body.name !== undefined) data.name = body.name;
  if (body.description !== undefined) data.description = body.description;
  if (body.metadata !== undefined) data.metadata = mergeMetadata(routine.metadata, body.metadata);
  if (body.target !== undefined) data.target = await savedTarget(viewer.universe.id, body.target);
  if (body.initial_events !== undefined) data.initialEvents = body.initial_events;
  if (body.budget !== undefined) data.budgetCents = body.budget ? BigInt(body.budget.max_list_cost.amount) : null;
  if (body.schedule !== undefined) {
    if (body.schedule) validateSchedule(body.schedule.expression, body.schedule.timezone);
    const cron = { cronExpression: body.schedule?.expression.trim() ?? null, cronTimezone: body.schedule?.timezone ?? null };
    Object.assign(data, cron, { nextRunAt: nextFor({ ...cron, status: routine.status, archivedAt: null }) });
  }
  return synced(await prisma.routine.update({ where: { id: routine.id }, data }));
}

async function synced(routine: Routine): Promise<Routine> {
  await routineScheduler().sync(routine);
  return routine;
}

export async function pauseRoutine(viewer: Viewer, id: string): Promise<Routine> {
  const routine = await findRoutine(viewer, id);
  if (routine.archivedAt) throw archivedConflict();
  if (routine.status === 'paused') return routine;
  return synced(await prisma.routine.update({ where: { id: routine.id }, data: { status: 'paused', pausedReason: { type: 'manual' }, nextRunAt: null } }));
}

export async function resumeRoutine(viewer: Viewer, id: string): Promise<Routine> {
  const routine = await findRoutine(viewer, id);
  if (routine.archivedAt) throw archivedConflict();
  if (routine.status === 'active') return routine;
  // Resuming never fires what was missed while paused: the schedule continues from now.
  return synced(
    await prisma.routine.update({
      where: { id: routine.id },
      data: { status: 'active', pausedReason: Prisma.DbNull, nextRunAt: nextFor({ ...routine, status: 'active' }) },
    }),
  );
}

export async function archiveRoutine(viewer: Viewer, id: string): Promise<Routine> {
  const routine = await findRoutine(viewer, id);
  if (routine.archivedAt) return routine;
  return synced(await prisma.routine.update({ where: { id: routine.id }, data: { archivedAt: new Date(), nextRunAt: null } }));
}

/** A writable routine for a manual fire (archived routines do not run). */
export async function runnableRoutine(viewer: Viewer, id: string): Promise<Routine> {
  const routine = await findRoutine(viewer, id);
  if (routine.archivedAt) throw archivedConflict();
  return routine;
}
