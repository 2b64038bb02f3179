// Human confirmation of tool calls. A turn that meets a call the agent's tool policy says to
// ask about stops with stop_reason `requires_action`; the calls it announced wait, stored as
// events (so a restart loses nothing). A `user.tool_confirmation` starts the next turn, which
// first settles the waiting calls: allowed ones run, denied ones answer the model with the
// reason, and a new message instead of a confirmation answers them as not confirmed. Their
// results are stored in the paused turn, right after the calls, as the model must see them.
import { prisma } from '../db/client.js';
import { batched } from '../db/batched.js';
import { sqlRows } from '../db/raw-query.js';
import { Prisma } from '../generated/prisma/client.js';
import { AppError } from '../errors.js';
import type { SessionEvent, StopReason } from '../events/types.js';
import { emitOutcome, type EmitEvent } from './tool-events.js';
import type { Toolbox, ToolCall } from './types.js';

type ToolUseEvent = Extract<SessionEvent, { type: 'agent.tool_use' }>;
type ConfirmationEvent = Extract<SessionEvent, { type: 'user.tool_confirmation' }>;

export interface PendingCall {
  eventId: string;
  index: number;
  call: ToolCall;
  awaiting: boolean;
}

// The stop reason of each session's latest idle (turns starting together: one statement, src/db/batched.ts).
const lastStopOf = batched(async (sessionIds: string[]): Promise<(string | null)[]> => {
  const rows = await sqlRows<{ sid: string; stop: string | null }>(
    prisma,
    Prisma.sql`
    SELECT k.sid, last."stop" FROM unnest(${sessionIds}::text[]) AS k(sid)
      CROSS JOIN LATERAL (
        SELECT e."payload"->'stop_reason'->>'type' AS "stop" FROM "SessionEvent" e
         WHERE e."sessionId" = k.sid AND e."type" = 'session.status_idle' ORDER BY e."seq" DESC LIMIT 1
      ) last`,
  );
  const stops = new Map(rows.map((r) => [r.sid, r.stop]));
  return sessionIds.map((id) => stops.get(id) ?? null);
});

/** The calls of the latest turn that paused for a confirmation, still without a result. */
export async function pendingCalls(sessionId: string): Promise<{ turn: number; calls: PendingCall[] } | null> {
  // Only a session whose last turn paused can have waiting calls (the latest idle says so,
  // found a few rows from the end): the common case costs one short read.
  if ((await lastStopOf(sessionId)) !== 'requires_action') return null;
  const marker = await prisma.sessionEvent.findFirst({
    where: { sessionId, type: 'agent.tool_use', payload: { path: ['awaiting_confirmation'], equals: true } },
    orderBy: { seq: 'desc' },
    select: { turn: true },
  });
  if (marker?.turn == null) return null;
  const rows = await prisma.sessionEvent.findMany({
    where: { sessionId, turn: marker.turn, type: { in: ['agent.tool_use', 'agent.tool_result'] } },
    orderBy: { seq: 'asc' },
    select: { payload: true },
  });
  const answered = new Set<string>();
  for (const { payload } of rows) {
    const e = payload as SessionEvent;
    if (e.type === 'agent.tool_result' && e.part.type === 'tool_result') answered.add(e.part.call_id);
  }
  const calls: PendingCall[] = [];
  for (const { payload } of rows) {
    const e = payload as SessionEvent;
    if (e.type !== 'agent.tool_use' || e.part.type !== 'tool_call' || answered.has(e.part.call_id)) continue;
    calls.push({
      eventId: e.id,
      index: e.part.index,
      call: { id: e.part.call_id, name: e.part.tool_name, input: e.part.args },
      awaiting: e.awaiting_confirmation === true,
    });
  }
  return calls.length ? { turn: marker.turn, calls } : null;
}

