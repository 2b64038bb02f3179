// The turn queue's concurrency per process (TURN_CONCURRENCY): with a cap of 3, a burst of 9
// sends is answered 202 at once, at most 3 turns run at a time, the others wait and start in the
// order they were sent, and every turn ends end_turn. Runs on both configurations (in-process
// queue; BullMQ with Redis).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { history, readySession, sendText, waitForEvents } from '../helpers/sessions.js';
import { slotUse } from '../../src/runtime/turn-slots.js';

const CAP = 3;
const BURST = 9;

let s: TestServer;
let fake: FakeProvider;
beforeAll(async () => {
  process.env.TURN_CONCURRENCY = String(CAP);
  fake = await startFakeProvider();
  s = await startTestServer({ anthropicApiKey: 'sk-ant-test', anthropicBaseUrl: fake.anthropicBaseUrl, startingCreditsCents: 100_000 });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
  delete process.env.TURN_CONCURRENCY;
});

describe('a burst beyond TURN_CONCURRENCY', () => {
  it('queues in order: at most the cap runs at once, every send is accepted and every turn ends end_turn', async () => {
    const sessions: string[] = [];
    for (let i = 0; i < BURST; i++) sessions.push((await readySession(s)).session.id);
    const idlesBefore = await Promise.all(sessions.map(async (id) => (await history(s, id)).filter((e) => e.type === 'session.status_idle').length));
    for (let i = 0; i < BURST; i++) fake.enqueue({ kind: 'text', text: `answer ${i} in three chunks`, chunks: 3, delayMs: 100 });

    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, slotUse().taken)), 5);
    // Sent one after the other (each answered before the next): the order the turns must start in.
    for (const id of sessions) expect((await sendText(s, id, 'go')).status).toBe(202);
    const seen = slotUse();
    const ends = await Promise.all(sessions.map((id, i) => waitForEvents(s, id, 'session.status_idle', idlesBefore[i]! + 1, 30_000)));
    clearInterval(sampler);
    expect(seen.waiting, 'sends beyond the cap wait for a slot').toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(CAP);

    const spans = ends.map((events) => {
      const running = events.filter((e) => e.type === 'session.status_running');
      const idle = events.filter((e) => e.type === 'session.status_idle').at(-1);
      expect(running).toHaveLength(1);
      expect(idle.stop_reason).toEqual({ type: 'end_turn' });
      expect(events.find((e) => e.type === 'agent.message' && e.final).text).toMatch(/^answer \d in three chunks$/);
      return { start: Date.parse(running[0].at), end: Date.parse(idle.at) };
    });
    // The turns' stored spans: never more than the cap overlapping, and started in send order.
    for (const a of spans) expect(spans.filter((b) => b.start <= a.start && a.start < b.end).length).toBeLessThanOrEqual(CAP);
    // Started in send order, up to the turns given slots together (their claims race): each
    // turn's place among the starts is within the cap of its place among the sends.
    const byStart = spans.map((x, i) => ({ ...x, i })).sort((a, b) => a.start - b.start);
    byStart.forEach((x, rank) => expect(Math.abs(x.i - rank), `send ${x.i} started ${rank}th`).toBeLessThan(CAP));
    // The last sent could not start before the first ones ended.
    expect(spans.at(-1)!.start).toBeGreaterThanOrEqual(Math.min(...spans.slice(0, CAP).map((x) => x.end)));
    expect(slotUse()).toMatchObject({ taken: 0, waiting: 0 });
  }, 90_000);
});
