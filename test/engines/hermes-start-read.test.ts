// A hermes turn's start reads its conversation in one statement (src/engines/hermes/history.ts
// turnStartRows): the rows up to the turn, the turn's own inputs and how the last turn stopped.
// Streamed chunks come as their type and id only (issue #29: they were most of the rows, parsed
// at every start): the conversation is the same as from the whole rows, and a compaction that
// names a chunk as the end of what it replaced still stands for it. Both configurations.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { readySession } from '../helpers/sessions.js';
import { commitEvents, type NewEvent } from '../../src/events/store.js';
import { conversationOf, conversationRows, turnStartRows } from '../../src/engines/hermes/history.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

const INPUTS = ['user.message', 'system.message', 'user.tool_confirmation', 'user.compact'];
const user = (text: string, turn: number): NewEvent => ({ type: 'user.message', fields: { content: [{ type: 'text', text }] }, turn });
const chunk = (text: string, turn: number, messageId: string): NewEvent => ({
  type: 'agent.message',
  fields: { messageId, final: false, parts: [{ type: 'text', index: 0, text, stream_id: messageId, stream_index: 0 }], text },
  turn,
});
const final = (text: string, turn: number, messageId: string): NewEvent => ({
  type: 'agent.message',
  fields: { messageId, final: true, parts: [{ type: 'text', index: 0, text, stream_id: messageId, stream_index: null }], text },
  turn,
});
const idle = (stop: 'end_turn' | 'requires_action', turn: number): NewEvent => ({ type: 'session.status_idle', fields: { stop_reason: { type: stop } }, turn });

describe("a hermes turn's start read", () => {
  it('gives the conversation the whole rows give, with streamed chunks as their type and id only', async () => {
    const { session } = await readySession(s);
    await commitEvents(session.id, [
      user('hello', 1),
      chunk('Hel', 1, 'msg_a'),
      chunk('lo there', 1, 'msg_a'),
      final('Hello there', 1, 'msg_a'),
      idle('end_turn', 1),
      user('again', 2),
    ]);
    const start = await turnStartRows(session.id, 2, INPUTS);
    expect(start.inputs).toEqual(['user.message']);
    expect(start.lastStop).toBe('end_turn');
    const chunks = start.rows.filter((r) => (r.payload as { type: string }).type === 'agent.message' && !(r.payload as { final?: boolean }).final);
    expect(chunks).toHaveLength(2);
    for (const c of chunks) expect(Object.keys(c.payload as object).sort()).toEqual(['id', 'type']);
    // The same conversation as from every row whole (what compaction reads).
    const whole = await conversationOf(await conversationRows(session.id, 2));
    expect(await conversationOf(start.rows)).toEqual(whole);
    expect(JSON.stringify(whole)).toContain('Hello there');
    expect(JSON.stringify(whole)).not.toContain('"Hel"'); // a chunk's text is no message of its own
  });

  it('a compaction that ends at a streamed chunk (an answer cut short) still stands for what it replaced', async () => {
    const { session } = await readySession(s);
    const [first] = await commitEvents(session.id, [user('the first question', 1), chunk('cut sho', 1, 'msg_b')]);
    const all = await conversationRows(session.id, 1);
    const lastChunk = all.at(-1)!.payload as { id: string; type: string };
    expect(lastChunk.type).toBe('agent.message');
    await commitEvents(session.id, [
      idle('end_turn', 1),
      user('the second question', 2),
      {
        type: 'session.compacted',
        fields: {
          summary: 'SUMMARY-OF-TURN-ONE',
          replaces: { from_event_id: first!.event.id, to_event_id: lastChunk.id },
          replaced_events: 2,
          trigger: 'auto',
          tokens_before: 100,
          tokens_after: 10,
        },
        turn: 2,
      },
    ]);
    const start = await turnStartRows(session.id, 2, INPUTS);
    const messages = JSON.stringify(await conversationOf(start.rows));
    expect(messages).toContain('SUMMARY-OF-TURN-ONE');
    expect(messages).not.toContain('the first question');
    expect(messages).toContain('the second question');
  });

  it('says when the last turn paused for a confirmation', async () => {
    const { session } = await readySession(s);
    await commitEvents(session.id, [user('do it', 1), idle('requires_action', 1), user('go on', 2)]);
    expect((await turnStartRows(session.id, 2, INPUTS)).lastStop).toBe('requires_action');
  });
});