/** The agent.tool_use events awaiting a confirmation (GraphQL `pendingToolConfirmations`). */
export async function awaitingConfirmation(sessionId: string): Promise<ToolUseEvent[]> {
  const pending = await pendingCalls(sessionId);
  if (!pending) return [];
  const waiting = pending.calls.filter((c) => c.awaiting);
  if (!waiting.length) return [];
  const rows = await prisma.sessionEvent.findMany({
    where: { sessionId, id: { in: waiting.map((c) => c.eventId) } },
    orderBy: { seq: 'asc' },
    select: { payload: true },
  });
  return rows.map((r) => r.payload as ToolUseEvent);
}

/**
 * Checks the confirmations of a send: each names a call awaiting one (by its agent.tool_use
 * event id or its call id) not answered yet, once. Returns them with the event id resolved.
 */
export async function checkConfirmations<C extends { tool_use_id: string }>(sessionId: string, confirmations: C[]): Promise<C[]> {
  if (!confirmations.length) return [];
  const pending = await pendingCalls(sessionId);
  const waiting = (pending?.calls ?? []).filter((c) => c.awaiting);
  const queued = await prisma.sessionEvent.findMany({ where: { sessionId, type: 'user.tool_confirmation', turn: null }, select: { payload: true } });
  const answered = new Set(queued.map((r) => (r.payload as ConfirmationEvent).tool_use_id));
  const seen = new Set<string>();
  return confirmations.map((c) => {
    const call = waiting.find((w) => w.eventId === c.tool_use_id || w.call.id === c.tool_use_id);
    if (!call) throw new AppError('invalid_request', `no tool call awaits a confirmation with tool_use_id ${c.tool_use_id}`);
    if (answered.has(call.eventId) || seen.has(call.eventId)) throw new AppError('invalid_request', `the tool call ${c.tool_use_id} is already answered`);
    seen.add(call.eventId);
    return { ...c, tool_use_id: call.eventId };
  });
}

/**
 * Before the model is called: settles the calls a previous turn left waiting, using this turn's
 * confirmations. Returns a stop reason when calls still wait (nothing else to do), else null.
 */
export async function settlePendingCalls(opts: {
  sessionId: string;
  turn: number;
  tools: Toolbox;
  signal: AbortSignal;
  emitIn(turn: number): EmitEvent;
}): Promise<StopReason | null> {
  const pending = await pendingCalls(opts.sessionId);
  if (!pending) return null;
  // Confirmations taken by this turn or an earlier one (an interrupted settle keeps its answers).
  const inputs = await prisma.sessionEvent.findMany({
    where: {
      sessionId: opts.sessionId,
      turn: { gte: pending.turn, lte: opts.turn },
      type: { in: ['user.message', 'system.message', 'user.tool_confirmation', 'user.define_outcome'] },
    },
    select: { payload: true, turn: true },
  });
  const confirmations = new Map<string, ConfirmationEvent>();
  let newMessage = false;
  for (const { payload, turn } of inputs) {
    const e = payload as SessionEvent;
    if (e.type === 'user.tool_confirmation') confirmations.set(e.tool_use_id, e);
    else if (turn === opts.turn) newMessage = true;
  }
  const emit = opts.emitIn(pending.turn);
  for (const [i, p] of pending.calls.entries()) {
    const answer = confirmations.get(p.eventId);
    if (p.awaiting && !answer) {
      if (!newMessage) {
        const still = pending.calls
          .slice(i)
          .filter((c) => c.awaiting)
          .map((c) => c.eventId);
        return { type: 'requires_action', event_ids: still };
      }
      await emitOutcome(emit, p.index, p.call, { status: 'error', result: { error: 'not run: a new message arrived before this call was confirmed' } });
      continue;
    }
    if (answer?.result === 'deny') {
      const reason = answer.deny_message ? { deny_message: answer.deny_message } : {};
      await emitOutcome(emit, p.index, p.call, { status: 'error', result: { error: 'the user denied this tool call', ...reason } });
      continue;
    }
    if (opts.signal.aborted) return { type: 'end_turn' };
    // Recorded even when interrupted meanwhile: the call did run.
    await emitOutcome(emit, p.index, p.call, await opts.tools.run(p.call, opts.signal));
  }
  if (opts.signal.aborted) return { type: 'end_turn' };
  return null;
}
