// Outcomes (issue #33) carried by initial_events: a routine's fire defines the outcome on its new
// session (or on its target session), the run records the outcome's final result; session create
// takes one too; the outbound webhook event outcome.ended announces the end.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, waitFor, waitForEvents } from '../helpers/sessions.js';
import { startReceiver } from '../helpers/durability.js';

let s: TestServer;
let fake: FakeProvider;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  process.env.SCHEDULER_TICK_MS = '3600000'; // runs are fired by hand here
  process.env.ROUTINE_SCHEDULER = 'inprocess';
  fake = await startFakeProvider();
  receiver = await startReceiver(() => 204);
  s = await startTestServer({ anthropicApiKey: 'sk', anthropicBaseUrl: fake.anthropicBaseUrl });
});
afterAll(async () => {
  await s?.stop();
  receiver?.close();
  await fake?.close();
});
beforeEach(() => fake.reset());

const outcome = (rubric: string) => ({ type: 'user.define_outcome', description: 'Summarize the news', rubric });
const lastRun = async (id: string) => (await s.api('GET', `/routines/${id}/runs`)).body.data[0];

describe('an outcome in initial_events', () => {
  it("a routine's new session grades it; the run records the final result; outcome.ended reaches a webhook", async () => {
    const hook = await s.api('POST', '/webhooks', { body: { url: `${receiver.url}/outcomes`, events: ['outcome.ended'] } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const created = await s.api('POST', '/routines', {
      body: {
        name: 'graded',
        target: { type: 'new_session', agent: agent.id },
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'context first' }] }, outcome('- three bullets\ngrader-script: fail pass')],
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.initial_events[1]).toMatchObject({
      type: 'user.define_outcome',
      rubric: '- three bullets\ngrader-script: fail pass',
      max_iterations: 3,
    });
    const run = await s.api('POST', `/routines/${created.body.id}/run`);
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body.outcome).toMatchObject({ id: expect.stringMatching(/^outc_/), status: 'active' });
    const events = await waitForEvents(s, run.body.session_id, 'session.status_idle', 1, 20_000);
    expect(events.at(-1).stop_reason).toEqual({ type: 'outcome', outcome_id: run.body.outcome.id, result: 'satisfied' });
    expect(events.filter((e) => e.type === 'outcome.evaluation_ended').map((e) => e.result)).toEqual(['needs_revision', 'satisfied']);
    expect((await lastRun(created.body.id)).outcome).toEqual({ id: run.body.outcome.id, status: 'satisfied' });
    await waitFor(async () => receiver.deliveries.some((d) => d.type === 'outcome.ended'), 15_000, 'the outcome.ended delivery');
    expect(receiver.deliveries.filter((d) => d.type === 'outcome.ended')).toHaveLength(1);
  });

  it('a routine into an existing session defines the outcome there; two outcomes in initial_events are refused', async () => {
    const { agent, session } = await readySession(s);
    const two = await s.api('POST', '/routines', {
      body: { name: 'two', target: { type: 'session', session_id: session.id }, initial_events: [outcome('- a'), outcome('- b')] },
    });
    expect(two.status).toBe(400);
    const created = await s.api('POST', '/routines', {
      body: { name: 'into', target: { type: 'session', session_id: session.id }, initial_events: [outcome('- done\ngrader-script: failed')] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const run = await s.api('POST', `/routines/${created.body.id}/run`);
    expect(run.body.session_id).toBe(session.id);
    const events = await waitForEvents(s, session.id, 'session.status_idle', 1, 20_000);
    expect(events.at(-1).stop_reason).toMatchObject({ type: 'outcome', result: 'failed' });
    await waitFor(async () => (await lastRun(created.body.id)).outcome?.status === 'failed');
    expect(agent.id).toBeTruthy();
  });

  it('session create takes an outcome in initial_events: its first turn is the outcome’s', async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const created = await s.api('POST', '/sessions', { body: { agent: agent.id, initial_events: [outcome('- ok\ngrader-script: pass')] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const events = await waitForEvents(s, created.body.session.id, 'session.status_idle', 1, 20_000);
    expect(events[0]).toMatchObject({ type: 'user.define_outcome', description: 'Summarize the news' });
    expect(events.at(-1).stop_reason).toMatchObject({ type: 'outcome', result: 'satisfied' });
    const list = (await s.api('GET', `/sessions/${created.body.session.id}/outcomes`)).body.data;
    expect(list.map((o: any) => [o.status, o.iterations])).toEqual([['satisfied', 1]]);
  });
});
