// Where in-session progress and errors appear besides session.error (spec: "in-session errors
// appear as session.error events and `error` message parts"): agent.status events carrying one
// message part. Every session.error is followed by an agent.status with its `error` part (code =
// the error type, retryable = the turn goes on), added where events are committed so that no
// producer can forget it; engine progress (an environment's packages installing, a model call
// waiting to be retried) is an agent.status with a `status` part.
import type { NewEvent } from './types.js';
import type { STATUS_LEVELS } from './parts.js';

/** An agent.status event with a `status` part. */
export function statusEvent(level: (typeof STATUS_LEVELS)[number], text: string, turn?: number): NewEvent {
  return { type: 'agent.status', fields: { part: { type: 'status', index: 0, level, text } }, ...(turn !== undefined ? { turn } : {}) };
}

/**
 * The events with an agent.status `error` part right after each session.error, and where each
 * given event ended up (callers get back the events they gave, in order).
 */
export function withErrorParts(events: NewEvent[]): { events: NewEvent[]; positions: number[] } {
  if (!events.some((e) => e.type === 'session.error')) return { events, positions: events.map((_, i) => i) };
  const out: NewEvent[] = [];
  const positions: number[] = [];
  for (const e of events) {
    positions.push(out.length);
    out.push(e);
    if (e.type !== 'session.error') continue;
    const { error } = e.fields;
    out.push({
      type: 'agent.status',
      fields: { part: { type: 'error', index: 0, code: error.type, message: error.message || error.type, retryable: error.retry_status === 'retrying' } },
      ...(e.turn !== undefined ? { turn: e.turn } : {}),
    });
  }
  return { events: out, positions };
}
