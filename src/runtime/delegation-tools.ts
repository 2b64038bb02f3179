// Multiagent (issue #32): the coordinator's delegation tools, beside its other tools. hermes gets
// them natively (src/engines/hermes/engine.ts); the CLI engines through the MCP relay. Each call
// is one of: start a thread of a roster agent with a message, send a thread a follow-up, wait
// for one or several threads' replies (the coordinator's turn stays running meanwhile; an
// interrupt ends the wait).
import { prisma } from '../db/client.js';
import type { ToolSpec } from '../gateway/types.js';
import type { Session } from '../generated/prisma/client.js';
import type { Toolbox, ToolCall, ToolOutcome } from '../tools/types.js';
import {
  isThreadId as isThreadSession,
  outcomeOf,
  rosterOf,
  sendToThread,
  startThread,
  ThreadRefusal,
  type SentMessage,
  type ThreadOutcome,
} from './threads.js';

export const DELEGATION_TOOL_NAMES = ['delegate', 'message_thread', 'wait_threads'] as const;

export function delegationSpecs(session: Session): ToolSpec[] {
  const roster = rosterOf(session);
  if (!roster.length) return [];
  const names = roster.map((m) => m.name);
  return [
    {
      name: 'delegate',
      description: `Start a new thread with one of your specialist agents (${names.join(', ')}) and send it a task. It works in parallel in the same sandbox, with its own conversation. Returns the thread_id at once; use wait_threads for the reply.`,
      inputSchema: {
        type: 'object',
        properties: {
          agent: { type: 'string', enum: names, description: 'the roster name of the agent' },
          message: { type: 'string', description: 'the task, self-contained' },
        },
        required: ['agent', 'message'],
      },
    },
    {
      name: 'message_thread',
      description: 'Send a follow-up message to a thread you started (it remembers its earlier turns). Returns at once; use wait_threads for the reply.',
      inputSchema: {
        type: 'object',
        properties: { thread_id: { type: 'string' }, message: { type: 'string' } },
        required: ['thread_id', 'message'],
      },
    },
    {
      name: 'wait_threads',
      description:
        "Wait until each given thread has answered your last message to it (omit thread_ids: every thread you messaged in this turn); returns each thread's final reply or its failure.",
      inputSchema: {
        type: 'object',
        properties: { thread_ids: { type: 'array', items: { type: 'string' } } },
      },
    },
  ];
}

const isDelegation = (name: string) => (DELEGATION_TOOL_NAMES as readonly string[]).includes(name);
const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v : null);

/** What one coordinator turn has sent each thread: the message its reply answers. */
export interface DelegationState {
  last: Map<string, SentMessage>;
}

export const newDelegationState = (): DelegationState => ({ last: new Map() });

/** Runs one delegation call for `session` (a coordinator's). */
export async function runDelegationTool(session: Session, state: DelegationState, call: ToolCall, signal: AbortSignal): Promise<ToolOutcome> {
  const fail = (error: string): ToolOutcome => ({ status: 'error', result: { error } });
  try {
    if (call.name === 'delegate') {
      const agent = str(call.input.agent);
      const message = str(call.input.message);
      if (!agent || !message) return fail('delegate needs agent and message');
      const sent = await startThread(session, agent, message, signal);
      state.last.set(sent.threadId, sent);
      return { status: 'ok', result: { thread_id: sent.threadId, agent, status: 'started' } };
    }
    if (call.name === 'message_thread') {
      const threadId = str(call.input.thread_id);
      const message = str(call.input.message);
      if (!threadId || !message) return fail('message_thread needs thread_id and message');
      const sent = await sendToThread(session, threadId, message, signal);
      state.last.set(threadId, sent);
      return { status: 'ok', result: { thread_id: threadId, status: 'sent' } };
    }
    const given = Array.isArray(call.input.thread_ids) ? call.input.thread_ids.filter((x): x is string => typeof x === 'string') : [];
    const ids = given.length ? given : [...state.last.keys()];
    if (!ids.length) return fail('wait_threads: no thread to wait for (start one with delegate)');
    const sent: SentMessage[] = [];
    for (const id of ids) {
      const s = state.last.get(id) ?? (await lastMessageOf(session, id));
      if (!s) return fail(`no message was sent to thread ${id} in this session`);
      sent.push(s);
    }
    const outcomes = await Promise.all(sent.map((s) => outcomeOf(session.id, s, signal)));
    if (outcomes.some((o) => o === null)) return fail('interrupted while waiting for the threads');
    const threads = outcomes as ThreadOutcome[];
    return { status: threads.some((t) => t.status !== 'replied') ? 'error' : 'ok', result: { threads } };
  } catch (err) {
    if (err instanceof ThreadRefusal) return fail(err.message);
    throw err;
  }
}

/** The last message sent to a thread of the session (an earlier turn's delegation). */
async function lastMessageOf(session: Session, threadId: string): Promise<SentMessage | null> {
  const row = await prisma.sessionEvent.findFirst({
    where: { sessionId: threadId, type: 'user.message', session: { parentSessionId: session.id } },
    orderBy: { seq: 'desc' },
    select: { id: true },
  });
  return row ? { threadId, eventId: row.id } : null;
}

/** `tools` plus the delegation tools when `session` is a coordinator's (unchanged otherwise). */
export function withDelegation(session: Session, tools: Toolbox, state: DelegationState = newDelegationState()): Toolbox {
  const specs = delegationSpecs(session);
  if (!specs.length) return tools;
  return {
    specs: async () => [...(await tools.specs()), ...specs],
    decide: (name) => (isDelegation(name) ? Promise.resolve('run') : tools.decide(name)),
    run: (call, signal) => (isDelegation(call.name) ? runDelegationTool(session, state, call, signal) : tools.run(call, signal)),
  };
}

// The relay (src/tools/mcp/relay.ts) is stateless per request: what a CLI coordinator's turn has
// sent is kept here by session and turn (the last few turns of a session only).
const relayStates = new Map<string, DelegationState>();

/** The relay's toolbox of a coordinator's session, with the delegation tools (installed by the composition). */
export async function relayDelegation(caller: { sessionId: string; turn: number }, tools: Toolbox): Promise<Toolbox> {
  if (isThreadSession(caller.sessionId)) return tools;
  const session = await prisma.session.findUnique({ where: { id: caller.sessionId } });
  if (!session || !delegationSpecs(session).length) return tools;
  const key = `${caller.sessionId}#${caller.turn}`;
  let state = relayStates.get(key);
  if (!state) {
    relayStates.set(key, (state = newDelegationState()));
    if (relayStates.size > 1000) relayStates.delete(relayStates.keys().next().value!);
  }
  return withDelegation(session, tools, state);
}
