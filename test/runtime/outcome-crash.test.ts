// kill -9 while an outcome's grader is answering (issue #33): after the restart the session is
// never left running: the lost evaluation ends with runner_lost, the outcome `interrupted`, the
// session idle; a new outcome can then be defined and is graded. PGlite and PostgreSQL + Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startChildServer, api, type ChildServer } from '../helpers/child-server.js';
import { CONFIGS, deploymentEnv, dropSchemas, freePort, idleSession, waitForHistory } from '../helpers/durability.js';

let fake: FakeProvider;
const children: ChildServer[] = [];
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await Promise.all(children.map((c) => c.kill('SIGKILL')));
  await fake?.close();
  await dropSchemas();
});

const define = (base: string, token: string, sessionId: string, rubric: string) =>
  api(base, token, 'POST', `/sessions/${sessionId}/events`, { events: [{ type: 'user.define_outcome', description: 'do it', rubric }] });

describe.each(CONFIGS)('kill -9 during an evaluation ($name)', ({ postgres }) => {
  it('the restarted instance ends the lost evaluation: outcome interrupted, session idle, a new outcome works', async () => {
    const port = await freePort();
    const { env, token } = deploymentEnv({ postgres, providerUrl: fake.anthropicBaseUrl, extra: { PORT: String(port), RUNNER_STALE_MS: '600000' } });
    const first = await startChildServer(env);
    children.push(first);
    const { session } = await idleSession(first.base, token);
    const tag = postgres ? 'pg' : 'lite';
    expect((await define(first.base, token, session.id, `- lost ${tag}\ngrader-script: hang`)).status).toBe(202);
    await waitForHistory(first.base, token, session.id, (ev) => ev.some((e) => e.type === 'outcome.evaluation_started'));
    await first.kill('SIGKILL');

    const second = await startChildServer(env);
    children.push(second);
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
