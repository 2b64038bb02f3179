// Routines and their runs; outbound webhook endpoints and their deliveries.
import { builder } from './builder.js';
import { AppError } from '../errors.js';
import type { Viewer } from '../auth/viewer.js';
import { prisma } from '../db/client.js';
import { createRoutine, patchRoutine, pauseRoutine, resumeRoutine, archiveRoutine, findRoutine } from '../routines/routines.js';
import { fireRoutine } from '../routines/fire.js';
import { nextRuns } from '../routines/schedule.js';
import { createEndpoint, patchEndpoint, deleteEndpoint, findEndpoint } from '../webhooks/endpoints.js';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/catalog.js';

const RoutineSchedule = builder.simpleObject('RoutineSchedule', {
  fields: (t) => ({
    type: t.string(),
    expression: t.string(),
    timezone: t.string(),
    lastRunAt: t.field({ type: 'DateTime', nullable: true }),
    upcomingRunsAt: t.field({ type: ['DateTime'], description: 'At most 5; empty once archived or while paused' }),
  }),
});

builder.prismaObject('Routine', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    description: t.exposeString('description', { nullable: true }),
    metadata: t.field({ type: 'JSONObject', resolve: (r) => r.metadata as Record<string, unknown> }),
    target: t.field({ type: 'JSONObject', resolve: (r) => r.target as Record<string, unknown> }),
    initialEvents: t.field({ type: ['JSONObject'], resolve: (r) => r.initialEvents as Record<string, unknown>[] }),
    schedule: t.field({
      type: RoutineSchedule,
      nullable: true,
      resolve: (r) => r.cronExpression ? {
        type: 'cron', expression: r.cronExpression, timezone: r.cronTimezone ?? 'UTC', lastRunAt: r.lastRunAt,
        upcomingRunsAt: r.archivedAt || r.status !== 'active' ? [] : nextRuns(r.cronExpression, r.cronTimezone ?? 'UTC', 5),
      } : null,
    }),
    budgetCents: t.string({ nullable: true, description: 'Per-run cap in whole cents', resolve: (r) => r.budgetCents?.toString() ?? null }),
    status: t.exposeString('status'),
    pausedReason: t.field({ type: 'JSONObject', nullable: true, resolve: (r) => (r.pausedReason as Record<string, unknown> | null) ?? null }),
    lastRunAt: t.expose('lastRunAt', { type: 'DateTime', nullable: true }),
    archivedAt: t.expose('archivedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

builder.prismaObject('RoutineRun', {
  fields: (t) => ({
    id: t.exposeID('id'),
    routineId: t.exposeString('routineId'),
    triggerType: t.exposeString('triggerType'),
    scheduledAt: t.expose('scheduledAt', { type: 'DateTime', nullable: true }),
    sessionId: t.exposeString('sessionId', { nullable: true }),
    errorType: t.exposeString('errorType', { nullable: true }),
    errorMessage: t.exposeString('errorMessage', { nullable: true }),
    agent: t.field({ type: 'JSONObject', nullable: true, resolve: (r) => (r.agent as Record<string, unknown> | null) ?? null }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.queryField('routines', (t) =>
  t.prismaConnection({
    type: 'Routine', cursor: 'id', maxSize: 1000, defaultSize: 100,
    authScopes: { read: true },
    resolve: (query, _r, _a, ctx) => prisma.routine.findMany({ ...query, where: { universeId: ctx.viewer!.universe.id }, orderBy: { id: 'desc' } }),
  }),
);
builder.queryField('routine', (t) =>
  t.prismaField({ type: 'Routine', args: { id: t.arg.string({ required: true }) }, authScopes: { read: true }, resolve: (_q, _r, { id }, ctx) => findRoutine(ctx.viewer!, id) }),
);
builder.queryField('routineRuns', (t) =>
  t.prismaConnection({
    type: 'RoutineRun', cursor: 'id', maxSize: 1000, defaultSize: 100,
    args: { routineId: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (query, _r, { routineId }, ctx) => {
      const routine = await findRoutine(ctx.viewer!, routineId);
      return prisma.routineRun.findMany({ ...query, where: { routineId: routine.id }, orderBy: { id: 'desc' } });
    },
  }),
);

const mutation = (name: string, fn: (viewer: Viewer, id: string) => Promise<import('../generated/prisma/client.js').Routine>) =>
  builder.mutationField(name, (t) =>
    t.prismaField({ type: 'Routine', args: { id: t.arg.string({ required: true }) }, authScopes: { write: true }, resolve: (_q, _r, { id }, ctx) => fn(ctx.viewer!, id) }),
  );
builder.mutationField('createRoutine', (t) =>
  t.prismaField({ type: 'Routine', description: 'Body as REST POST /v1/routines', args: { input: t.arg({ type: 'JSONObject', required: true }) }, authScopes: { write: true }, resolve: (_q, _r, { input }, ctx) => createRoutine(ctx.viewer!, input) }),
);
builder.mutationField('updateRoutine', (t) =>
  t.prismaField({ type: 'Routine', args: { id: t.arg.string({ required: true }), input: t.arg({ type: 'JSONObject', required: true }) }, authScopes: { write: true }, resolve: (_q, _r, { id, input }, ctx) => patchRoutine(ctx.viewer!, id, input) }),
);
mutation('pauseRoutine', pauseRoutine);
mutation('resumeRoutine', resumeRoutine);
mutation('archiveRoutine', archiveRoutine);
builder.mutationField('runRoutine', (t) =>
  t.prismaField({
    type: 'RoutineRun', description: 'Fire the routine now (trigger manual)',
    args: { id: t.arg.string({ required: true }) }, authScopes: { write: true },
    resolve: async (_q, _r, { id }, ctx) => {
      const routine = await findRoutine(ctx.viewer!, id);
      if (routine.archivedAt) throw new AppError('conflict', 'the routine is archived');
      return fireRoutine(routine.id, { type: 'manual' });
    },
  }),
);

// ---- outbound webhook endpoints ----

const WebhookEndpointType = builder.prismaObject('WebhookEndpoint', {
  fields: (t) => ({
    id: t.exposeID('id'),
    url: t.exposeString('url'),
    events: t.exposeStringList('events'),
    status: t.exposeString('status'),
    failureCount: t.exposeInt('failureCount'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    deliveries: t.relatedConnection('deliveries', { cursor: 'id', query: () => ({ orderBy: { id: 'desc' } }), description: 'Delivery records, newest first' }),
  }),
});
builder.prismaObject('WebhookDelivery', {
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The X-Service-Delivery value, stable across retries' }),
    eventId: t.exposeString('eventId'),
    eventType: t.exposeString('eventType'),
    status: t.exposeString('status', { description: 'pending, succeeded or failed' }),
    attempts: t.exposeInt('attempts'),
    nextAttemptAt: t.expose('nextAttemptAt', { type: 'DateTime', nullable: true }),
    lastStatusCode: t.exposeInt('lastStatusCode', { nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});
const CreatedWebhookEndpoint = builder.simpleObject('CreatedWebhookEndpoint', {
  fields: (t) => ({ secret: t.string({ description: 'whsec_… shown only here' }), endpoint: t.field({ type: WebhookEndpointType }) }),
});

builder.queryField('webhookEventTypes', (t) => t.stringList({ description: 'Events an endpoint can subscribe to', resolve: () => [...WEBHOOK_EVENT_TYPES] }));
builder.queryField('webhookEndpoints', (t) =>
  t.prismaField({ type: ['WebhookEndpoint'], authScopes: { read: true }, resolve: (query, _r, _a, ctx) => prisma.webhookEndpoint.findMany({ ...query, where: { universeId: ctx.viewer!.universe.id }, orderBy: { id: 'asc' } }) }),
);
builder.queryField('webhookEndpoint', (t) =>
  t.prismaField({
    type: 'WebhookEndpoint', args: { id: t.arg.string({ required: true }) }, authScopes: { read: true },
    resolve: async (query, _r, { id }, ctx) => prisma.webhookEndpoint.findUniqueOrThrow({ ...query, where: { id: (await findEndpoint(ctx.viewer!, id)).id } }),
  }),
);
builder.mutationField('createWebhookEndpoint', (t) =>
  t.field({
    type: CreatedWebhookEndpoint,
    args: { input: t.arg({ type: 'JSONObject', required: true }) },
    authScopes: { admin: true },
    resolve: (_r, { input }, ctx) => createEndpoint(ctx.viewer!, input),
  }),
);
builder.mutationField('updateWebhookEndpoint', (t) =>
  t.prismaField({ type: 'WebhookEndpoint', args: { id: t.arg.string({ required: true }), input: t.arg({ type: 'JSONObject', required: true }) }, authScopes: { admin: true }, resolve: (_q, _r, { id, input }, ctx) => patchEndpoint(ctx.viewer!, id, input) }),
);
builder.mutationField('deleteWebhookEndpoint', (t) =>
  t.boolean({ args: { id: t.arg.string({ required: true }) }, authScopes: { admin: true }, resolve: async (_r, { id }, ctx) => { await deleteEndpoint(ctx.viewer!, id); return true; } }),
);
