// Multiagent (issue #32): a coordinator's threads. A thread is a hidden child session (`sthr_`
// id, `parentSessionId` = the coordinator's session) running one roster agent: its own events,
// history, SSE feed and turns come from the ordinary session machinery (the runner, the turn
// queue, recovery, interrupts), while it works in its session's sandbox and spends its session's
// budget (src/gateway/metering.ts). What a thread does is summarised on the session's own stream
// (`thread.started`, `thread.message`, `thread.idle`).
import { settings } from '../config.js';
import { prisma } from '../db/client.js';
import { commitEvent, commitEvents } from '../events/store.js';
import type { EventFields, StopReason } from '../events/types.js';
import type { Session } from '../generated/prisma/client.js';
import { newId } from '../ids.js';
import { logger } from '../logger.js';
import { enqueueSessionRun } from './queue.js';
import { publishInterrupt } from './runner-signals.js';
import { Prisma } from '../generated/prisma/client.js';
import type { NewEvent, StoredEvent } from '../events/types.js';
import { service } from '../services/registry.js';

/**
 * The runner's one-statement send-and-start (`storeInputsAndStartTurn`, src/runtime/runner.ts),
 * installed by the composition: the runner imports this module (its hooks), so not the reverse.
 */
export type StartTurnAtOnce = (sessionId: string, inputs: NewEvent[], gate: { universeId: string } | null) => Promise<StoredEvent[] | null>;

declare module '../services/registry.js' {
  interface Services {
    startTurnAtOnce: StartTurnAtOnce;
  }
}

/** One roster agent as its session snapshotted it (src/agents/roster.ts writes it). */
export interface RosterMember {
  name: string;
  agentId: string;
  self: boolean;
  version: number;
  agentType: string;
  llm: string;
  reasoningEffort: string | null;
  promptVersion: number | null;
}

export const THREAD_PREFIX = 'sthr_';
export const isThreadId = (id: string) => id.startsWith(THREAD_PREFIX);

/** The roster snapshot of a session (empty when it is no coordinator, or is itself a thread). */
export function rosterOf(session: Pick<Session, 'roster' | 'parentSessionId'>): RosterMember[] {
  if (session.parentSessionId || !Array.isArray(session.roster)) return [];
  return session.roster as unknown as RosterMember[];
}

type ThreadAgent = EventFields<'thread.started'>['agent'];

function agentOf(roster: RosterMember[], thread: Pick<Session, 'agentId' | 'threadAgentName'>): ThreadAgent {
  const m = roster.find((r) => r.name === thread.threadAgentName);
  return { id: thread.agentId ?? m?.agentId ?? '', name: thread.threadAgentName ?? '', version: m?.version ?? 1 };
}

// ---- waking waiters: a thread's turn ended (in this process at once; others are polled) ----

const wakers = new Map<string, Set<() => void>>();

function wake(parentId: string): void {
  for (const w of wakers.get(parentId) ?? []) w();
}

/** Resolves at the next thread change of the session seen here, after `ms`, or when `signal` aborts. */
function nextChange(parentId: string, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    let set = wakers.get(parentId);
    if (!set) wakers.set(parentId, (set = new Set()));
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      set!.delete(done);
      if (!set!.size) wakers.delete(parentId);
      resolve();
    };
    const timer = setTimeout(done, ms);
    set.add(done);
    signal.addEventListener('abort', done, { once: true });
  });
}

// ---- the per-session cap on threads running at once (THREADS_PER_SESSION) ----

interface Gate {
  active: number;
  queue: (() => void)[];
}
const gates = new Map<string, Gate>();

/** A slot at once, or false (nothing taken). */
function tryAcquire(parentId: string): boolean {
  let gate = gates.get(parentId);
  if (!gate) gates.set(parentId, (gate = { active: 0, queue: [] }));
  if (gate.active >= settings.threadsPerSession()) return false;
  gate.active++;
  return true;
}

async function acquire(parentId: string, signal: AbortSignal): Promise<boolean> {
  let gate = gates.get(parentId);
  if (!gate) gates.set(parentId, (gate = { active: 0, queue: [] }));
  if (gate.active < settings.threadsPerSession()) {
    gate.active++;
    return true;
  }
  const g = gate;
  return new Promise<boolean>((resolve) => {
    const go = () => {
      signal.removeEventListener('abort', cancel);
      g.active++;
      resolve(true);
    };
    const cancel = () => {
      g.queue = g.queue.filter((q) => q !== go);
      resolve(false);
    };
    g.queue.push(go);
    signal.addEventListener('abort', cancel, { once: true });
  });
}

function release(parentId: string): void {
  const gate = gates.get(parentId);
  if (!gate) return;
  gate.active--;
  const next = gate.queue.shift();
  if (next) next();
  else if (gate.active <= 0) gates.delete(parentId);
}

// ---- starting and messaging threads ----

export class ThreadRefusal extends Error {}

