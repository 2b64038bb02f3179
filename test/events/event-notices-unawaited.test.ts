// A committed batch's notice to other processes (src/events/store.ts announceEvents) is sent and
// not waited for (issue #29: its round trip to Redis was on every commit's path and before each
// turn's model call). Here the pub/sub's notices never answer, or fail: commits still answer,
// this process's streams still get every event, whole turns still run to idle, and failures
// are logged (once while they keep failing). Before the change each commit waited for the
// notice's answer (a stalled Redis held every turn). Both configurations: the pub/sub is composed in.
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents } from '../helpers/sessions.js';
import { commitEvents, type NewEvent, type StoredEvent } from '../../src/events/store.js';
import { logger } from '../../src/logger.js';
import { followSession } from '../../src/events/hub.js';
import { memoryPubSub, type PubSub } from '../../src/events/pubsub.js';

let s: TestServer;
let fake: FakeProvider;
// Notices: 'stall' never answers, 'fail' rejects; `sent` counts them.
let mode: 'stall' | 'fail' = 'stall';
let sent = 0;
const inner = memoryPubSub();
const pubsub: PubSub = {
  ...inner,
  notify(channel, head, body) {
    sent++;
    void inner.notify(channel, head, body);
    return mode === 'stall' ? new Promise<void>(() => undefined) : Promise.reject(new Error('redis is gone'));
  },
};

beforeAll(async () => {
  fake = await startFakeProvider();
  s = await startTestServer({ anthropicApiKey: 'sk-ant-test', anthropicBaseUrl: fake.anthropicBaseUrl }, { services: { pubsub } });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});
beforeEach(() => fake.reset());

const status = (text: string): NewEvent => ({ type: 'agent.status', fields: { part: { type: 'status', index: 0, level: 'working', text } } });

/** Settles with `p`, or fails after `ms` (a commit that waits for its notice never settles here). */
function within<T>(p: Promise<T>, ms = 5_000): Promise<T> {
  return Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms))]);
}

describe.each(['stall', 'fail'] as const)('notices that %s', (how) => {
  beforeEach(() => {
    mode = how;
  });

  it("commits answer and this process's stream gets each event", async () => {
    const warn = vi.spyOn(logger, 'warn');
    const before = sent;
    const { session } = await readySession(s);
    const follower = followSession(session.id, 0);
    const [one] = await within(commitEvents(session.id, [status('one')]));
    const [two] = await within(commitEvents(session.id, [status('two')]));
    expect(sent - before).toBe(2);
    const got: StoredEvent[] = [];
    while (got.length < 2) {
      const next = await within(follower.next());
      if (next.done) break;
      got.push(next.value);
    }
    expect(got.map((e) => e.seq)).toEqual([one!.seq, two!.seq]);
    await follower.return!();
    // Failed notices are said in the log once (not once each: Redis away fails them all); a
    // stalled one says nothing.
    const said = warn.mock.calls.filter((c) => String(c[1]).includes('notices to other processes failed'));
    expect(said).toHaveLength(how === 'fail' ? 1 : 0);
    warn.mockRestore();
  });

  it('a whole turn runs to idle, its answer in the history', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'text', text: `answered while notices ${how}`, chunks: 3 });
    expect((await sendText(s, session.id, 'go')).status).toBe(202);
    const events = await waitForEvents(s, session.id, 'session.status_idle', 1);
    expect(
      events.some((e: { type: string; final?: boolean; text?: string }) => e.type === 'agent.message' && e.final && e.text === `answered while notices ${how}`),
    ).toBe(true);
    expect((await s.api('GET', `/sessions/${session.id}`)).body.session.status).toBe('idle');
  });
});
