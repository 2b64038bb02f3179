// Routines over HTTP: fields and limits, upcoming runs, manual runs, pause/resume/archive, a
// schedule fired by the scheduler (fake clock), each error type's effect, the missed-fire
// policy, and one fire per occurrence when several schedulers tick at once.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type ApiResponse } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents, waitFor } from '../helpers/sessions.js';
import { prisma } from '../../src/db/client.js';
import { schedulerTick } from '../../src/routines/scheduler.js';

let s: TestServer;
let fake: FakeProvider;
beforeAll(async () => {
  process.env.SCHEDULER_TICK_MS = '3600000'; // the test drives the scheduler itself
  process.env.ROUTINE_SCHEDULER = 'inprocess'; // even on Redis (BullMQ schedules: routines-redis.test.ts)
  fake = await startFakeProvider();
  s = await startTestServer({ anthropicApiKey: 'sk', anthropicBaseUrl: fake.anthropicBaseUrl });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});
beforeEach(() => fake.reset());

const expectError = (res: ApiResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
};
const hello = [{ type: 'user.message', content: [{ type: 'text', text: 'good morning' }] }];
async function newAgent(body = {}) {
  return (await s.api('POST', '/agents', { body })).body.agent;
}
async function routine(body: Record<string, unknown>) {
  const res = await s.api('POST', '/routines', { body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

describe('create and read', () => {
  it('weekdays at 09:00 Europe/Berlin: all fields, five upcoming runs', async () => {
    const agent = await newAgent();
    const r = await routine({
      name: 'Morning report',
      description: 'daily',
      metadata: { team: 'ops' },
      target: { type: 'new_session', agent: agent.id },
      initial_events: hello,
      schedule: { type: 'cron', expression: '0 9 * * 1-5', timezone: 'Europe/Berlin' },
      budget: { type: 'limit', max_list_cost: { amount: '25', currency: 'USD' } },
    });
    expect(r).toMatchObject({
      id: expect.stringMatching(/^rtn_/),
      name: 'Morning report',
      description: 'daily',
      metadata: { team: 'ops' },
      target: { type: 'new_session', agent: agent.id },
      initial_events: hello,
      schedule: { type: 'cron', expression: '0 9 * * 1-5', timezone: 'Europe/Berlin', last_run_at: null },
      budget: { type: 'limit', max_list_cost: { amount: '25', currency: 'USD' } },
      status: 'active',
      paused_reason: null,
      archived_at: null,
    });
    expect(r.schedule.upcoming_runs_at).toHaveLength(5);
    for (const at of r.schedule.upcoming_runs_at) {
      const d = new Date(at);
      const berlin = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', weekday: 'short', hour: '2-digit', minute: '2-digit' }).format(d);
      expect(berlin).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 09:00$/);
    }
    expect((await s.api('GET', `/routines/${r.id}`)).body).toEqual(r);
    expect((await s.api('GET', '/routines')).body.data.map((x: any) => x.id)).toContain(r.id);
  });

  it('validates every field', async () => {
    const agent = await newAgent();
    const base = { name: 'x', target: { type: 'new_session', agent: agent.id }, initial_events: hello };
    expectError(await s.api('POST', '/routines', { body: { ...base, name: '' } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/routines', { body: { ...base, name: 'n'.repeat(257) } }), 400, 'invalid_request');
    expect((await s.api('POST', '/routines', { body: { ...base, name: 'n'.repeat(256) } })).status).toBe(201);
    expectError(await s.api('POST', '/routines', { body: { ...base, description: 'd'.repeat(2049) } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/routines', { body: { ...base, initial_events: [] } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/routines', { body: { ...base, initial_events: Array(51).fill(hello[0]) } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/routines', { body: { name: 'x', target: base.target } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/routines', { body: { ...base, metadata: { ['k'.repeat(65)]: 'v' } } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/routines', { body: { ...base, metadata: { k: 'v'.repeat(513) } } }), 400, 'invalid_request');
    expectError(
      await s.api('POST', '/routines', { body: { ...base, schedule: { type: 'cron', expression: '* * * *', timezone: 'UTC' } } }),
      400,
      'invalid_request',
    );
    expectError(
      await s.api('POST', '/routines', { body: { ...base, schedule: { type: 'cron', expression: '61 * * * *', timezone: 'UTC' } } }),
      400,
      'invalid_request',
    );
    expectError(
      await s.api('POST', '/routines', { body: { ...base, schedule: { type: 'cron', expression: '0 9 * * *', timezone: 'Mars/Olympus' } } }),
      400,
      'invalid_request',
    );
    expectError(
      await s.api('POST', '/routines', { body: { ...base, target: { type: 'new_session', agent: agent.id, vault_ids: Array(11).fill('v') } } }),
      400,
      'invalid_request',
    );
    expectError(await s.api('POST', '/routines', { body: { ...base, target: { type: 'elsewhere' } } }), 400, 'invalid_request');
  });

  it('PATCH: every field optional; description, metadata values, schedule and budget clear with null', async () => {
    const agent = await newAgent();
    const r = await routine({
      name: 'p',
      description: 'd',
      metadata: { a: '1', b: '2' },
      target: { type: 'new_session', agent: agent.id },
      initial_events: hello,
      schedule: { type: 'cron', expression: '0 * * * *', timezone: 'UTC' },
      budget: { type: 'limit', max_list_cost: { amount: '5', currency: 'USD' } },
    });
    const res = await s.api('PATCH', `/routines/${r.id}`, {
      body: { description: null, metadata: { a: null, c: '3' }, schedule: null, budget: null, name: 'renamed' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'renamed', description: null, metadata: { b: '2', c: '3' }, schedule: null, budget: null });
    const back = await s.api('PATCH', `/routines/${r.id}`, { body: { schedule: { type: 'cron', expression: '*/15 * * * *', timezone: 'Asia/Tokyo' } } });
    expect(back.body.schedule.upcoming_runs_at).toHaveLength(5);
  });
});

describe('running', () => {
  it('run now starts a session whose first turn runs; the budget is copied onto it', async () => {
    const agent = await newAgent();
    const r = await routine({
      name: 'now',
      target: { type: 'new_session', agent: agent.id },
      initial_events: hello,
      budget: { type: 'limit', max_list_cost: { amount: '7', currency: 'USD' } },
    });
    fake.enqueue({ kind: 'text', text: 'morning!' });
    const run = await s.api('POST', `/routines/${r.id}/run`);
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({
      id: expect.stringMatching(/^rrun_/),
      routine_id: r.id,
      trigger_context: { type: 'manual' },
      session_id: expect.stringMatching(/^sess_/),
      error: null,
      agent: { id: agent.id },
    });
    const events = await waitForEvents(s, run.body.session_id, 'session.status_idle');
    expect(events.find((e) => e.type === 'agent.message' && e.final).text).toBe('morning!');
    expect((await s.api('GET', `/sessions/${run.body.session_id}`)).body.session.budget.max_list_cost.amount).toBe('7');
    const runs = await s.api('GET', `/routines/${r.id}/runs`);
    expect(runs.body.data.map((x: any) => x.id)).toEqual([run.body.id]);
    expect((await s.api('GET', `/routines/${r.id}`)).body.schedule).toBeNull();
  });

  it('the scheduler fires a due occurrence (fake clock) and records scheduled_at and last_run_at', async () => {
    const agent = await newAgent();
    const r = await routine({
      name: 'every minute',
      target: { type: 'new_session', agent: agent.id },
      initial_events: hello,
      schedule: { type: 'cron', expression: '* * * * *', timezone: 'UTC' },
    });
    const owed = (await prisma.routine.findUniqueOrThrow({ where: { id: r.id } })).nextRunAt!;
    fake.enqueue({ kind: 'text', text: 'scheduled hello' });
    expect(await schedulerTick(new Date(owed.getTime() - 1000))).not.toContain(r.id);
    expect(await schedulerTick(new Date(owed.getTime() + 1000))).toContain(r.id);
    const runs = (await s.api('GET', `/routines/${r.id}/runs`)).body.data;
    expect(runs).toHaveLength(1);
    expect(runs[0].trigger_context).toEqual({ type: 'schedule', scheduled_at: owed.toISOString() });
    await waitForEvents(s, runs[0].session_id, 'session.status_idle');
    const detail = (await s.api('GET', `/routines/${r.id}`)).body;
    expect(detail.schedule.last_run_at).toEqual(expect.any(String));
    expect(await schedulerTick(new Date(owed.getTime() + 2000))).not.toContain(r.id); // already fired
  });

  it('several schedulers ticking at once fire an occurrence exactly once', async () => {
    const agent = await newAgent();
    const r = await routine({
      name: 'once',
      target: { type: 'new_session', agent: agent.id },
      initial_events: hello,
      schedule: { type: 'cron', expression: '* * * * *', timezone: 'UTC' },
    });
    const owed = (await prisma.routine.findUniqueOrThrow({ where: { id: r.id } })).nextRunAt!;
    const at = new Date(owed.getTime() + 500);
    await Promise.all([schedulerTick(at), schedulerTick(at), schedulerTick(at), schedulerTick(at)]);
    expect((await s.api('GET', `/routines/${r.id}/runs`)).body.data).toHaveLength(1);
  });

  it('missed fires: occurrences within the window coalesce into one catch-up fire; older ones are skipped', async () => {
    const agent = await newAgent();
    const r = await routine({
      name: 'catch up',
      target: { type: 'new_session', agent: agent.id },
      initial_events: hello,
      schedule: { type: 'cron', expression: '*/5 * * * *', timezone: 'UTC' },
    });
    const now = new Date('2026-11-23T10:17:30Z');
    await prisma.routine.update({ where: { id: r.id }, data: { nextRunAt: new Date('2026-11-23T09:50:00Z') } }); // down since 09:50
    await schedulerTick(now);
    const runs = (await s.api('GET', `/routines/${r.id}/runs`)).body.data;
    expect(runs).toHaveLength(1);
    expect(runs[0].trigger_context.scheduled_at).toBe('2026-11-23T10:15:00.000Z');
    expect((await prisma.routine.findUniqueOrThrow({ where: { id: r.id } })).nextRunAt!.toISOString()).toBe('2026-11-23T10:20:00.000Z');

    const old = await routine({
      name: 'too old',
      target: { type: 'new_session', agent: agent.id },
      initial_events: hello,
      schedule: { type: 'cron', expression: '0 3 * * *', timezone: 'UTC' },
    });
    await prisma.routine.update({ where: { id: old.id }, data: { nextRunAt: new Date('2026-11-23T03:00:00Z') } });
    await schedulerTick(now);
    expect((await s.api('GET', `/routines/${old.id}/runs`)).body.data).toHaveLength(0);
    expect((await prisma.routine.findUniqueOrThrow({ where: { id: old.id } })).nextRunAt!.toISOString()).toBe('2026-11-24T03:00:00.000Z');
  });
});

describe('pause, resume, archive', () => {
  it('manual pause and resume; archive empties the upcoming runs', async () => {
    const agent = await newAgent();
    const r = await routine({
      name: 'pr',
      target: { type: 'new_session', agent: agent.id },
      initial_events: hello,
      schedule: { type: 'cron', expression: '0 * * * *', timezone: 'UTC' },
    });
    const paused = await s.api('POST', `/routines/${r.id}/pause`);
    expect(paused.body).toMatchObject({ status: 'paused', paused_reason: { type: 'manual' } });
    expect(paused.body.schedule.upcoming_runs_at).toEqual([]);
    const resumed = await s.api('POST', `/routines/${r.id}/resume`);
    expect(resumed.body).toMatchObject({ status: 'active', paused_reason: null });
    expect(resumed.body.schedule.upcoming_runs_at).toHaveLength(5);
    const archived = await s.api('POST', `/routines/${r.id}/archive`);
    expect(archived.body.archived_at).toEqual(expect.any(String));
    expect(archived.body.schedule.upcoming_runs_at).toEqual([]);
    expectError(await s.api('POST', `/routines/${r.id}/run`), 409, 'conflict');
    expectError(await s.api('PATCH', `/routines/${r.id}`, { body: { name: 'x' } }), 409, 'conflict');
  });
});

describe('error types', () => {
  const lastRun = async (id: string) => (await s.api('GET', `/routines/${id}/runs`)).body.data[0];

  it('an archived agent: run error agent_archived_error, the routine pauses with that reason', async () => {
    const agent = await newAgent();
    const r = await routine({ name: 'e1', target: { type: 'new_session', agent: agent.id }, initial_events: hello });
    await s.api('POST', `/agents/${agent.id}/archive`);
    const run = await s.api('POST', `/routines/${r.id}/run`);
    expect(run.body).toMatchObject({ session_id: null, error: { type: 'agent_archived_error' } });
    expect((await s.api('GET', `/routines/${r.id}`)).body).toMatchObject({
      status: 'paused',
      paused_reason: { type: 'error', error: { type: 'agent_archived_error' } },
    });
  });

  it('a missing agent and a missing session pause; environments and vaults that do not exist pause', async () => {
    const agent = await newAgent();
    const missing = await routine({ name: 'e2', target: { type: 'new_session', agent: 'agent_gone' }, initial_events: hello });
    await s.api('POST', `/routines/${missing.id}/run`);
    expect((await lastRun(missing.id)).error.type).toBe('agent_not_found_error');
    expect((await s.api('GET', `/routines/${missing.id}`)).body.status).toBe('paused');
    const noSession = await routine({ name: 'e3', target: { type: 'session', session_id: 'sess_gone' }, initial_events: hello });
    await s.api('POST', `/routines/${noSession.id}/run`);
    expect((await lastRun(noSession.id)).error.type).toBe('session_not_found_error');
    const env = await routine({ name: 'e4', target: { type: 'new_session', agent: agent.id, environment_id: 'env_1' }, initial_events: hello });
    await s.api('POST', `/routines/${env.id}/run`);
    expect((await lastRun(env.id)).error.type).toBe('environment_not_found_error');
    const vault = await routine({ name: 'e5', target: { type: 'new_session', agent: agent.id, vault_ids: ['vlt_1'] }, initial_events: hello });
    await s.api('POST', `/routines/${vault.id}/run`);
    expect((await lastRun(vault.id)).error.type).toBe('vault_not_found_error');
  });

  it('an archived target session pauses with session_archived_error', async () => {
    const { session } = await readySession(s);
    await s.api('POST', `/sessions/${session.id}/archive`);
    const r = await routine({ name: 'e6', target: { type: 'session', session_id: session.id }, initial_events: hello });
    await s.api('POST', `/routines/${r.id}/run`);
    expect((await lastRun(r.id)).error.type).toBe('session_archived_error');
    expect((await s.api('GET', `/routines/${r.id}`)).body.status).toBe('paused');
  });

  it('a busy target session is transient (session_busy_error): the routine stays active; an idle one gets a turn, its own cap untouched', async () => {
    const { session } = await readySession(s, {}, { budget: { type: 'limit', max_list_cost: { amount: '10000', currency: 'USD' } } });
    const r = await routine({
      name: 'e7',
      target: { type: 'session', session_id: session.id },
      initial_events: hello,
      budget: { type: 'limit', max_list_cost: { amount: '50', currency: 'USD' } },
    });
    fake.enqueue({ kind: 'hang' });
    await sendText(s, session.id, 'busy now');
    await waitFor(async () => (await s.api('GET', `/sessions/${session.id}`)).body.session.status === 'running');
    const busy = await s.api('POST', `/routines/${r.id}/run`);
    expect(busy.body.error.type).toBe('session_busy_error');
    expect((await s.api('GET', `/routines/${r.id}`)).body.status).toBe('active');
    await s.api('POST', `/sessions/${session.id}/interrupt`);
    await waitFor(async () => (await s.api('GET', `/sessions/${session.id}`)).body.session.status === 'idle');
    fake.enqueue({ kind: 'text', text: 'routine turn' });
    const ok = await s.api('POST', `/routines/${r.id}/run`);
    expect(ok.body).toMatchObject({ session_id: session.id, error: null });
    const events = await waitForEvents(s, session.id, 'session.status_idle', 2);
    expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });
    // The routine's budget is a per-fire allowance, not a new cap for the session.
    expect((await s.api('GET', `/sessions/${session.id}`)).body.session.budget).toMatchObject({ max_list_cost: { amount: '10000' }, reached: false });
  });

  it('an empty wallet is transient (insufficient_credits_error): the routine stays active', async () => {
    const { session } = await readySession(s);
    const universeId = (await prisma.session.findUniqueOrThrow({ where: { id: session.id } })).universeId;
    await prisma.universe.update({ where: { id: universeId }, data: { balanceNanoUsd: 0n } });
    const r = await routine({ name: 'e8', target: { type: 'session', session_id: session.id }, initial_events: hello });
    await s.api('POST', `/routines/${r.id}/run`);
    expect((await lastRun(r.id)).error.type).toBe('insufficient_credits_error');
    expect((await s.api('GET', `/routines/${r.id}`)).body.status).toBe('active');
    await prisma.universe.update({ where: { id: universeId }, data: { balanceNanoUsd: 5_000_000_000n } });
  });

  it('a new_session fire with an empty wallet records insufficient_credits_error and makes no session', async () => {
    const agent = await newAgent();
    const universeId = (await prisma.agent.findUniqueOrThrow({ where: { id: agent.id } })).universeId;
    const sessionsBefore = await prisma.session.count({ where: { agentId: agent.id } });
    await prisma.universe.update({ where: { id: universeId }, data: { balanceNanoUsd: 0n } });
    try {
      const r = await routine({ name: 'e9', target: { type: 'new_session', agent: agent.id }, initial_events: hello });
      const run = await s.api('POST', `/routines/${r.id}/run`);
      expect(run.body).toMatchObject({ session_id: null, error: { type: 'insufficient_credits_error' } });
      expect(await prisma.session.count({ where: { agentId: agent.id } })).toBe(sessionsBefore);
      expect((await s.api('GET', `/routines/${r.id}`)).body.status).toBe('active');
    } finally {
      await prisma.universe.update({ where: { id: universeId }, data: { balanceNanoUsd: 5_000_000_000n } });
    }
  });

  it('a file of initial_events deleted since the routine was saved is not a missing agent or session: run_rejected_error', async () => {
    const agent = await newAgent();
    const form = new FormData();
    form.append('file', new Blob(['hello'], { type: 'text/plain' }), 'notes.txt');
    const file = (await s.api('POST', '/files', { form })).body;
    const withFile = [{ type: 'user.message', content: [{ type: 'document', source: { type: 'file', file_id: file.id } }] }];
    const fresh = await routine({ name: 'e10', target: { type: 'new_session', agent: agent.id }, initial_events: withFile });
    const { session } = await readySession(s);
    const into = await routine({ name: 'e11', target: { type: 'session', session_id: session.id }, initial_events: withFile });
    expect((await s.api('DELETE', `/files/${file.id}`)).status).toBe(200);
    for (const r of [fresh, into]) {
      const run = await s.api('POST', `/routines/${r.id}/run`);
      expect(run.body.error.type, JSON.stringify(run.body)).toBe('run_rejected_error');
      expect(run.body.error.message).toContain(file.id);
      expect((await s.api('GET', `/routines/${r.id}`)).body.paused_reason).toEqual({ type: 'error', error: { type: 'run_rejected_error' } });
    }
  });
});

describe("a routine's budget on a target session (a per-fire allowance on top of consumed cost)", () => {
  // 5000 input tokens at $3/M: 1.5 cents, over a 1-cent allowance as soon as usage arrives.
  const expensive = { kind: 'text' as const, text: 'a long answer that should be cut off', chunks: 10, delayMs: 20, usage: { input: 5000, output: 50 } };

  it("ends the fire's turn at the allowance; the session keeps its cap and takes the next turn", async () => {
    const { session } = await readySession(s, {}, { budget: { type: 'limit', max_list_cost: { amount: '10000', currency: 'USD' } } });
    const r = await routine({
      name: 'allowance',
      target: { type: 'session', session_id: session.id },
      initial_events: hello,
      budget: { type: 'limit', max_list_cost: { amount: '1', currency: 'USD' } },
    });
    fake.enqueue(expensive);
    expect((await s.api('POST', `/routines/${r.id}/run`)).body).toMatchObject({ session_id: session.id, error: null });
    const fired = await waitForEvents(s, session.id, 'session.status_idle');
    expect(fired.at(-1).stop_reason).toEqual({ type: 'budget_reached' });
    const after = (await s.api('GET', `/sessions/${session.id}`)).body.session;
    expect(after.budget).toMatchObject({ max_list_cost: { amount: '10000' }, reached: false, reached_at: null });
    // The allowance was that fire's only: the user's own turn spends past it.
    fake.enqueue(expensive);
    expect((await sendText(s, session.id, 'my own question')).status).toBe(202);
    const own = await waitForEvents(s, session.id, 'session.status_idle', 2);
    expect(own.at(-1).stop_reason).toEqual({ type: 'end_turn' });
    const row = await prisma.session.findUniqueOrThrow({ where: { id: session.id } });
    expect(row.consumedNanoUsd).toBeGreaterThan(20_000_000n); // both calls' 1.5 cents (the first cut at its allowance)
  });

  it("a session whose own budget is reached is not reopened by a fire: run_rejected_error, the session's budget unchanged", async () => {
    const { session } = await readySession(s, {}, { budget: { type: 'limit', max_list_cost: { amount: '1', currency: 'USD' } } });
    fake.enqueue(expensive);
    await sendText(s, session.id, 'spend it all');
    await waitForEvents(s, session.id, 'session.status_idle');
    expect((await s.api('GET', `/sessions/${session.id}`)).body.session.budget).toMatchObject({ max_list_cost: { amount: '1' }, reached: true });
    const r = await routine({
      name: 'reached',
      target: { type: 'session', session_id: session.id },
      initial_events: hello,
      budget: { type: 'limit', max_list_cost: { amount: '50', currency: 'USD' } },
    });
    const run = await s.api('POST', `/routines/${r.id}/run`);
    expect(run.body).toMatchObject({ session_id: null, error: { type: 'run_rejected_error' } });
    expect(run.body.error.message).toMatch(/budget/);
    expect((await s.api('GET', `/sessions/${session.id}`)).body.session.budget).toMatchObject({ max_list_cost: { amount: '1' }, reached: true });
    expect((await s.api('GET', `/routines/${r.id}`)).body.paused_reason).toEqual({ type: 'error', error: { type: 'run_rejected_error' } });
  });

  it('a session without a budget gets none, and one whose budget was removed stays without', async () => {
    const { session: none } = await readySession(s);
    const { session: removed } = await readySession(s, {}, { budget: { type: 'limit', max_list_cost: { amount: '100', currency: 'USD' } } });
    expect((await s.api('PATCH', `/sessions/${removed.id}`, { body: { budget: null } })).status).toBe(200);
    for (const target of [none, removed]) {
      const r = await routine({
        name: 'no cap',
        target: { type: 'session', session_id: target.id },
        initial_events: hello,
        budget: { type: 'limit', max_list_cost: { amount: '50', currency: 'USD' } },
      });
      fake.enqueue({ kind: 'text', text: 'fired' });
      expect((await s.api('POST', `/routines/${r.id}/run`)).body).toMatchObject({ session_id: target.id, error: null });
      await waitForEvents(s, target.id, 'session.status_idle');
      expect((await s.api('GET', `/sessions/${target.id}`)).body.session.budget).toBeNull();
    }
  });
});
