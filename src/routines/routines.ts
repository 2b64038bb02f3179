// Routine rules: create, read, patch (all optional, nullable where the spec says), pause,
// resume, archive. The schedule's next occurrence is kept in `nextRunAt` for the scheduler.
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { parseInput } from '../validation.js';
import type { Viewer } from '../auth/viewer.js';
import { Prisma, type Routine } from '../generated/prisma/client.js';
import { createRoutineBody, patchRoutineBody } from './rules.js';
import { nextRun, validateSchedule } from './schedule.js';
import { routineScheduler } from './scheduling.js';

export async function findRoutine(viewer: Viewer, id: string): Promise<Routine> {
  const routine = await prisma.routine.findFirst({ where: { id, universeId: viewer.universe.id } });
  if (!routine) throw new AppError('not_found', 'routine not found');
  return routine;
}

function nextFor(r: { cronExpression: string | null; cronTimezone: string | null; status: string; archivedAt: Date | null }): Date | null {
  if (!r.cronExpression || r.archivedAt || r.status !== 'active') return null;
  return nextRun(r.cronExpression, r.cronTimezone ?? 'UTC');
}

export async function createRoutine(viewer: Viewer, input: unknown): Promise<Routine> {
  const body = parseInput(createRoutineBody, input);
  if (body.schedule) validateSchedule(body.schedule.expression, body.schedule.timezone);
  const cron = body.schedule ? { cronExpression: body.schedule.expression.trim(), cronTimezone: body.schedule.timezone } : { cronExpression: null, cronTimezone: null };
  const created = await prisma.routine.create({
    data: {
      id: newId('rtn'),
      universeId: viewer.universe.id,
      name: body.name,
      description: body.description ?? null,
      metadata: (body.metadata ?? {}) as Prisma.InputJsonValue,
      target: body.target as Prisma.InputJsonValue,
      initialEvents: body.initial_events as Prisma.InputJsonValue,
      ...cron,
      budgetCents: body.budget ? BigInt(body.budget.max_list_cost.amount) : null,
      nextRunAt: nextFor({ ...cron, status: 'active', archivedAt: null }),
    },
  });
  await routineScheduler().sync(created);
  return created;
}

export async function patchRoutine(viewer: Viewer, id: string, input: unknown): Promise<Routine> {
  const body = parseInput(patchRoutineBody, input ?? {});
  const routine = await findRoutine(viewer, id);
  if (routine.archivedAt) throw new AppError('conflict', 'the routine is archived');
  const data: Prisma.RoutineUpdateInput = {};
  if (body.name !== undefined) data.name = body.name;
  if (body.description !== undefined) data.description = body.description;
  if (body.metadata !== undefined) {
    const merged: Record<string, unknown> = { ...(routine.metadata as Record<string, unknown>) };
    for (const [k, v] of Object.entries(body.metadata)) {
      if (v === null) delete merged[k];
      else merged[k] = v;
    }
    data.metadata = merged as Prisma.InputJsonValue;
  }
  if (body.target !== undefined) data.target = body.target as Prisma.InputJsonValue;
  if (body.initial_events !== undefined) data.initialEvents = body.initial_events as Prisma.InputJsonValue;
  if (body.budget !== undefined) data.budgetCents = body.budget ? BigInt(body.budget.max_list_cost.amount) : null;
  if (body.schedule !== undefined) {
    if (body.schedule) validateSchedule(body.schedule.expression, body.schedule.timezone);
    data.cronExpression = body.schedule?.expression.trim() ?? null;
    data.cronTimezone = body.schedule?.timezone ?? null;
    data.nextRunAt = nextFor({ cronExpression: data.cronExpression as string | null, cronTimezone: data.cronTimezone as string | null, status: routine.status, archivedAt: null });
  }
  return synced(await prisma.routine.update({ where: { id: routine.id }, data }));
}

async function synced(routine: Routine): Promise<Routine> {
  await routineScheduler().sync(routine);
  return routine;
}

export async function pauseRoutine(viewer: Viewer, id: string): Promise<Routine> {
  const routine = await findRoutine(viewer, id);
  if (routine.archivedAt) throw new AppError('conflict', 'the routine is archived');
  if (routine.status === 'paused') return routine;
  return synced(await prisma.routine.update({ where: { id: routine.id }, data: { status: 'paused', pausedReason: { type: 'manual' }, nextRunAt: null } }));
}

export async function resumeRoutine(viewer: Viewer, id: string): Promise<Routine> {
  const routine = await findRoutine(viewer, id);
  if (routine.archivedAt) throw new AppError('conflict', 'the routine is archived');
  if (routine.status === 'active') return routine;
  // Resuming never fires what was missed while paused: the schedule continues from now.
  return synced(await prisma.routine.update({
    where: { id: routine.id },
    data: { status: 'active', pausedReason: Prisma.DbNull, nextRunAt: nextFor({ ...routine, status: 'active' }) },
  }));
}

export async function archiveRoutine(viewer: Viewer, id: string): Promise<Routine> {
  const routine = await findRoutine(viewer, id);
  if (routine.archivedAt) return routine;
  return synced(await prisma.routine.update({ where: { id: routine.id }, data: { archivedAt: new Date(), nextRunAt: null } }));
}
