// /routines: scheduled executions, their runs; manual pause, resume, archive and run-now.
import { z } from 'zod';
import { defineRoute } from '../route.js';
import { Timestamp } from '../schemas.js';
import { createRoutineBody, patchRoutineBody, ROUTINE_ERROR_TYPES } from '../../src/routines/rules.js';

const FIELDS = 'id name description metadata target initialEvents schedule { type expression timezone lastRunAt upcomingRunsAt } budgetCents status pausedReason archivedAt createdAt updatedAt';
const RUN_FIELDS = 'id routineId triggerType scheduledAt sessionId errorType errorMessage agent createdAt';

const Money = z.object({ amount: z.string(), currency: z.literal('USD') });
const Routine = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  target: z.record(z.string(), z.unknown()),
  initial_events: z.array(z.record(z.string(), z.unknown())),
  schedule: z.object({ type: z.literal('cron'), expression: z.string(), timezone: z.string(), last_run_at: Timestamp.nullable(), upcoming_runs_at: z.array(Timestamp).max(5) }).nullable(),
  budget: z.object({ type: z.literal('limit'), max_list_cost: Money }).nullable(),
  status: z.enum(['active', 'paused']),
  paused_reason: z.record(z.string(), z.unknown()).nullable(),
  archived_at: Timestamp.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
}).meta({ id: 'Routine' });

const RoutineRun = z.object({
  id: z.string(),
  routine_id: z.string(),
  trigger_context: z.union([z.object({ type: z.literal('schedule'), scheduled_at: Timestamp }), z.object({ type: z.literal('manual') })]),
  session_id: z.string().nullable(),
  error: z.object({ type: z.enum(ROUTINE_ERROR_TYPES), message: z.string() }).nullable(),
  agent: z.record(z.string(), z.unknown()).nullable(),
  created_at: Timestamp,
}).meta({ id: 'RoutineRun' });

export function toRestRoutine(r: any) {
  return {
    id: r.id, name: r.name, description: r.description, metadata: r.metadata, target: r.target, initial_events: r.initialEvents,
    schedule: r.schedule ? { type: r.schedule.type, expression: r.schedule.expression, timezone: r.schedule.timezone, last_run_at: r.schedule.lastRunAt, upcoming_runs_at: r.schedule.upcomingRunsAt } : null,
    budget: r.budgetCents === null ? null : { type: 'limit', max_list_cost: { amount: r.budgetCents, currency: 'USD' } },
    status: r.status, paused_reason: r.pausedReason, archived_at: r.archivedAt, created_at: r.createdAt, updated_at: r.updatedAt,
  };
}

export function toRestRun(r: any) {
  return {
    id: r.id, routine_id: r.routineId,
    trigger_context: r.triggerType === 'schedule' ? { type: 'schedule', scheduled_at: r.scheduledAt } : { type: 'manual' },
    session_id: r.sessionId,
    error: r.errorType ? { type: r.errorType, message: r.errorMessage ?? '' } : null,
    agent: r.agent, created_at: r.createdAt,
  };
}

const idParam = ({ params }: { params: Record<string, string> }) => ({ id: params.id });
const verb = (name: string, path: string, summary: string) => defineRoute({
  method: 'POST', path, operationId: `${name}Routine`, tag: 'Routines', scope: 'write', summary,
  document: `mutation Verb($id: String!) { ${name}Routine(id: $id) { ${FIELDS} } }`,
  variables: idParam,
  result: (d) => toRestRoutine(d[`${name}Routine`]),
  response: Routine,
  errors: ['conflict'],
});

export const routineRoutes = [
  defineRoute({
    method: 'GET', path: '/routines', operationId: 'listRoutines', tag: 'Routines', scope: 'read',
    summary: 'Routines of the universe, newest first',
    document: `query Routines { routines(first: 1000) { edges { node { ${FIELDS} } } } }`,
    result: (d) => ({ data: d.routines.edges.map((e: any) => toRestRoutine(e.node)) }),
    response: z.object({ data: z.array(Routine) }),
  }),
  defineRoute({
    method: 'POST', path: '/routines', operationId: 'createRoutine', tag: 'Routines', scope: 'write',
    summary: 'Create a routine (cron schedule or manual-only)',
    body: createRoutineBody,
    document: `mutation Create($input: JSONObject!) { createRoutine(input: $input) { ${FIELDS} } }`,
    variables: ({ body }) => ({ input: body }),
    result: (d) => toRestRoutine(d.createRoutine),
    status: 201,
    idempotent: true,
    response: Routine,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'GET', path: '/routines/{id}', operationId: 'getRoutine', tag: 'Routines', scope: 'read',
    summary: 'One routine',
    document: `query Routine($id: String!) { routine(id: $id) { ${FIELDS} } }`,
    variables: idParam,
    result: (d) => toRestRoutine(d.routine),
    response: Routine,
  }),
  defineRoute({
    method: 'PATCH', path: '/routines/{id}', operationId: 'updateRoutine', tag: 'Routines', scope: 'write',
    summary: 'Update a routine; every field optional (description, metadata values, schedule and budget nullable)',
    body: patchRoutineBody,
    document: `mutation Update($id: String!, $input: JSONObject!) { updateRoutine(id: $id, input: $input) { ${FIELDS} } }`,
    variables: ({ params, body }) => ({ id: params.id, input: body }),
    result: (d) => toRestRoutine(d.updateRoutine),
    response: Routine,
    errors: ['invalid_request', 'conflict'],
  }),
  verb('archive', '/routines/{id}/archive', 'Archive the routine (no more fires; upcoming runs empty)'),
  verb('pause', '/routines/{id}/pause', 'Pause the routine (paused_reason manual)'),
  verb('resume', '/routines/{id}/resume', 'Resume a paused routine from the next occurrence'),
  defineRoute({
    method: 'POST', path: '/routines/{id}/run', operationId: 'runRoutine', tag: 'Routines', scope: 'write',
    summary: 'Fire the routine now (trigger_context manual)',
    document: `mutation Run($id: String!) { runRoutine(id: $id) { ${RUN_FIELDS} } }`,
    variables: idParam,
    result: (d) => toRestRun(d.runRoutine),
    response: RoutineRun,
    errors: ['conflict'],
  }),
  defineRoute({
    method: 'GET', path: '/routines/{id}/runs', operationId: 'listRoutineRuns', tag: 'Routines', scope: 'read',
    summary: 'Runs of the routine, newest first',
    document: `query Runs($id: String!) { routineRuns(routineId: $id, first: 1000) { edges { node { ${RUN_FIELDS} } } } }`,
    variables: idParam,
    result: (d) => ({ data: d.routineRuns.edges.map((e: any) => toRestRun(e.node)) }),
    response: z.object({ data: z.array(RoutineRun) }),
  }),
];
