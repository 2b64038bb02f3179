// Multiagent (issue #32): a session's threads, one thread's history and its live events.
// Types derived from src/sessions/threads.ts and the event union (src/events/types.ts).
import { builder } from './builder.js';
import { AppError } from '../errors.js';
import { getThread, listThreads, threadBody, threadEventFeed, threadEventsPage } from '../sessions/threads.js';
import { eventsPageBody } from '../sessions/history.js';
import type { SessionEvent } from '../events/types.js';
import { objectOf } from './graphql-types.js';
import { SessionEventType } from './sessions.js';

const ThreadType = objectOf(threadBody);
const EventsPageType = objectOf(eventsPageBody);

builder.queryField('sessionThreads', (t) =>
  t.field({
    type: [ThreadType],
    description: "A coordinator session's threads, oldest first",
    args: { sessionId: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: (_root, args, ctx) => listThreads(ctx.viewer!, args.sessionId),
  }),
);

builder.queryField('sessionThread', (t) =>
  t.field({
    type: ThreadType,
    args: { sessionId: t.arg.string({ required: true }), threadId: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: (_root, args, ctx) => getThread(ctx.viewer!, args.sessionId, args.threadId),
  }),
);

builder.queryField('threadEventsPage', (t) =>
  t.field({
    type: EventsPageType,
    description: "A thread's event history, oldest first, cursor-paged (as a session's)",
    args: {
      sessionId: t.arg.string({ required: true }),
      threadId: t.arg.string({ required: true }),
      cursor: t.arg.string({ description: 'The `cursor` of the previous page' }),
      limit: t.arg.int({ defaultValue: 100, description: '1 to 1000' }),
    },
    authScopes: { read: true },
    resolve: (_root, args, ctx) => {
      const limit = args.limit ?? 100;
      if (limit < 1 || limit > 1000) throw new AppError('invalid_request', 'limit must be between 1 and 1000');
      return threadEventsPage(ctx.viewer!, args.sessionId, args.threadId, args.cursor, limit);
    },
  }),
);

builder.subscriptionField('threadEvents', (t) =>
  t.field({
    type: SessionEventType,
    description: 'Live events of one thread: replays every event after `after` (an event id), then follows (as sessionEvents)',
    args: { sessionId: t.arg.string({ required: true }), threadId: t.arg.string({ required: true }), after: t.arg.string() },
    authScopes: { read: true },
    subscribe: (_root, args, ctx) => threadEventFeed(ctx.viewer!, args.sessionId, args.threadId, args.after ?? null),
    resolve: (event: SessionEvent) => event,
  }),
);