/** A delivered message: the thread and the user.message event its next turn takes. */
export interface SentMessage {
  threadId: string;
  eventId: string;
}

/**
 * Starts a thread of roster member `name` in the coordinator's session with a first message; its
 * turn is queued (at most THREADS_PER_SESSION of the session's threads run at once).
 */
export async function startThread(parent: Session, name: string, message: string, signal: AbortSignal): Promise<SentMessage> {
  const roster = rosterOf(parent);
  const member = roster.find((m) => m.name === name);
  if (!member) throw new ThreadRefusal(`no roster agent named ${JSON.stringify(name)}; the roster: ${roster.map((m) => m.name).join(', ')}`);
  const id = newId('sthr');
  await prisma.session.create({
    data: {
      id,
      universeId: parent.universeId,
      agentId: member.agentId,
      status: 'idle',
      agentType: member.agentType,
      llm: member.llm,
      reasoningEffort: member.reasoningEffort,
      modelBilling: parent.modelBilling,
      promptVersion: member.promptVersion,
      instructions: member.self ? (parent.instructions as object) : [],
      vaultIds: parent.vaultIds,
      environmentId: parent.environmentId,
      installedSkills: member.self ? (parent.installedSkills as object) : [],
      parentSessionId: parent.id,
      threadAgentName: member.name,
    },
  });
  await commitEvent(parent.id, {
    type: 'thread.started',
    fields: { thread_id: id, agent: { id: member.agentId, name: member.name, version: member.version } },
  });
  return sendToThread(parent, id, message, signal, true);
}

/** A follow-up to a thread of this session (it keeps its own conversation); queued when it runs. */
export async function sendToThread(parent: Session, threadId: string, message: string, signal: AbortSignal, fresh = false): Promise<SentMessage> {
  if (!fresh) {
    const thread = await prisma.session.findFirst({ where: { id: threadId, parentSessionId: parent.id }, select: { id: true, status: true } });
    if (!thread) throw new ThreadRefusal(`no thread ${threadId} in this session`);
    if (thread.status === 'terminated') throw new ThreadRefusal(`the thread ${threadId} is archived`);
  }
  const input: NewEvent = { type: 'user.message', fields: { content: [{ type: 'text', text: message }] } };
  // Fast path: a slot free and this process runs turns: the message is stored and the thread's
  // turn claimed in ONE statement and run here (as a send to an idle session is).
  if (tryAcquire(parent.id) && service('turnQueue').runsTurnsHere) {
    const atOnce = await service('startTurnAtOnce')(threadId, [input], null).catch((err: unknown) => {
      release(parent.id);
      throw err;
    });
    if (atOnce) {
      const sent = { threadId, eventId: atOnce[0]!.event.id };
      void holdSlot(parent.id, sent, false);
      return sent;
    }
    release(parent.id);
  }
  const [stored] = await commitEvents(threadId, [input]);
  const sent = { threadId, eventId: stored!.event.id };
  void holdSlot(parent.id, sent, true, signal);
  return sent;
}

/**
 * Holds a slot of the session's cap for `sent`'s turn until it ends; `dispatch`: first waits for
 * a slot and queues the thread's run.
 */
async function holdSlot(parentId: string, sent: SentMessage, dispatch: boolean, signal?: AbortSignal): Promise<void> {
  const threadId = sent.threadId;
  const eventId = sent.eventId;
  const parent = { id: parentId };
  await (async () => {
    if (dispatch && !(await acquire(parent.id, signal!))) return; // the coordinator's turn ended first: the input waits
    try {
      if (dispatch) await enqueueSessionRun(threadId);
      await outcomeOf(parent.id, { threadId, eventId }, AbortSignal.timeout(24 * 3600_000));
    } finally {
      release(parent.id);
    }
  })().catch((err) => logger.warn({ err, threadId }, 'thread dispatch failed'));
}

// ---- waiting for replies ----

export interface ThreadOutcome {
  thread_id: string;
  agent: string;
  status: 'replied' | 'failed' | 'interrupted' | 'budget_reached';
  reply: string | null;
  error?: { type: string; message: string };
}

/** The outcome of the turn that took `sent`'s message, or null while it has not ended. */
async function settled(sent: SentMessage): Promise<ThreadOutcome | null> {
  const [thread, msg] = await Promise.all([
    prisma.session.findUnique({ where: { id: sent.threadId }, select: { status: true, turnCount: true, threadAgentName: true } }),
    prisma.sessionEvent.findUnique({ where: { id: sent.eventId }, select: { turn: true } }),
  ]);
  if (!thread || !msg)
    return {
      thread_id: sent.threadId,
      agent: thread?.threadAgentName ?? '',
      status: 'failed',
      reply: null,
      error: { type: 'thread_gone', message: 'the thread was deleted' },
    };
  const turn = msg.turn;
  if (turn === null || (thread.status === 'running' && thread.turnCount <= turn)) return null;
  const events = await prisma.sessionEvent.findMany({
    where: { sessionId: sent.threadId, turn },
    orderBy: { seq: 'asc' },
    select: { seq: true, type: true, payload: true },
  });
  const lastSeq = events.length ? events[events.length - 1]!.seq : 0;
  const idle = await prisma.sessionEvent.findFirst({
    where: { sessionId: sent.threadId, type: 'session.status_idle', seq: { gt: lastSeq } },
    orderBy: { seq: 'asc' },
    select: { payload: true },
  });
  if (!idle) return null; // the turn's end is being stored
  const stop = (idle.payload as { stop_reason: StopReason }).stop_reason;
  return outcomeFrom(sent.threadId, thread.threadAgentName ?? '', events, stop);
}

