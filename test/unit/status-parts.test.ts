// Error message parts derived from session.error events where events are committed: each right
// after its error, in the error's turn, and the caller gets back the positions of what it gave.
import { describe, expect, it } from 'vitest';
import { withErrorParts, statusEvent } from '../../src/events/status-parts.js';
import type { NewEvent } from '../../src/events/types.js';

const error = (retry: 'retrying' | 'exhausted', turn?: number): NewEvent => ({
  type: 'session.error',
  fields: { error: { type: 'provider_unavailable', message: 'the provider answered 500', retry_status: retry } },
  ...(turn ? { turn } : {}),
});
const idle: NewEvent = { type: 'session.status_idle', fields: { stop_reason: { type: 'retries_exhausted' } } };

describe('withErrorParts', () => {
  it('leaves batches without a session.error as they are', () => {
    const events = [idle, statusEvent('waiting', 'x')];
    expect(withErrorParts(events)).toEqual({ events, positions: [0, 1] });
  });

  it('puts an agent.status error part right after each session.error; positions point at the given events', () => {
    const { events, positions } = withErrorParts([error('retrying', 3), error('exhausted', 3), idle]);
    expect(events.map((e) => e.type)).toEqual(['session.error', 'agent.status', 'session.error', 'agent.status', 'session.status_idle']);
    expect(positions).toEqual([0, 2, 4]);
    expect(events[1]).toEqual({
      type: 'agent.status',
      turn: 3,
      fields: { part: { type: 'error', index: 0, code: 'provider_unavailable', message: 'the provider answered 500', retryable: true } },
    });
    expect(events[3]!.fields).toMatchObject({ part: { retryable: false } });
  });
});
