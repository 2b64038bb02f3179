// Sessions: the Session type, queries, mutations, event history and the live event subscription.
// Inputs and outputs are derived from the zod schemas of src/sessions/contract.ts and
// src/events/types.ts (the same ones REST validates with and OpenAPI documents).
import { builder } from './builder.js';
import { AppError } from '../errors.js';
import { createSession, listSessions, patchSession, archiveSession, deleteSession, resolveSession } from '../sessions/sessions.js';
import { sendEvents, interruptSession, legacySend } from '../sessions/send.js';
import { eventsPage, eventsPageBody } from '../sessions/history.js';
import { sessionEventFeed } from '../sessions/feed.js';
import { sessionView } from '../sessions/view.js';
import { createSessionBody, patchSessionBody, sessionBody, interruptBody, outcomeBody, outcomePage, forkSessionBody } from '../sessions/contract.js';
import { listOutcomes, getOutcome } from '../sessions/outcomes.js';
import { forkSession } from '../sessions/fork.js';
import { sendEventsBody, legacySendBody } from '../events/content.js';
import { sessionEvent, type SessionEvent } from '../events/types.js';
import { inputOf, objectOf } from './graphql-types.js';
import { takeInput } from './input.js';
import { withinLength } from './arg-limits.js';

export const SessionType = objectOf(sessionBody);
export const SessionEventType = objectOf(sessionEvent);
const EventsPageType = objectOf(eventsPageBody);

builder.queryField('sessions', (t) =>
  t.field({
    type: [SessionType],
    description: 'Sessions of the universe, newest first',
    args: { agent: t.arg.string({ description: 'Only sessions of this agent id' }) },
    authScopes: { read: true },
    resolve: (_root, args, ctx) => listSessions(ctx.viewer!, withinLength('agent', args.agent, 128)),
  }),
);

builder.queryField('session', (t) =>
  t.field({
    type: SessionType,
    args: { id: t.arg.string({ required: true, description: 'sess_… id, or an agent id for its default session' }) },
    authScopes: { read: true },
    resolve: async (_root, { id }, ctx) => sessionView((await resolveSession(ctx.viewer!, id)).id),
  }),
);

builder.queryField('sessionEventsPage', (t) =>
  t.field({
    type: EventsPageType,
    description: 'Event history, oldest first, cursor-paged',
    args: {
      sessionId: t.arg.string({ required: true }),
      cursor: t.arg.string({ description: 'The `cursor` of the previous page' }),
      limit: t.arg.int({ defaultValue: 100, description: '1 to 1000' }),
    },
    authScopes: { read: true },
    resolve: async (_root, args, ctx) => {
      const limit = args.limit ?? 100;
      if (limit < 1 || limit > 1000) throw new AppError('invalid_request', 'limit must be between 1 and 1000');
      const session = await resolveSession(ctx.viewer!, args.sessionId);
      return eventsPage(session.id, args.cursor, limit);
    },
  }),
);

builder.mutationField('createSession', (t) =>
  t.field({
    type: SessionType,
    description: 'Create a session of an agent: provisions its sandbox; initialEvents start the first turn',
    args: { input: t.arg({ type: inputOf(createSessionBody, 'CreateSession'), required: true }) },
    authScopes: { write: true },
    resolve: async (_root, { input }, ctx) => sessionView((await createSession(ctx.viewer!, takeInput(ctx, createSessionBody, input))).id),
  }),
);

builder.mutationField('forkSession', (t) =>
  t.field({
    type: SessionType,
    description:
      "Fork a session at one of its events: a new idle session of the same agent whose history is the source's up to that event (new ids) and whose /workspace is a copy of the source's current files (not rewound); the budget is not carried over",
    args: {
      id: t.arg.string({ required: true, description: 'The source: sess_… id, or an agent id for its default session' }),
      input: t.arg({ type: inputOf(forkSessionBody, 'ForkSession'), required: true }),
    },
    authScopes: { write: true },
    resolve: async (_root, { id, input }, ctx) => sessionView((await forkSession(ctx.viewer!, id, takeInput(ctx, forkSessionBody, input))).id),
  }),
);

builder.mutationField('updateSession', (t) =>
  t.field({
    type: SessionType,
    description: "Change this session's title, metadata, model, reasoning effort, billing or budget",
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: inputOf(patchSessionBody, 'UpdateSession'), required: true }) },
    authScopes: { write: true },
    resolve: async (_root, { id, input }, ctx) => sessionView((await patchSession(ctx.viewer!, id, takeInput(ctx, patchSessionBody, input))).id),
  }),
);

builder.mutationField('archiveSession', (t) =>
  t.field({
    type: SessionType,
    description: 'Archive (terminate) an idle session; idempotent; a running session answers session_running',
    args: { id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_root, { id }, ctx) => sessionView((await archiveSession(ctx.viewer!, id)).id),
  }),
);

builder.mutationField('deleteSession', (t) =>
  t.boolean({
    description: 'Hard delete: the record, its event history and its sandbox',
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
    args: { sessionId: t.arg.string({ required: true }), input: t.arg({ type: inputOf(sendEventsBody, 'SendSessionEvents'), required: true }) },
    authScopes: { write: true },
    resolve: (_root, { sessionId, input }, ctx) => sendEvents(ctx.viewer!, sessionId, takeInput(ctx, sendEventsBody, input)),
  }),
);

builder.mutationField('sendLegacySessionMessage', (t) =>
  t.field({
    type: SessionEventType,
    description: 'Deprecated `{parts}` send, translated into one user.message',
    deprecationReason: 'Use sendSessionEvents',
    args: { sessionId: t.arg.string({ required: true }), input: t.arg({ type: inputOf(legacySendBody, 'LegacySend'), required: true }) },
    authScopes: { write: true },
    resolve: (_root, { sessionId, input }, ctx) => legacySend(ctx.viewer!, sessionId, takeInput(ctx, legacySendBody, input)),
  }),
);

builder.mutationField('interruptSession', (t) =>
  t.field({
    type: objectOf(interruptBody),
    args: { id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_root, { id }, ctx) => ({ status: await interruptSession(ctx.viewer!, id) }),
  }),
);

builder.subscriptionField('sessionEvents', (t) =>
  t.field({
    type: SessionEventType,
    description: 'Live events of a session: replays every event after `after` (an event id), then follows. user.message and system.message are history-only',
    args: { sessionId: t.arg.string({ required: true }), after: t.arg.string() },
    authScopes: { read: true },
    subscribe: (_root, args, ctx) => sessionEventFeed(ctx.viewer!, args.sessionId, args.after ?? null),
    resolve: (event: SessionEvent) => event,
  }),
);

// ---- outcomes (issue #33) ----
const OutcomeType = objectOf(outcomeBody);
const OutcomePageType = objectOf(outcomePage);

builder.queryField('sessionOutcomes', (t) =>
  t.field({
    type: OutcomePageType,
    description: "A session's outcomes, oldest first, with their evaluations",
    args: {
      sessionId: t.arg.string({ required: true }),
      limit: t.arg.int({ defaultValue: 20, description: '1 to 100' }),
      page: t.arg.string({ description: 'The `next_page` of the previous page' }),
    },
    authScopes: { read: true },
    resolve: (_root, args, ctx) => listOutcomes(ctx.viewer!, args.sessionId, args.limit ?? 20, args.page ?? null),
  }),
);

builder.queryField('sessionOutcome', (t) =>
  t.field({
    type: OutcomeType,
    args: { sessionId: t.arg.string({ required: true }), id: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: (_root, args, ctx) => getOutcome(ctx.viewer!, args.sessionId, args.id),
  }),
);
