// Sessions: the Session type, queries, mutations, event history and the live event subscription.
import { builder } from './builder.js';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { createSession, listSessions, patchSession, archiveSession, deleteSession, resolveSession } from '../sessions/sessions.js';
import { sendEvents, interruptSession, legacySend } from '../sessions/send.js';
import { eventsPage } from '../sessions/history.js';
import { followSession } from '../events/hub.js';
import { seqOf, type EventJson } from '../events/store.js';
import { mapIterator } from '../events/iterators.js';
import { REASONING_EFFORT_VALUES } from '../sessions/rules.js';
import { nanoToCents } from '../billing/money.js';
import { resourceJson } from '../resources/resources.js';

export const SessionStatusEnum = builder.enumType('SessionStatus', { values: ['provisioning', 'idle', 'running', 'terminated'] as const });
export const ModelBillingEnum = builder.enumType('ModelBilling', { values: ['platform', 'account'] as const });
export const ReasoningEffortEnum = builder.enumType('ReasoningEffort', { values: REASONING_EFFORT_VALUES });

const MonetaryAmount = builder.simpleObject('MonetaryAmount', {
  fields: (t) => ({ amount: t.string({ description: 'Whole US cents, digits only' }), currency: t.string() }),
});
const SessionBudget = builder.simpleObject('SessionBudget', {
  fields: (t) => ({
    maxListCost: t.field({ type: MonetaryAmount }),
    consumedCost: t.field({ type: MonetaryAmount }),
    reached: t.boolean(),
    reachedAt: t.field({ type: 'DateTime', nullable: true }),
  }),
});

const reload = (query: object, id: string) => prisma.session.findUniqueOrThrow({ ...query, where: { id } });

const usd = (cents: bigint) => ({ amount: cents.toString(), currency: 'USD' });

