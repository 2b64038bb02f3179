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
      .enum(['end_turn', 'retries_exhausted', 'budget_reached', 'requires_action', 'outcome'])
      .meta({ id: 'StopReasonType' })
      .describe(
        'requires_action: tool calls wait for a user.tool_confirmation (their agent.tool_use events are in event_ids). outcome: an outcome ended (outcome_id, result). More types are reserved: discriminate on `type` and never break on an unknown one',
      ),
    event_ids: z.array(z.string()).optional().describe('requires_action: the agent.tool_use events awaiting confirmation'),
    outcome_id: z.string().optional().describe('outcome: the outcome that ended'),
    result: z.string().optional().describe('outcome: its final status (satisfied, failed, max_iterations_reached)'),
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

// ---- issue #31 (caching helper): usage per turn, compaction --------------------------------
const tokenCount = z.int().min(0);
const usageCost = z
  .strictObject({ amount: z.string(), currency: z.literal('USD') })
  .describe('List cost in whole US cents, rounded down (the MonetaryAmount shape)')
  .meta({ id: 'UsageCost' });
/** Tokens and list cost of some model calls; a turn's (on session.status_idle) or a session's totals. */
export const usageCounters = {
  input_tokens: tokenCount.describe('Input tokens billed at the input price (cache reads and writes excluded)'),
  output_tokens: tokenCount,
  cache_read_input_tokens: tokenCount.describe('Input tokens read from the prompt cache (cache-read price)'),
  cache_creation_input_tokens: tokenCount.describe('Input tokens written to the prompt cache (cache-write price)'),
  cost: usageCost,
  cost_usd: z.string().describe('The same list cost, exact, in US dollars (nine decimals)'),
  model_calls: tokenCount.describe('Metered model calls (a compaction summary included)'),
  tool_calls: tokenCount.describe('Tool calls that produced a result'),
};
export const turnUsage = z
  .strictObject({ ...usageCounters, duration_ms: tokenCount.describe('From the turn start to its end') })
  .describe("Beyond the spec: the turn's usage, the sum of its metered model calls (absent on an idle that ends no turn run by an engine)")
  .meta({ id: 'TurnUsage' });
export type TurnUsage = z.output<typeof turnUsage>;
export const compactedRange = z
  .strictObject({ from_event_id: z.string(), to_event_id: z.string() })
  .meta({ id: 'CompactedRange' })
  .describe('The first and last event the summary stands for (history keeps them)');
// ---- end issue #31 --------------------------------------------------------------------------
/** Multiagent: the roster agent a thread runs (its version snapshotted when the session started). */
export const threadAgent = z.strictObject({ id: z.string(), name: z.string().describe('its roster name'), version: z.int32() }).meta({ id: 'ThreadAgent' });

const streamed = {
  final: z.boolean().optional().describe('false on streamed chunks; true on the complete message that follows them'),
};

// ---- outcomes (issue #33): the defined outcome (history) and its evaluations (stream and history) ----
export const outcomeCriterion = z.strictObject({ criterion: z.string(), passed: z.boolean(), explanation: z.string() }).meta({ id: 'OutcomeCriterionVerdict' });
export const evaluationResult = z.enum(['satisfied', 'needs_revision', 'failed']).meta({ id: 'OutcomeEvaluationResult' });
const outcomeEvents = [
  event('user.define_outcome', 'UserDefineOutcomeEvent', {
    outcome_id: z.string(),
    description: z.string(),
    rubric: z.string(),
    max_iterations: z.int32(),
    grader_llm: nullableString,
  }),
  event('outcome.evaluation_started', 'OutcomeEvaluationStartedEvent', {
    outcome_id: z.string(),
    iteration: z.int32().min(1).describe('1 for the first evaluation'),
  }),
  event('outcome.evaluation_ended', 'OutcomeEvaluationEndedEvent', {
    outcome_id: z.string(),
    iteration: z.int32().min(1),
    result: evaluationResult,
    criteria: z.array(outcomeCriterion),
    summary: z.string(),
  }),
] as const;

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
    event('session.status_idle', 'SessionStatusIdleEvent', {
      stop_reason: stopReason,
      usage: turnUsage.optional(),
    }),
    event('session.error', 'SessionErrorEvent', { error: sessionErrorDetail }),
    event('session.status_terminated', 'SessionStatusTerminatedEvent', {}),
    // issue #31 (caching helper): compaction
    event('user.compact', 'UserCompactEvent', { by: z.string().describe('Who asked for it') }),
    event('session.compacted', 'SessionCompactedEvent', {
      summary: z.string().describe('What the model is given instead of the replaced events'),
      replaces: compactedRange,
      replaced_events: z.int().min(0).describe('How many events of the conversation the summary stands for'),
      trigger: z.enum(['auto', 'user']).meta({ id: 'CompactionTrigger' }).describe('auto: the next call would have filled the window; user: user.compact'),
      tokens_before: z.int().min(0).describe('Estimated prompt tokens before'),
      tokens_after: z.int().min(0).describe('Estimated prompt tokens after'),
    }),
    event('session.deleted', 'SessionDeletedEvent', {}),
    ...outcomeEvents,
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
export const HISTORY_ONLY_TYPES: ReadonlySet<string> = new Set(['user.message', 'system.message', 'user.define_outcome']);

/** What one statement stored for one session (events/store.ts, events/store-many.ts). */
export interface StoredBatch {
  sessionId: string;
  stored: StoredEvent[];
  /** Webhook deliveries queued with the events. */
  deliveries: number;
  /** The session's turn count after the statement (null when nothing was stored). */
  turnCount: number | null;
}
