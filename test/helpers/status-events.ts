// The event suites' small parts: a status event with a text to tell it by, that text read back,
// idle sessions to store into, and a follower read a number of events at a time.
import { expect } from 'vitest';
import type { TestServer } from './server.js';
import { createAgent } from './agents.js';
import type { NewEvent, StoredEvent } from '../../src/events/store.js';

/** An agent.status event named by `text`. */
export const status = (text: string): NewEvent => ({ type: 'agent.status', fields: { part: { type: 'status', index: 0, level: 'working', text } } });

/** The text of a `status` event. */
export const textOf = (e: StoredEvent) => (e.event as unknown as { part: { text: string } }).part.text;

/** `n` idle sessions of one new agent. */
export async function idleSessions(s: TestServer, n: number): Promise<string[]> {
  const agent = await createAgent(s);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const created = await s.api('POST', '/sessions', { body: { agent: agent.id } });
    expect(created.status).toBe(201);
    ids.push(created.body.session.id as string);
  }
  return ids;
}

/** Reads `n` events from the follower, failing after `ms` in all. */
export async function take(it: AsyncIterator<StoredEvent>, n: number, ms = 10_000): Promise<StoredEvent[]> {
  const out: StoredEvent[] = [];
  const deadline = Date.now() + ms;
  while (out.length < n) {
    const next = await Promise.race([it.next(), new Promise<null>((r) => setTimeout(() => r(null), Math.max(0, deadline - Date.now())))]);
    if (!next || next.done) throw new Error(`got ${out.length} of ${n} events`);
    out.push(next.value);
  }
  return out;
}
