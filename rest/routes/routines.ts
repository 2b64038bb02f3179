// /routines: scheduled executions, their runs; manual pause, resume, archive and run-now. Bodies
// and answers are the zod schemas of src/routines/contract.ts; documents alias their root field.
import { defineRoute } from '../route.js';
import { selectionOf } from '../../src/contract/values.js';
import {
  createRoutineBody,
  patchRoutineBody,
  routineBody,
  routineRunBody,
  routineList,
  routineRunList,
  listRoutinesQuery,
} from '../../src/routines/contract.js';
import { nextCursorOf, nodesOf } from '../connections.js';

const ROUTINE = selectionOf(routineBody);
const RUN = selectionOf(routineRunBody);

const verb = (name: string, path: string, summary: string) =>
  defineRoute({
    method: 'POST',
    path,
    operationId: `${name}Routine`,
    tag: 'Routines',
    scope: 'write',
    summary,
    document: `mutation Verb($id: String!) { routine: ${name}Routine(id: $id) { ${ROUTINE} } }`,
    pick: (data) => data.routine,
    response: routineBody,
    errors: ['conflict'],
  });

export const routineRoutes = [
  defineRoute({
    method: 'GET',
    path: '/routines',
    operationId: 'listRoutines',
    tag: 'Routines',
    scope: 'read',
    summary: 'Routines of the universe, newest first; pages of `limit` (default 1000), the next one by `?page=` with `next_page`',
    query: listRoutinesQuery('rtn'),
    document: `query Routines($first: Int, $after: String) { routines(first: $first, after: $after) { edges { node { ${ROUTINE} } } pageInfo { hasNextPage endCursor } } }`,
    variables: ({ query }) => ({ first: query.limit, after: query.page ?? null }),
    // `pick` answers in GraphQL's field names (nextPage); the response schema converts to next_page.
    pick: (data) => ({ data: nodesOf(data.routines), nextPage: nextCursorOf(data.routines) }),
    response: routineList,
  }),
  defineRoute({
    method: 'POST',
    path: '/routines',
    operationId: 'createRoutine',
    tag: 'Routines',
    scope: 'write',
    summary: 'Create a routine (cron schedule or manual-only)',
    body: createRoutineBody,
    document: `mutation Create($input: CreateRoutineInput!) { routine: createRoutine(input: $input) { ${ROUTINE} } }`,
    pick: (data) => data.routine,
    status: 201,
    idempotent: true,
    response: routineBody,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'GET',
    path: '/routines/{id}',
    operationId: 'getRoutine',
    tag: 'Routines',
    scope: 'read',
    summary: 'One routine',
    document: `query Routine($id: String!) { routine(id: $id) { ${ROUTINE} } }`,
    pick: (data) => data.routine,
    response: routineBody,
  }),
  defineRoute({
    method: 'PATCH',
    path: '/routines/{id}',
    operationId: 'updateRoutine',
    tag: 'Routines',
    scope: 'write',
    summary: 'Update a routine; every field optional (description, metadata values, schedule and budget nullable)',
    body: patchRoutineBody,
    document: `mutation Update($id: String!, $input: UpdateRoutineInput!) { routine: updateRoutine(id: $id, input: $input) { ${ROUTINE} } }`,
    pick: (data) => data.routine,
    response: routineBody,
    errors: ['invalid_request', 'conflict'],
  }),
  verb('archive', '/routines/{id}/archive', 'Archive the routine (no more fires; upcoming runs empty)'),
  verb('pause', '/routines/{id}/pause', 'Pause the routine (paused_reason manual)'),
  verb('resume', '/routines/{id}/resume', 'Resume a paused routine from the next occurrence'),
  defineRoute({
    method: 'POST',
    path: '/routines/{id}/run',
    operationId: 'runRoutine',
    tag: 'Routines',
    scope: 'write',
    summary: 'Fire the routine now (trigger_context manual)',
    document: `mutation Run($id: String!) { run: runRoutine(id: $id) { ${RUN} } }`,
    pick: (data) => data.run,
    idempotent: true,
    response: routineRunBody,
    errors: ['conflict'],
  }),
  defineRoute({
    method: 'GET',
    path: '/routines/{id}/runs',
    operationId: 'listRoutineRuns',
    tag: 'Routines',
    scope: 'read',
    summary: 'Runs of the routine, newest first; pages of `limit` (default 1000), the next one by `?page=` with `next_page`',
    query: listRoutinesQuery('rrun'),
    document: `query Runs($id: String!, $first: Int, $after: String) { routineRuns(routineId: $id, first: $first, after: $after) { edges { node { ${RUN} } } pageInfo { hasNextPage endCursor } } }`,
    variables: ({ params, query }) => ({ id: params.id, first: query.limit, after: query.page ?? null }),
    pick: (data) => ({ data: nodesOf(data.routineRuns), nextPage: nextCursorOf(data.routineRuns) }),
    response: routineRunList,
  }),
];