export const SessionType = builder.prismaObject('Session', {
  fields: (t) => ({
    id: t.exposeID('id'),
    agentId: t.exposeString('agentId', { nullable: true }),
    title: t.exposeString('title', { nullable: true }),
    status: t.field({ type: SessionStatusEnum, resolve: (s) => s.status as never }),
    agentType: t.exposeString('agentType'),
    llm: t.exposeString('llm'),
    reasoningEffort: t.string({
      nullable: true,
      description: "Effective: the session's own setting, else the agent's, else null",
      select: { agent: { select: { reasoningEffort: true } } },
      resolve: (s) => s.reasoningEffort ?? s.agent?.reasoningEffort ?? null,
    }),
    modelBilling: t.field({ type: ModelBillingEnum, resolve: (s) => s.modelBilling as never }),
    default: t.exposeBoolean('isDefault'),
    metadata: t.field({ type: 'JSONObject', resolve: (s) => s.metadata as Record<string, unknown> }),
    budget: t.field({
      type: SessionBudget,
      nullable: true,
      resolve: (s) => s.budgetMaxCents === null ? null : {
        maxListCost: usd(s.budgetMaxCents),
        consumedCost: usd(nanoToCents(s.consumedNanoUsd)),
        reached: s.budgetReachedAt !== null,
        reachedAt: s.budgetReachedAt,
      },
    }),
    resources: t.field({
      type: ['JSONObject'],
      description: 'Session resources, oldest first',
      resolve: async (s) => (await prisma.sessionResource.findMany({ where: { sessionId: s.id }, orderBy: { id: 'asc' } })).map(resourceJson),
    }),
    vcpus: t.exposeInt('vcpus', { nullable: true }),
    memoryMb: t.exposeInt('memoryMb', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

export const SessionEventType = builder.simpleObject('SessionEvent', {
  description: 'A session event; `payload` is the whole event exactly as the REST history and stream show it',
  fields: (t) => ({
    id: t.string(),
    type: t.string(),
    sessionId: t.string(),
    agentId: t.string({ nullable: true }),
    at: t.string(),
    payload: t.field({ type: 'JSONObject' }),
  }),
});
const asGraphEvent = (e: EventJson) => ({ id: e.id, type: e.type, sessionId: e.sessionId, agentId: e.agentId, at: e.at, payload: e });

const EventsPageType = builder.simpleObject('SessionEventsPage', {
  fields: (t) => ({
    events: t.field({ type: [SessionEventType] }),
    cursor: t.string({ nullable: true }),
    hasMore: t.boolean(),
  }),
});

builder.queryField('sessions', (t) =>
  t.prismaField({
    type: ['Session'],
    args: { agent: t.arg.string({ description: 'Only sessions of this agent id' }) },
    authScopes: { read: true },
    resolve: async (query, _root, args, ctx) => listSessions(ctx.viewer!, args.agent, query),
  }),
);

builder.queryField('session', (t) =>
  t.prismaField({
    type: 'Session',
    args: { id: t.arg.string({ required: true, description: 'sess_… id, or an agent id for its default session' }) },
    authScopes: { read: true },
    resolve: async (query, _root, { id }, ctx) => reload(query, (await resolveSession(ctx.viewer!, id)).id),
  }),
);

builder.queryField('sessionEventsPage', (t) =>
  t.field({
    type: EventsPageType,
    args: {
      sessionId: t.arg.string({ required: true }),
      cursor: t.arg.string(),
      limit: t.arg.int({ defaultValue: 100 }),
    },
    authScopes: { read: true },
    resolve: async (_root, args, ctx) => {
      const limit = args.limit ?? 100;
      if (limit < 1 || limit > 1000) throw new AppError('invalid_request', 'limit must be between 1 and 1000');
      const session = await resolveSession(ctx.viewer!, args.sessionId);
      const page = await eventsPage(session.id, args.cursor, limit);
      return { ...page, events: page.events.map(asGraphEvent) };
    },
  }),
);

builder.mutationField('createSession', (t) =>
  t.prismaField({
    type: 'Session',
    description: 'Body as the REST POST /v1/sessions (snake_case keys where the spec has them)',
    args: { input: t.arg({ type: 'JSONObject', required: true }) },
    authScopes: { write: true },
    resolve: async (query, _root, { input }, ctx) => reload(query, (await createSession(ctx.viewer!, input)).id),
  }),
);

builder.mutationField('updateSession', (t) =>
  t.prismaField({
    type: 'Session',
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: 'JSONObject', required: true }) },
    authScopes: { write: true },
    resolve: async (query, _root, { id, input }, ctx) => reload(query, (await patchSession(ctx.viewer!, id, input)).id),
  }),
);

builder.mutationField('archiveSession', (t) =>
  t.prismaField({
    type: 'Session',
    args: { id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (query, _root, { id }, ctx) => reload(query, (await archiveSession(ctx.viewer!, id)).id),
  }),
);

builder.mutationField('deleteSession', (t) =>
  t.boolean({
    args: { id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_root, { id }, ctx) => {
      await deleteSession(ctx.viewer!, id);
      return true;
    },
  }),
);

builder.mutationField('sendSessionEvents', (t) =>
  t.field({
    type: [SessionEventType],
    description: 'Send events (user.message, system.message, user.interrupt); answers one echo per event',
    args: { sessionId: t.arg.string({ required: true }), events: t.arg({ type: ['JSONObject'], required: true }) },
    authScopes: { write: true },
    resolve: async (_root, { sessionId, events }, ctx) => (await sendEvents(ctx.viewer!, sessionId, { events })).map(asGraphEvent),
  }),
);

builder.mutationField('sendLegacySessionMessage', (t) =>
  t.field({
    type: SessionEventType,
    description: 'Deprecated `{parts}` send, translated into one user.message',
    deprecationReason: 'Use sendSessionEvents',
    args: { sessionId: t.arg.string({ required: true }), parts: t.arg({ type: ['JSONObject'], required: true }) },
    authScopes: { write: true },
    resolve: async (_root, { sessionId, parts }, ctx) => asGraphEvent(await legacySend(ctx.viewer!, sessionId, { parts })),
  }),
);

const InterruptStatusEnum = builder.enumType('InterruptStatus', { values: ['interrupting', 'no_turn'] as const });
const InterruptResult = builder.simpleObject('InterruptResult', { fields: (t) => ({ status: t.field({ type: InterruptStatusEnum }) }) });

builder.mutationField('interruptSession', (t) =>
  t.field({
    type: InterruptResult,
    args: { id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_root, { id }, ctx) => ({ status: await interruptSession(ctx.viewer!, id) }),
  }),
);

const HISTORY_ONLY = new Set(['user.message', 'system.message']);

builder.subscriptionField('sessionEvents', (t) =>
  t.field({
    type: SessionEventType,
    description: 'Live events of a session: replays every event after `after` (an event id), then follows. user.message and system.message are history-only',
    args: { sessionId: t.arg.string({ required: true }), after: t.arg.string() },
    authScopes: { read: true },
    subscribe: async (_root, args, ctx) => {
      const session = await resolveSession(ctx.viewer!, args.sessionId);
      let afterSeq = 0;
      if (args.after) {
        const seq = await seqOf(session.id, args.after);
        if (seq === null) throw new AppError('invalid_request', 'unknown event id in `after`');
        afterSeq = seq;
      }
      return mapIterator(followSession(session.id, afterSeq), ({ event }) =>
        HISTORY_ONLY.has(event.type) ? null : { value: event, last: event.type === 'session.deleted' },
      );
    },
    resolve: (event: EventJson) => asGraphEvent(event),
  }),
);
