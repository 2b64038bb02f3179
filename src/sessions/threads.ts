// Multiagent (issue #32): a session's threads as clients read them. A thread is a hidden child
// session (src/runtime/threads.ts): its history and live feed are a session's (history.ts,
// feed.ts), reached only through its session's `/threads`.
import { z } from 'zod';
import type { Viewer } from '../auth/viewer.js';
import { dateTime } from '../contract/zod-walk.js';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { followSession } from '../events/hub.js';
import { mapIterator } from '../events/iterators.js';
import { seqOf } from '../events/store.js';
import { HISTORY_ONLY_TYPES, threadAgent, type SessionEvent } from '../events/types.js';
import type { Session } from '../generated/prisma/client.js';
import { rosterOf } from '../runtime/threads.js';
import { sessionStatus } from './contract.js';
import { eventsPage, type EventsPage } from './history.js';
import { resolveSession } from './sessions.js';

export const threadBody = z
  .strictObject({
    id: z.string().describe('sthr_<id>'),
    sessionId: z.string().describe('the session whose coordinator started it'),
    agent: threadAgent,
    status: sessionStatus.describe('idle, running, or terminated with its session'),
    agentType: z.string(),
    llm: z.string(),
    turns: z.int32().min(0).describe('turns the thread has run'),
    createdAt: dateTime(z.string()),
  })
  .meta({ id: 'Thread', description: "A coordinator's thread: one roster agent's own conversation in the session's sandbox" });
export type ThreadView = z.output<typeof threadBody>;
export const threadAnswer = z.strictObject({ thread: threadBody }).meta({ id: 'ThreadAnswer' });
export const threadList = z.strictObject({ threads: z.array(threadBody).describe('Oldest first') }).meta({ id: 'ThreadList' });

function view(session: Pick<Session, 'roster' | 'parentSessionId'>, t: Session): ThreadView {
  const member = rosterOf(session).find((m) => m.name === t.threadAgentName);
  return {
    id: t.id,
    sessionId: t.parentSessionId!,
    agent: { id: t.agentId ?? '', name: t.threadAgentName ?? '', version: member?.version ?? 1 },
    status: t.status as ThreadView['status'],
    agentType: t.agentType,
    llm: t.llm,
    turns: t.turnCount,
    createdAt: t.createdAt.toISOString(),
  };
}

export async function listThreads(viewer: Viewer, sessionRef: string): Promise<ThreadView[]> {
  const session = await resolveSession(viewer, sessionRef);
  const rows = await prisma.session.findMany({ where: { parentSessionId: session.id }, orderBy: { id: 'asc' } });
  return rows.map((t) => view(session, t));
}

async function resolveThread(viewer: Viewer, sessionRef: string, threadId: string): Promise<{ session: Session; thread: Session }> {
  const session = await resolveSession(viewer, sessionRef);
  const thread = await prisma.session.findFirst({ where: { id: threadId, parentSessionId: session.id } });
  if (!thread) throw new AppError('not_found', 'thread not found');
  return { session, thread };
}

export async function getThread(viewer: Viewer, sessionRef: string, threadId: string): Promise<ThreadView> {
  const { session, thread } = await resolveThread(viewer, sessionRef, threadId);
  return view(session, thread);
}

export async function threadEventsPage(
  viewer: Viewer,
  sessionRef: string,
  threadId: string,
  cursor: string | null | undefined,
  limit: number,
): Promise<EventsPage> {
  const { thread } = await resolveThread(viewer, sessionRef, threadId);
  return eventsPage(thread.id, cursor, limit);
}

/** A thread's live feed: as a session's (replay after an event id, then follow). */
export async function threadEventFeed(
  viewer: Viewer,
  sessionRef: string,
  threadId: string,
  after: string | null,
): Promise<AsyncIterableIterator<SessionEvent>> {
  const { thread } = await resolveThread(viewer, sessionRef, threadId);
  let afterSeq = 0;
  if (after) {
    const seq = await seqOf(thread.id, after);
    if (seq === null) throw new AppError('invalid_request', 'unknown event id in `after`');
    afterSeq = seq;
  }
  return mapIterator(followSession(thread.id, afterSeq), ({ event }) =>
    HISTORY_ONLY_TYPES.has(event.type) ? null : { value: event, last: event.type === 'session.deleted' },
  );
}
