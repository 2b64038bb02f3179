// Text a database cannot store as text (a NUL, an unpaired UTF-16 surrogate) that reaches an
// event from outside the API's input hygiene: a command's output, a model's stream, a tool's
// result. The event is stored with each such character replaced by U+FFFD and the turn goes on;
// before, the insert failed and the event was lost to a turn error (src/events/store.ts).
import { describe, expect, it } from 'vitest';
import type { FakeProvider } from '../fake-provider/server.js';
import type { TestServer } from '../helpers/server.js';
import { history, readySession, sendText, waitForEvents, withServerOnFakeProvider } from '../helpers/sessions.js';
import { commitEvents, eventsAfter, type NewEvent } from '../../src/events/store.js';

let s: TestServer;
let fake: FakeProvider;
withServerOnFakeProvider((started) => ({ s, fake } = started));

const REPLACED = '\uFFFD';

describe('text a database cannot store, from outside the API', () => {
  it("a command's output with a NUL byte: the tool result is stored with U+FFFD and the turn ends end_turn", async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: "printf 'a\\0b'" }, id: 'toolu_nul' }, { kind: 'text', text: 'read it' });
    await sendText(s, session.id, 'print a NUL');
    const events = await waitForEvents(s, session.id, 'session.status_idle', 1);
    expect(events.map((e) => e.type)).not.toContain('session.error');
    expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });
    const result = events.find((e) => e.type === 'agent.tool_result');
    expect(result.part).toMatchObject({ status: 'ok', result: { stdout: `a${REPLACED}b` } });
    // The turn went on to its next model call, with the command's result.
    expect(fake.requests).toHaveLength(2);
    expect(JSON.stringify(fake.requests[1]!.body.messages)).toContain('tool_result');
  });

  it("a model's streamed text with an unpaired surrogate and a NUL: every chunk and the message are stored, replaced", async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'text', text: 'half \uD83D of an emoji, a \u0000 NUL, a whole \uD83D\uDE00 one', chunks: 3 });
    await sendText(s, session.id, 'say something broken');
    const events = await waitForEvents(s, session.id, 'session.status_idle', 1);
    expect(events.map((e) => e.type)).not.toContain('session.error');
    const message = events.filter((e) => e.type === 'agent.message').at(-1);
    expect(JSON.stringify(message)).toContain(`half ${REPLACED} of an emoji, a ${REPLACED} NUL, a whole \uD83D\uDE00 one`);
    expect((await history(s, session.id)).length).toBe(events.length);
  });

  it('committed directly, alone and shared with other sessions: replaced, and text that only looks like an escape is kept', async () => {
    const { session: a } = await readySession(s);
    const { session: b } = await readySession(s);
    const text = (t: string): NewEvent => ({ type: 'agent.status', fields: { part: { type: 'status', index: 0, level: 'working', text: t } } });
    // A backslash then "u0000" is ordinary text: its JSON is "\\u0000", not an escape of a NUL.
    const cases = ['\u0000', '\uDC00x', 'x\uD800', '\\u0000 and \\ud800', 'fine \uD83D\uDE00'];
    const want = [REPLACED, `${REPLACED}x`, `x${REPLACED}`, '\\u0000 and \\ud800', 'fine \uD83D\uDE00'];
    const alone = await commitEvents(a.id, cases.map(text));
    const shared = await Promise.all([commitEvents(a.id, cases.map(text)), commitEvents(b.id, cases.map(text))]);
    for (const stored of [alone, ...shared]) {
      expect(stored.map((e) => (e.event as unknown as { part: { text: string } }).part.text)).toEqual(want);
    }
    const back = await eventsAfter(b.id, 0);
    expect(back.slice(-cases.length).map((e) => (e.event as unknown as { part: { text: string } }).part.text)).toEqual(want);
  });
});
