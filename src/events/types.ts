// Every session event of the spec, as one discriminated union: engines build them, the store
// keeps them, history and the stream return them, GraphQL serves them as the `SessionEvent`
// union and OpenAPI documents them, all from these schemas.
import { z } from 'zod';
import { dateTime } from '../contract/zod-walk.js';
import { contentBlock, textBlock, toolConfirmationResult } from './content.js';
import { messagePart } from './parts.js';

export { messagePart, type MessagePart } from './parts.js';

const nullableString = z.string().nullable();

// ---- events ----
const common = {
  id: z.string().describe('Stable event id: the dedupe key across stream and history'),
  sessionId: z.string(),
  agentId: nullableString,
  at: dateTime(z.string().describe('ISO 8601 timestamp')),
  thread_id: z.string().optional().describe("Multiagent: on a thread's own events, the thread (sthr_…); sessionId is its session"),
};

function event<T extends string, F extends z.ZodRawShape>(type: T, id: string, fields: F) {
  // A type's own field replaces a common one of the same name (thread.*'s required thread_id).
  return z.strictObject({ ...(common as Omit<typeof common, keyof F>), type: z.literal(type), ...fields }).meta({ id });
}

export const stopReason = z
  .strictObject({
    type: z
      .enum(['end_turn', 'retries_exhausted', 'budget_reached', 'requires_action'])
      .meta({ id: 'StopReasonType' })
      .describe(
        'requires_action: tool calls wait for a user.tool_confirmation (their agent.tool_use events are in event_ids). More types are reserved: discriminate on `type` and never break on an unknown one',
      ),
    event_ids: z.array(z.string()).optional().describe('requires_action: the agent.tool_use events awaiting confirmation'),
  })
  .meta({ id: 'StopReason' });
export type StopReason = z.output<typeof stopReason>;

export const sessionErrorDetail = z
  .strictObject({
    type: z.string().describe('e.g. pod_unavailable, rate_limited, engine_unavailable'),
    message: z.string(),
    retry_status: z.enum(['retrying', 'exhausted']).meta({ id: 'RetryStatus' }),
    attempt: z.int32().min(1).optional().describe('Which attempt of the model call failed'),
  })
  .meta({ id: 'SessionErrorDetail' });

/** Multiagent: the roster agent a thread runs (its version snapshotted when the session started). */
export const threadAgent = z.strictObject({ id: z.string(), name: z.string().describe('its roster name'), version: z.int32() }).meta({ id: 'ThreadAgent' });

const streamed = {
  final: z.boolean().optional().describe('false on streamed chunks; true on the complete message that follows them'),
};

export const sessionEvent = z
  .discriminatedUnion('type', [
    event('user.message', 'UserMessageEvent', { content: z.array(contentBlock).min(1) }),
    event('system.message', 'SystemMessageEvent', { content: z.array(textBlock).min(1) }),
    event('agent.message', 'AgentMessageEvent', { messageId: z.string(), parts: z.array(messagePart), text: z.string(), ...streamed }),
    event('agent.reasoning', 'AgentReasoningEvent', { part: messagePart, ...streamed, signature: nullableString.optional() }),
    event('agent.tool_use', 'AgentToolUseEvent', {
      part: messagePart,
      awaiting_confirmation: z.boolean().optional().describe('true: the call runs only after a user.tool_confirmation allows it'),
    }),
    event('agent.tool_result', 'AgentToolResultEvent', { part: messagePart }),
    event('agent.status', 'AgentStatusEvent', { part: messagePart }),
    event('user.interrupt', 'UserInterruptEvent', { by: z.string().describe('Who requested it') }),
    event('user.tool_confirmation', 'UserToolConfirmationEvent', {
      tool_use_id: z.string().describe('The agent.tool_use event answered'),
      result: toolConfirmationResult,
      deny_message: nullableString.optional().describe('deny: told to the model as the reason'),
      by: z.string().describe('Who answered'),
    }),
    event('session.status_running', 'SessionStatusRunningEvent', {}),
    event('session.status_idle', 'SessionStatusIdleEvent', { stop_reason: stopReason }),
    event('session.error', 'SessionErrorEvent', { error: sessionErrorDetail }),
    event('session.status_terminated', 'SessionStatusTerminatedEvent', {}),
    event('session.deleted', 'SessionDeletedEvent', {}),
    // ---- multiagent (issue #32): what a coordinator's threads do, on the session's own stream ----
    event('thread.started', 'ThreadStartedEvent', { thread_id: z.string(), agent: threadAgent }),
    event('thread.message', 'ThreadMessageEvent', {
      thread_id: z.string(),
      agent: threadAgent,
      text: z.string().describe("The specialist's final reply of its turn"),
    }),
    event('thread.idle', 'ThreadIdleEvent', {
      thread_id: z.string(),
      agent: threadAgent,
      stop_reason: stopReason,
      error: sessionErrorDetail.nullable().optional().describe("The thread's turn failed: its last session.error"),
    }),
  ])
  .meta({ id: 'SessionEvent' });

export type SessionEvent = z.output<typeof sessionEvent>;
export type SessionEventType = SessionEvent['type'];
export const SESSION_EVENT_TYPES = sessionEvent.options.map((o) => o.shape.type.value) as SessionEventType[];

/** What a producer gives for one event: its type-specific fields; the store adds the common ones. */
export type EventFields<T extends SessionEventType> = Omit<
  Extract<SessionEvent, { type: T }>,
  'id' | 'type' | 'sessionId' | 'agentId' | 'at' | (T extends `thread.${string}` ? never : 'thread_id')
>;
/** One session event as an engine produces it (the store adds id, session, agent, time and turn). */
export type EngineEvent = { [T in SessionEventType]: { type: T; fields: EventFields<T> } }[SessionEventType];
export type NewEvent = { [T in SessionEventType]: { type: T; fields: EventFields<T>; turn?: number } }[SessionEventType];

export interface StoredEvent {
  seq: number;
  event: SessionEvent;
}

/** user.message and system.message appear only in history, never on the live stream. */
export const HISTORY_ONLY_TYPES: ReadonlySet<string> = new Set(['user.message', 'system.message']);

/** What one statement stored for one session (events/store.ts, events/store-many.ts). */
export interface StoredBatch {
  sessionId: string;
  stored: StoredEvent[];
  /** Webhook deliveries queued with the events. */
  deliveries: number;
  /** The session's turn count after the statement (null when nothing was stored). */
  turnCount: number | null;
}
