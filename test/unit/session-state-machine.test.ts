// The spec's session state table, row by row, against the one module that encodes it.
import { describe, it, expect } from 'vitest';
import { decide, movableFrom, assertAllowed, SESSION_STATUSES } from '../../src/runtime/session-state-machine.js';

describe('session state table', () => {
  it('idle → archive → terminated (pod and context torn down by the caller)', () => {
    expect(decide('archive', 'idle')).toEqual({ kind: 'move', to: 'terminated' });
  });
  it('terminated → archive again is idempotent', () => {
    expect(decide('archive', 'terminated')).toEqual({ kind: 'stay' });
  });
  it('running → archive is refused with 400 session_running, status unchanged', () => {
    expect(decide('archive', 'running')).toMatchObject({ kind: 'refuse', code: 'session_running' });
    expect(() => assertAllowed('archive', 'running')).toThrow(
      expect.objectContaining({ extensions: expect.objectContaining({ code: 'session_running', http: expect.objectContaining({ status: 400 }) }) }),
    );
  });
  it('running → delete is refused with session_running', () => {
    expect(decide('delete', 'running')).toMatchObject({ kind: 'refuse', code: 'session_running' });
  });
  it('idle or terminated → delete removes the record', () => {
    expect(decide('delete', 'idle')).toEqual({ kind: 'remove' });
    expect(decide('delete', 'terminated')).toEqual({ kind: 'remove' });
    expect(movableFrom('delete')).not.toContain('running');
  });
  it('further messages to a terminated session are refused with session_archived', () => {
    expect(decide('send', 'terminated')).toMatchObject({ kind: 'refuse', code: 'session_archived' });
  });
  it('a reached budget refuses new work with 402 budget_reached in any live status', () => {
    for (const status of ['provisioning', 'idle', 'running'] as const) {
      expect(decide('send', status, { budgetReached: true })).toMatchObject({ kind: 'refuse', code: 'budget_reached' });
    }
    expect(() => assertAllowed('send', 'idle', { budgetReached: true })).toThrow(
      expect.objectContaining({ extensions: expect.objectContaining({ http: expect.objectContaining({ status: 402 }) }) }),
    );
  });
  it('sending while provisioning waits and while running queues (allowed, status unchanged)', () => {
    expect(decide('send', 'provisioning')).toEqual({ kind: 'stay' });
    expect(decide('send', 'running')).toEqual({ kind: 'stay' });
  });
  it('fork: an idle or running session may be forked (status unchanged); archived → session_archived, provisioning → conflict', () => {
    expect(decide('fork', 'idle')).toEqual({ kind: 'stay' });
    expect(decide('fork', 'running')).toEqual({ kind: 'stay' });
    expect(decide('fork', 'terminated')).toMatchObject({ kind: 'refuse', code: 'session_archived' });
    expect(decide('fork', 'provisioning')).toMatchObject({ kind: 'refuse', code: 'conflict' });
    expect(movableFrom('fork')).toEqual([]);
  });
  it('runner moves: provisioned, claim, release and recovery only from their one status', () => {
    expect(movableFrom('provisioned')).toEqual(['provisioning']);
    expect(movableFrom('claim')).toEqual(['idle']);
    expect(movableFrom('release')).toEqual(['running']);
    expect(movableFrom('recover')).toEqual(['running']);
    for (const status of SESSION_STATUSES.filter((s) => s !== 'idle')) expect(decide('claim', status).kind).toBe('refuse');
  });
});
