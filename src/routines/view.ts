// Routines and their runs as the spec shows them, from their rows alone (no further queries):
// a list of any length costs the one query that loaded it.
import type { Routine, RoutineRun } from '../generated/prisma/client.js';
import { prisma } from '../db/client.js';
import { nextRuns } from './cron.js';
import type { PausedReason, RoutineErrorType, RoutineRunAgent, RoutineRunView, RoutineTarget, RoutineView } from './contract.js';
import type { InitialEvent } from '../events/content.js';

const UPCOMING = 5;

export function routineView(r: Routine): RoutineView {
  const live = !r.archivedAt && r.status === 'active';
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    metadata: r.metadata as Record<string, string>,
    // Stored as validated at save time, in the spec's shape.
    target: r.target as RoutineTarget,
    initial_events: r.initialEvents as InitialEvent[],
    schedule: r.cronExpression
      ? {
          type: 'cron',
          expression: r.cronExpression,
          timezone: r.cronTimezone ?? 'UTC',
          last_run_at: r.lastRunAt?.toISOString() ?? null,
          upcoming_runs_at: live ? nextRuns(r.cronExpression, r.cronTimezone ?? 'UTC', UPCOMING).map((d) => d.toISOString()) : [],
        }
      : null,
    budget: r.budgetCents === null ? null : { type: 'limit', max_list_cost: { amount: r.budgetCents.toString(), currency: 'USD' } },
    status: r.status as RoutineView['status'],
    paused_reason: (r.pausedReason as PausedReason | null) ?? null,
    archived_at: r.archivedAt?.toISOString() ?? null,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

/** Runs' views with the status of the outcome each one defined (one query for all). */
export async function routineRunViews(runs: RoutineRun[]): Promise<RoutineRunView[]> {
  const ids = runs.flatMap((r) => (r.outcomeId ? [r.outcomeId] : []));
  const outcomes = ids.length ? await prisma.outcome.findMany({ where: { id: { in: ids } }, select: { id: true, status: true } }) : [];
  const status = new Map(outcomes.map((o) => [o.id, o.status]));
  return runs.map((r) => routineRunView(r, r.outcomeId ? (status.get(r.outcomeId) ?? null) : null));
}

export function routineRunView(r: RoutineRun, outcomeStatus: string | null = null): RoutineRunView {
  return {
    id: r.id,
    routine_id: r.routineId,
    trigger_context: r.triggerType === 'schedule' && r.scheduledAt ? { type: 'schedule', scheduled_at: r.scheduledAt.toISOString() } : { type: 'manual' },
    session_id: r.sessionId,
    error: r.errorType ? { type: r.errorType as RoutineErrorType, message: r.errorMessage ?? '' } : null,
    agent: (r.agent as RoutineRunAgent | null) ?? null,
    outcome: r.outcomeId && outcomeStatus ? { id: r.outcomeId, status: outcomeStatus } : null,
    created_at: r.createdAt.toISOString(),
  };
}
