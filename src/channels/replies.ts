// Posting a session's answer back into the thread a message came from. Each routed message
// leaves a pending reply; a follower reads the session's events after that message: the first
// session.status_running after it starts the turn that took it, the last complete agent.message
// before the next session.status_idle is the answer. Several messages taken by one turn get one
// post per thread (a unique (session, connection, thread, turn) claim), also across processes.
import { settings } from '../config.js';
import { Prisma, type ChannelReply } from '../generated/prisma/client.js';
import { prisma } from '../db/client.js';
import { logger } from '../logger.js';
import { followSession } from '../events/hub.js';
import type { SessionEvent } from '../events/types.js';
import { connectionInclude } from './connections.js';
import { postToThread } from './posting.js';
import { closeMarker } from './markers.js';

const REPLY_WAIT_MS = settings.channelReplyWaitMs();
/** Tries of a reply's post when the platform cannot take it now (429, 5xx, no answer). */
const POST_ATTEMPTS = 4;
/**
 * A reply `posting` without a sign of life for this long was being posted by a process that
 * stopped: it is posted again (at least once: the platform may have taken the first try).
 */
const POSTING_LEASE_MS = settings.channelPostingLeaseMs();

const following = new Map<string, () => void>();

type AgentMessage = Extract<SessionEvent, { type: 'agent.message' }>;
type StopReason = Extract<SessionEvent, { type: 'session.status_idle' }>['stop_reason'];

export function watchReply(reply: ChannelReply): void {
  if (following.has(reply.id)) return;
  const it = followSession(reply.sessionId, reply.inputSeq);
  const timer = setTimeout(() => void it.return?.(), Math.max(1000, reply.createdAt.getTime() + REPLY_WAIT_MS - Date.now()));
  timer.unref();
  following.set(reply.id, () => void it.return?.());
  void (async () => {
    let turnSeq: number | null = null;
    let answer: AgentMessage | null = null;
    let failure: string | null = null;
    for (;;) {
      const next = await it.next();
      if (next.done) return; // stopped, or waited too long (the row stays pending for recovery)
      const { seq, event } = next.value;
      if (event.type === 'session.deleted') return void (await finish(reply.id, 'failed', 'the session was deleted'));
      if (turnSeq === null) {
        if (event.type === 'session.status_running') turnSeq = seq;
        continue;
      }
      if (event.type === 'agent.message' && event.final !== false) answer = event;
      else if (event.type === 'session.error' && event.error.retry_status === 'exhausted') failure = event.error.message;
      else if (event.type === 'session.status_idle') return void (await settle(reply, turnSeq, answer, failure, event.stop_reason));
    }
  })()
    .catch((err) => logger.error({ err, replyId: reply.id }, 'channel reply failed'))
    .finally(() => {
      clearTimeout(timer);
      following.delete(reply.id);
      void it.return?.();
    });
}

async function finish(id: string, status: 'posted' | 'failed' | 'merged', error: string | null = null): Promise<void> {
  await prisma.channelReply.updateMany({ where: { id }, data: { status, error } });
}

function replyText(answer: AgentMessage | null, failure: string | null, stop: StopReason): string | null {
  if (answer?.text.trim()) return answer.text;
  if (stop.type === 'budget_reached') return 'This conversation reached its spending limit before the agent could answer.';
  // The session's error says what failed; the end user gets a plain notice, not internals.
  if (failure) return 'Sorry, the agent could not answer this time. Please try again in a moment.';
  return null; // an interrupted turn with nothing said: nothing to post
}

async function settle(reply: ChannelReply, turnSeq: number, answer: AgentMessage | null, failure: string | null, stop: StopReason): Promise<void> {
  try {
    const claimed = await prisma.channelReply.updateMany({ where: { id: reply.id, status: 'pending' }, data: { status: 'posting', turnSeq } });
    if (claimed.count !== 1) return; // another process settled it
  } catch (err) {
    // This turn's answer is already posted to this thread for an earlier message.
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') return void (await finish(reply.id, 'merged'));
    throw err;
  }
  const conn = await prisma.channelConnection.findUnique({ where: { id: reply.connectionId }, include: connectionInclude });
  if (!conn || conn.status !== 'CONNECTED') return void (await finish(reply.id, 'failed', 'the connection is no longer connected'));
  const text = replyText(answer, failure, stop);
  try {
    // A transient refusal is tried again; each try renews the row's lease (updatedAt).
    const touch = () => prisma.channelReply.updateMany({ where: { id: reply.id, status: 'posting' }, data: { updatedAt: new Date() } });
    if (text)
      await postToThread(
        conn,
        reply.threadId,
        { text, markdown: true },
        { replyTo: reply.replyTo, context: reply.context as Record<string, string> },
        { attempts: POST_ATTEMPTS, beforeRetry: touch },
      );
    await finish(reply.id, 'posted');
  } catch (err) {
    logger.warn({ err: (err as Error).message, replyId: reply.id }, 'the platform refused the reply');
    await finish(reply.id, 'failed', (err as Error).message);
  } finally {
    await closeMarker(conn.id, reply.threadId);
  }
}

/**
 * Replies whose post a stopped process left half done (`posting`, its lease run out) are owed
 * again: back to pending, then followed (the answer is found again in the stored events).
 */
export async function requeueStalledReplies(): Promise<string[]> {
  const stalled = await prisma.channelReply.findMany({
    where: { status: 'posting', updatedAt: { lt: new Date(Date.now() - POSTING_LEASE_MS) } },
    take: 1000,
    select: { id: true, updatedAt: true },
  });
  const owed: string[] = [];
  for (const row of stalled) {
    const back = await prisma.channelReply.updateMany({ where: { id: row.id, status: 'posting', updatedAt: row.updatedAt }, data: { status: 'pending' } });
    if (back.count !== 1) continue; // another process took it meanwhile
    const reply = await prisma.channelReply.findUnique({ where: { id: row.id } });
    if (!reply) continue;
    logger.warn({ replyId: reply.id }, 'a reply left half posted by a stopped process is posted again');
    watchReply(reply);
    owed.push(reply.id);
  }
  return owed;
}

/** After a restart: follow every reply still pending (their events replay from the store). */
export async function resumePendingReplies(): Promise<number> {
  await requeueStalledReplies();
  const cutoff = new Date(Date.now() - REPLY_WAIT_MS);
  const pending = await prisma.channelReply.findMany({ where: { status: 'pending', createdAt: { gt: cutoff } }, orderBy: { createdAt: 'asc' }, take: 1000 });
  for (const reply of pending) watchReply(reply);
  await prisma.channelReply.updateMany({ where: { status: 'pending', createdAt: { lte: cutoff } }, data: { status: 'failed', error: 'no answer in time' } });
  return pending.length;
}

export function stopReplies(): void {
  for (const stop of [...following.values()]) stop();
}
