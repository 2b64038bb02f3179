// Text sent to an idle session is stored with its turn's start in one statement (the first frame
// follows one round trip); every other send, and a row that does not match, takes the ordinary
// path with its precise answer and stores nothing twice.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents, waitFor, history } from '../helpers/sessions.js';
import { countQueries } from '../helpers/agents.js';

let s: TestServer;
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
  s = await startTestServer({ anthropicApiKey: 'sk-ant-test', anthropicBaseUrl: fake.anthropicBaseUrl });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});
beforeEach(() => fake.reset());

const eventInserts = /INSERT INTO "SessionEvent"/;
/** Statements inserting events of this session (another session's, batched in the background, do not count). */
const insertsOfSession = (sessionId: string) => (text: string, values: unknown[]) => eventInserts.test(text) && JSON.stringify(values).includes(sessionId);

async function interruptAndWaitIdle(sessionId: string): Promise<void> {
  expect((await s.api('POST', `/sessions/${sessionId}/interrupt`)).status).toBe(200);
  await waitFor(async () => (await s.api('GET', `/sessions/${sessionId}`)).body.session.status === 'idle');
}

describe('a send that starts its turn', () => {
  it('text to an idle session: the inputs and session.status_running are one statement, given to the new turn', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'hang' }); // the turn waits on the model: nothing else is stored meanwhile
    let status = 0;
    const inserts = await countQueries(async () => {
      status = (
        await s.api('POST', `/sessions/${session.id}/events`, {
          body: {
            events: [
              { type: 'user.message', content: [{ type: 'text', text: 'one' }] },
              { type: 'user.message', content: [{ type: 'text', text: 'two' }] },
            ],
          },
        })
      ).status;
    }, insertsOfSession(session.id));
    expect(status).toBe(202);
    expect(inserts).toBe(1);
    const events = await history(s, session.id);
    expect(events.map((e: { type: string }) => e.type)).toEqual(['user.message', 'user.message', 'session.status_running']);
    const viewed = (await s.api('GET', `/sessions/${session.id}`)).body.session;
    expect(viewed.status).toBe('running');
    await waitFor(async () => fake.requests.length === 1);
    // Both inputs reached the model as this turn's words.
    const words = JSON.stringify(fake.requests[0]!.body.messages);
    expect(words).toContain('one');
    expect(words).toContain('two');
    await interruptAndWaitIdle(session.id);
  });

  it("a turn's end with nothing waiting: its session.status_idle and the release to idle are one statement", async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'text', text: 'done' });
    // Statements that move this session's row between turns: a turn's start or its end.
    const rowMoves = (text: string, values: unknown[]) =>
      /UPDATE "Session" SET "eventSeq"/.test(text) && /"turnCount" = "turnCount" \+ 1|"runnerId" = NULL/.test(text) && values.includes(session.id);
    const moves = await countQueries(async () => {
      expect((await sendText(s, session.id, 'quick')).status).toBe(202);
      await waitForEvents(s, session.id, 'session.status_idle', 1);
    }, rowMoves);
    expect(moves).toBe(2); // the send's start, the end's release: no statement probing for a next turn
    expect((await s.api('GET', `/sessions/${session.id}`)).body.session.status).toBe('idle');
  });

  it("a turn's first model call takes the session's spend from the row the turn started with: no read of its own", async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'text', text: 'done' });
    // The metering's own read of a session's spend (src/gateway/metering.ts): its columns, not the whole row.
    const spendReads = (text: string, values: unknown[]) =>
      /^\s*SELECT\b[\s\S]*"consumedNanoUsd"[\s\S]*\bFROM "(public"\.")?Session"/.test(text) && !/"agentType"/.test(text) && values.flat().includes(session.id);
    const reads = await countQueries(async () => {
      expect((await sendText(s, session.id, 'quick')).status).toBe(202);
      await waitForEvents(s, session.id, 'session.status_idle', 1);
    }, spendReads);
    expect(fake.requests).toHaveLength(1);
    expect(reads).toBe(0);
  });

  it("a turn's start reads its session's events once before the model call: the conversation, with how the last turn stopped", async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'text', text: 'first' });
    expect((await sendText(s, session.id, 'one')).status).toBe(202);
    await waitForEvents(s, session.id, 'session.status_idle', 1);
    fake.enqueue({ kind: 'hang' });
    // Reads of this session's events (a batched read names it among its values).
    const eventReads = (text: string, values: unknown[]) => /^\s*SELECT\b[\s\S]*"SessionEvent"/.test(text) && values.flat().includes(session.id);
    const reads = await countQueries(async () => {
      expect((await sendText(s, session.id, 'two')).status).toBe(202);
      await waitFor(async () => fake.requests.length === 2);
    }, eventReads);
    expect(reads).toBe(1); // not a read of the last stop reason first (issue #29)
    expect(JSON.stringify(fake.requests[1]!.body.messages)).toContain('first'); // the conversation so far
    await interruptAndWaitIdle(session.id);
  });

  it('a message to a running session is stored and waits; it becomes the next turn', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'hang' });
    expect((await sendText(s, session.id, 'first')).status).toBe(202);
    await waitFor(async () => fake.requests.length === 1);
    fake.enqueue({ kind: 'text', text: 'second answer' });
    expect((await sendText(s, session.id, 'second')).status).toBe(202);
    await s.api('POST', `/sessions/${session.id}/interrupt`);
    const events = await waitForEvents(s, session.id, 'session.status_idle', 2);
    expect(events.filter((e: { type: string }) => e.type === 'session.status_running')).toHaveLength(2);
    expect(events.some((e: { type: string; final?: boolean; text?: string }) => e.type === 'agent.message' && e.final && e.text === 'second answer')).toBe(
      true,
    );
  });

  it('a session of another universe: 404 and nothing stored', async () => {
    const { session } = await readySession(s);
    await s.api('POST', '/universes', { body: { slug: 'send-other' } });
    const other = await s.mintToken('admin', { universe: 'send-other' });
    const res = await s.api('POST', `/sessions/${session.id}/events`, {
      token: other,
      body: { events: [{ type: 'user.message', content: [{ type: 'text', text: 'x' }] }] },
    });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'not_found' });
    expect(await history(s, session.id)).toEqual([]);
    expect((await s.api('GET', `/sessions/${session.id}`)).body.session.status).toBe('idle');
  });
});
