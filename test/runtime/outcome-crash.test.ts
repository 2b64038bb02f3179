// kill -9 while an outcome's grader is answering (issue #33): after the restart the session is
// never left running: the lost evaluation ends with runner_lost, the outcome `interrupted`, the
// session idle; a new outcome can then be defined and is graded. PGlite and PostgreSQL + Redis.
import { describe, expect, it } from 'vitest';
import { api } from '../helpers/child-server.js';
import { CONFIGS, idleSession, waitForHistory, withCrashDeployments } from '../helpers/durability.js';

const crash = withCrashDeployments();

const define = (base: string, token: string, sessionId: string, rubric: string) =>
  api(base, token, 'POST', `/sessions/${sessionId}/events`, { events: [{ type: 'user.define_outcome', description: 'do it', rubric }] });

describe.each(CONFIGS)('kill -9 during an evaluation ($name)', ({ postgres }) => {
  it('the restarted instance ends the lost evaluation: outcome interrupted, session idle, a new outcome works', async () => {
    const { env, token } = await crash.deployment(postgres);
    const first = await crash.start(env);
    const { session } = await idleSession(first.base, token);
    const tag = postgres ? 'pg' : 'lite';
    expect((await define(first.base, token, session.id, `- lost ${tag}\ngrader-script: hang`)).status).toBe(202);
    await waitForHistory(first.base, token, session.id, (ev) => ev.some((e) => e.type === 'outcome.evaluation_started'));
    await first.kill('SIGKILL');

    const second = await crash.start(env);
    const events = await waitForHistory(second.base, token, session.id, (ev) => ev.some((e) => e.type === 'session.status_idle'), 30_000);
    expect(events.filter((e) => e.type === 'session.error').map((e) => e.error.type)).toEqual(['runner_lost']);
    expect((await api(second.base, token, 'GET', `/sessions/${session.id}`)).body.session.status).toBe('idle');
    const list = (await api(second.base, token, 'GET', `/sessions/${session.id}/outcomes`)).body.data;
    expect(list.map((o: any) => o.status)).toEqual(['interrupted']);

    expect((await define(second.base, token, session.id, `- again ${tag}\ngrader-script: pass`)).status).toBe(202);
    const after = await waitForHistory(second.base, token, session.id, (ev) => ev.filter((e) => e.type === 'session.status_idle').length >= 2, 30_000);
    expect(after.at(-1).stop_reason).toMatchObject({ type: 'outcome', result: 'satisfied' });
    await second.kill('SIGTERM');
  }, 120_000);
});
