// kill -9 mid-delegation (issue #32): a coordinator waits in wait_threads while its specialist's
// thread streams. After the restart the coordinator's turn and the thread's turn are each ended
// as a lost turn (runner_lost, streams completed, idle), the session's stream hears the thread's
// end (thread.idle), and both keep working: a new task delegates to the same thread, which
// remembers its earlier words. On PGlite (a data directory) and PostgreSQL + Redis.
import { describe, expect, it } from 'vitest';
import { api } from '../helpers/child-server.js';
import { CONFIGS, say, waitForHistory, withCrashDeployments } from '../helpers/durability.js';

const crash = withCrashDeployments();

describe.each(CONFIGS)('kill -9 while a coordinator waits for its thread ($name)', ({ postgres }) => {
  it('after the restart: coordinator and thread end as lost turns, streams complete, the thread keeps its memory', async () => {
    const { fake } = crash;
    fake.reset();
    const { env, token } = await crash.deployment(postgres);
    const first = await crash.start(env);
    const call = (base: string, method: string, path: string, body?: unknown) => api(base, token, method, path, body);
    const specialist = (await call(first.base, 'POST', '/agents', { prompt: 'You are the SPECIALIST.' })).body.agent;
    const coordinator = (
      await call(first.base, 'POST', '/agents', {
        prompt: 'You are the COORDINATOR.',
        multiagent: { type: 'coordinator', agents: [{ type: 'agent', id: specialist.id, name: 'specialist' }] },
      })
    ).body.agent;
    const session = (await call(first.base, 'POST', '/sessions', { agent: coordinator.id })).body.session;
    await waitForHistory(first.base, token, session.id, () => true);
    for (let i = 0; i < 200 && (await call(first.base, 'GET', `/sessions/${session.id}`)).body.session.status !== 'idle'; i++)
      await new Promise((r) => setTimeout(r, 50));

    fake.enqueueFor(
      'COORDINATOR',
      { kind: 'tool_call', name: 'delegate', id: 'toolu_d', input: { agent: 'specialist', message: 'long research' } },
      { kind: 'tool_call', name: 'wait_threads', id: 'toolu_w', input: {} },
    );
    fake.enqueueFor('SPECIALIST', { kind: 'hang', text: 'halfway there' });
    expect((await say(first.base, token, session.id, 'start')).status).toBe(202);
    await waitForHistory(first.base, token, session.id, (ev) => ev.some((e) => e.type === 'agent.tool_use' && e.part.tool_name === 'wait_threads'));
    const threadId = (await call(first.base, 'GET', `/sessions/${session.id}/threads`)).body.threads[0].id;
    const threadEvents = async (base: string) =>
      (await call(base, 'GET', `/sessions/${session.id}/threads/${threadId}/events?limit=1000`)).body.events as any[];
    for (let i = 0; i < 400 && !(await threadEvents(first.base)).some((e) => e.type === 'agent.message'); i++) await new Promise((r) => setTimeout(r, 50));

    await first.kill('SIGKILL');

    fake.enqueueFor(
      'COORDINATOR',
      { kind: 'tool_call', name: 'message_thread', id: 'toolu_m', input: { thread_id: threadId, message: 'continue' } },
      {
        kind: 'tool_call',
        name: 'wait_threads',
        id: 'toolu_w2',
        input: {},
      },
      { kind: 'text', text: 'all done' },
    );
    fake.enqueueFor('SPECIALIST', { kind: 'text', text: 'finished the research' });
    const second = await crash.start(env);

    // Both turns ended as lost at once (not after RUNNER_STALE_MS); the session heard of the thread's end.
    const events = await waitForHistory(
      second.base,
      token,
      session.id,
      (ev) => ev.some((e) => e.type === 'session.status_idle') && ev.some((e) => e.type === 'thread.idle'),
      30_000,
    );
    expect(events.filter((e) => e.type === 'session.error').map((e) => e.error.type)).toEqual(['runner_lost']);
    expect(events.find((e) => e.type === 'thread.idle')).toMatchObject({ thread_id: threadId, stop_reason: { type: 'retries_exhausted' } });
    const lost = await threadEvents(second.base);
    expect(lost.filter((e) => e.type === 'session.error').map((e) => e.error.type)).toEqual(['runner_lost']);
    expect(lost.filter((e) => e.type === 'agent.message' && e.final).map((e) => e.text)).toEqual(['halfway there']);
    expect(lost.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'retries_exhausted' } });
    // The thread's own stream is complete: it replays to the lost turn's end.
    const stream = await fetch(`${second.base}/sessions/${session.id}/threads/${threadId}/events/stream`, { headers: { authorization: `Bearer ${token}` } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let text = '';
    while (!text.includes('session.status_idle')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();

    // Work goes on: the coordinator messages the same thread, which remembers its earlier words.
    expect((await say(second.base, token, session.id, 'go on')).status).toBe(202);
    const after = await waitForHistory(
      second.base,
      token,
      session.id,
      (ev) => ev.some((e) => e.type === 'agent.message' && e.final && e.text === 'all done'),
      30_000,
    );
    expect(after.filter((e) => e.type === 'thread.message').map((e) => e.text)).toEqual(['halfway there', 'finished the research']);
    const specialistCalls = fake.requests.filter((r) => JSON.stringify(r.body?.system ?? '').includes('SPECIALIST'));
    expect(JSON.stringify(specialistCalls.at(-1)!.body.messages)).toContain('halfway there');
    await second.kill('SIGTERM');
  }, 120_000);
});