type Row = { type: string; payload: unknown };

function lastReply(events: Row[]): string | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const p = events[i]!.payload as { final?: boolean; text?: string };
    if (events[i]!.type === 'agent.message' && p.final !== false) return p.text ?? '';
  }
  return null;
}

function lastError(events: Row[]): { type: string; message: string } | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const p = events[i]!.payload as { error?: { type: string; message: string; retry_status: string } };
    if (events[i]!.type === 'session.error' && p.error?.retry_status === 'exhausted') return { type: p.error.type, message: p.error.message };
  }
  return null;
}

function outcomeFrom(threadId: string, agent: string, events: Row[], stop: StopReason): ThreadOutcome {
  const reply = lastReply(events);
  const error = lastError(events);
  const interrupted = events.some((e) => e.type === 'user.interrupt');
  if (stop.type === 'budget_reached')
    return { thread_id: threadId, agent, status: 'budget_reached', reply, error: { type: 'budget_reached', message: "the session's budget is reached" } };
  if (stop.type === 'retries_exhausted' || (error && reply === null))
    return { thread_id: threadId, agent, status: 'failed', reply, error: error ?? { type: 'engine_error', message: 'the thread failed' } };
  if (interrupted && stop.type === 'end_turn') return { thread_id: threadId, agent, status: 'interrupted', reply };
  return { thread_id: threadId, agent, status: 'replied', reply };
}

const POLL_MS = 500;

/** Waits for the turn that takes `sent`'s message to end (null when `signal` aborted first). */
export async function outcomeOf(parentId: string, sent: SentMessage, signal: AbortSignal): Promise<ThreadOutcome | null> {
  for (;;) {
    if (signal.aborted) return null;
    const change = nextChange(parentId, POLL_MS, signal); // registered before the read: no change missed
    const outcome = await settled(sent);
    if (outcome) return outcome;
    await change;
  }
}

// ---- the runner's hooks: a thread's turn ended ----

/**
 * After a thread's turn (its session.status_idle stored): the session's stream gets the
 * specialist's final reply (`thread.message`) and `thread.idle`; a thread stopped by the budget
 * interrupts every other running thread of the session. Never throws.
 */
export async function threadTurnEnded(threadId: string, turn: number, stop: StopReason): Promise<void> {
  try {
    const thread = await prisma.session.findUnique({ where: { id: threadId }, select: { parentSessionId: true, agentId: true, threadAgentName: true } });
    if (!thread?.parentSessionId) return;
    const parent = await prisma.session.findUnique({ where: { id: thread.parentSessionId }, select: { roster: true, parentSessionId: true } });
    if (!parent) return;
    const agent = agentOf(rosterOf(parent), thread);
    const events = await prisma.sessionEvent.findMany({ where: { sessionId: threadId, turn }, orderBy: { seq: 'asc' }, select: { type: true, payload: true } });
    const reply = lastReply(events);
    const error = lastError(events);
    await commitEvents(thread.parentSessionId, [
      ...(reply !== null ? [{ type: 'thread.message' as const, fields: { thread_id: threadId, agent, text: reply } }] : []),
      {
        type: 'thread.idle',
        fields: { thread_id: threadId, agent, stop_reason: stop, ...(error ? { error: { ...error, retry_status: 'exhausted' as const } } : {}) },
      },
    ]);
    if (stop.type === 'budget_reached') await interruptThreads(thread.parentSessionId, 'budget_reached', threadId);
    wake(thread.parentSessionId);
  } catch (err) {
    logger.warn({ err, threadId }, 'could not report the end of a thread turn');
  }
}

/** Interrupts every running thread of a session (its interrupt, its budget, its archive). */
export async function interruptThreads(sessionId: string, by: string, except?: string): Promise<number> {
  const running = await prisma.session.findMany({
    where: { parentSessionId: sessionId, status: 'running', ...(except ? { NOT: { id: except } } : {}) },
    select: { id: true },
  });
  for (const t of running) {
    await commitEvent(t.id, { type: 'user.interrupt', fields: { by } }).catch(() => undefined);
    await publishInterrupt(t.id, by);
  }
  return running.length;
}
