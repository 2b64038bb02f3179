// Outcomes (issue #33) end to end through HTTP with the fake provider: the agent works, the
// grader (scripted by a `grader-script:` directive in the rubric) checks the work; revision turns,
// the iteration limit, a malformed verdict, an interrupt and the budget during grading, one
// active outcome at a time, the read-only file tools over /workspace, the webhook-free reads.
import { describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import type { FakeProvider } from '../fake-provider/server.js';
import { readySession, waitFor, waitForEvents, history, withServerOnFakeProvider } from '../helpers/sessions.js';

let s: TestServer;
let fake: FakeProvider;
withServerOnFakeProvider((started) => ({ s, fake } = started), { env: { MODEL_RETRY_BASE_MS: '20' } });

const defineOutcome = (sessionId: string, rubric: string, extra: Record<string, unknown> = {}) =>
  s.api('POST', `/sessions/${sessionId}/events`, {
    body: { events: [{ type: 'user.define_outcome', description: 'Write hello.txt saying hello', rubric, ...extra }] },
  });
const outcomes = async (sessionId: string) => (await s.api('GET', `/sessions/${sessionId}/outcomes`)).body.data;
const types = (events: any[]) => events.map((e) => e.type);
const isGrader = (r: { body: any }) => JSON.stringify(r.body).includes('[outcome-grader]');

describe('an outcome', () => {
  it('satisfied at the first evaluation: the session stays running while graded, then idles with stop_reason outcome', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'text', text: 'I wrote hello.txt' });
    const sent = await defineOutcome(session.id, '- hello.txt exists\n- it says hello\n\ngrader-script: pass');
    expect(sent.status).toBe(202);
    expect(sent.body.data[0]).toMatchObject({ type: 'user.define_outcome', description: 'Write hello.txt saying hello', max_iterations: 3, grader_llm: null });
    const outcomeId = sent.body.data[0].outcome_id;
    expect(outcomeId).toMatch(/^outc_/);
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(types(events)).toEqual([
      'user.define_outcome',
      'session.status_running',
      ...types(events).filter((t) => t === 'agent.message'),
      'outcome.evaluation_started',
      'outcome.evaluation_ended',
      'session.status_idle',
    ]);
    const ended = events.find((e) => e.type === 'outcome.evaluation_ended');
    expect(ended).toMatchObject({ outcome_id: outcomeId, iteration: 1, result: 'satisfied', summary: 'every criterion is met' });
    expect(ended.criteria).toEqual([
      { criterion: 'hello.txt exists', passed: true, explanation: 'met' },
      { criterion: 'it says hello', passed: true, explanation: 'met' },
    ]);
    expect(events.at(-1).stop_reason).toEqual({ type: 'outcome', outcome_id: outcomeId, result: 'satisfied' });
    // The agent got the description (and the rubric) as its turn's input; the grader its own context.
    const agentCall = fake.requests.find((r) => !isGrader(r))!;
    expect(JSON.stringify(agentCall.body.messages)).toContain('Write hello.txt saying hello');
    const graderCall = fake.requests.find(isGrader)!;
    expect(graderCall.body.messages).toHaveLength(1);
    expect(JSON.stringify(graderCall.body.messages)).toContain('<agent-final-reply>\\nI wrote hello.txt\\n</agent-final-reply>');
    expect(graderCall.body.tools.map((t: any) => t.name).sort()).toEqual(['list_files', 'read_file']);
    const [o] = await outcomes(session.id);
    expect(o).toMatchObject({ id: outcomeId, status: 'satisfied', iterations: 1, max_iterations: 3 });
    expect(o.evaluations).toHaveLength(1);
    expect(o.evaluations[0]).toMatchObject({ iteration: 1, result: 'satisfied', turn: 1 });
    const one = await s.api('GET', `/sessions/${session.id}/outcomes/${outcomeId}`);
    expect(one.body).toEqual(o);
    // The grader's call was metered like any model call of the session.
    const usage = await s.api('GET', `/sessions/${session.id}`);
    expect(usage.body.session.status).toBe('idle');
  });

  it('needs_revision then satisfied: two agent turns, two evaluations, the feedback as the revision turn input, history in order', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'text', text: 'first try' }, { kind: 'text', text: 'second try' });
    const sent = await defineOutcome(session.id, '- the file says hello\n- it ends with a newline\ngrader-script: fail pass');
    const outcomeId = sent.body.data[0].outcome_id;
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(types(events).filter((t) => t !== 'agent.message')).toEqual([
      'user.define_outcome',
      'session.status_running',
      'outcome.evaluation_started',
      'outcome.evaluation_ended',
      'system.message',
      'session.status_running',
      'outcome.evaluation_started',
      'outcome.evaluation_ended',
      'session.status_idle',
    ]);
    const evals = events.filter((e) => e.type === 'outcome.evaluation_ended');
    expect(evals.map((e) => [e.iteration, e.result])).toEqual([
      [1, 'needs_revision'],
      [2, 'satisfied'],
    ]);
    expect(evals[0].criteria[0]).toEqual({ criterion: 'the file says hello', passed: false, explanation: 'not yet: the file says hello' });
    const feedback = events.find((e) => e.type === 'system.message');
    expect(feedback.content[0].text).toContain('not yet: the file says hello');
    // The second agent call carried the feedback after the first reply.
    const agentCalls = fake.requests.filter((r) => !isGrader(r));
    expect(agentCalls).toHaveLength(2);
    expect(JSON.stringify(agentCalls[1]!.body.messages)).toContain('not yet: the file says hello');
    expect(events.filter((e) => e.type === 'session.status_idle')).toHaveLength(1);
    expect(events.at(-1).stop_reason).toEqual({ type: 'outcome', outcome_id: outcomeId, result: 'satisfied' });
    const [o] = await outcomes(session.id);
    expect(o.status).toBe('satisfied');
    expect(o.evaluations.map((e: any) => [e.iteration, e.turn, e.result])).toEqual([
      [1, 1, 'needs_revision'],
      [2, 2, 'satisfied'],
    ]);
  });

  it('max_iterations_reached after max_iterations evaluations that ask for revision', async () => {
    const { session } = await readySession(s);
    const sent = await defineOutcome(session.id, '- never good enough\ngrader-script: fail', { max_iterations: 2 });
    const outcomeId = sent.body.data[0].outcome_id;
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(events.filter((e) => e.type === 'outcome.evaluation_ended').map((e) => e.result)).toEqual(['needs_revision', 'needs_revision']);
    expect(events.at(-1).stop_reason).toEqual({ type: 'outcome', outcome_id: outcomeId, result: 'max_iterations_reached' });
    expect((await outcomes(session.id))[0]).toMatchObject({ status: 'max_iterations_reached', iterations: 2 });
  });

  it('a malformed verdict is asked for once more; malformed twice is a session.error and the outcome failed', async () => {
    const { session } = await readySession(s);
    await defineOutcome(session.id, '- something\ngrader-script: malformed pass');
    let events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(events.find((e) => e.type === 'outcome.evaluation_ended').result).toBe('satisfied');
    expect(fake.requests.filter(isGrader)).toHaveLength(2);

    const second = await readySession(s);
    const sent = await defineOutcome(second.session.id, '- something else\ngrader-script: malformed malformed pass');
    const outcomeId = sent.body.data[0].outcome_id;
    events = await waitForEvents(s, second.session.id, 'session.status_idle');
    const error = events.find((e) => e.type === 'session.error');
    expect(error.error).toMatchObject({ type: 'grader_error', retry_status: 'exhausted' });
    expect(error.error.message).toContain('malformed twice');
    expect(events.find((e) => e.type === 'outcome.evaluation_ended')).toMatchObject({ result: 'failed', criteria: [] });
    expect(events.at(-1).stop_reason).toEqual({ type: 'outcome', outcome_id: outcomeId, result: 'failed' });
    expect((await outcomes(second.session.id))[0].status).toBe('failed');
  });

  it('a second outcome while one is active is 409 with the envelope; a finished one can be followed by another', async () => {
    const { session } = await readySession(s);
    await defineOutcome(session.id, '- a\ngrader-script: hang');
    await waitForEvents(s, session.id, 'outcome.evaluation_started');
    const again = await defineOutcome(session.id, '- b');
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('conflict');
    expect(again.body.error.message).toContain('active outcome');
    // An interrupt during the evaluation: the outcome is interrupted, the session idles with end_turn.
    expect((await s.api('POST', `/sessions/${session.id}/interrupt`)).body.status).toBe('interrupting');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });
    expect((await outcomes(session.id))[0].status).toBe('interrupted');
    const next = await defineOutcome(session.id, '- c\ngrader-script: pass');
    expect(next.status).toBe(202);
    await waitForEvents(s, session.id, 'session.status_idle', 2);
    const list = await outcomes(session.id);
    expect(list.map((o: any) => o.status)).toEqual(['interrupted', 'satisfied']);
  });

  it("the grader reads the sandbox's files through its read-only tools", async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'tool_call', name: 'write_file', input: { path: 'hello.txt', content: 'hello from the agent' } }, { kind: 'text', text: 'done' });
    await defineOutcome(session.id, '- hello.txt says hello\ngrader-script: read:/workspace/hello.txt pass');
    await waitForEvents(s, session.id, 'session.status_idle', 1, 20_000);
    const graderCalls = fake.requests.filter(isGrader);
    expect(graderCalls).toHaveLength(2);
    expect(JSON.stringify(graderCalls[1]!.body.messages)).toContain('hello from the agent');
    expect((await outcomes(session.id))[0].status).toBe('satisfied');
  });

  it('validates the definition: rubric required, max_iterations 1 to 20, unknown fields refused', async () => {
    const { session } = await readySession(s);
    const bad = async (event: Record<string, unknown>) =>
      (await s.api('POST', `/sessions/${session.id}/events`, { body: { events: [{ type: 'user.define_outcome', description: 'x', ...event }] } })).status;
    expect(await bad({})).toBe(400);
    expect(await bad({ rubric: '' })).toBe(400);
    expect(await bad({ rubric: 'r', max_iterations: 0 })).toBe(400);
    expect(await bad({ rubric: 'r', max_iterations: 21 })).toBe(400);
    expect(await bad({ rubric: 'x'.repeat(50_001) })).toBe(400);
    expect(await bad({ rubric: 'r', extra: 1 })).toBe(400);
    expect((await s.api('GET', `/sessions/${session.id}/outcomes/outc_01jx00000000000000000000aa`)).status).toBe(404);
    expect((await s.api('GET', `/sessions/${session.id}/outcomes?page=garbage`)).status).toBe(400);
    await waitFor(async () => (await outcomes(session.id)).length === 0);
    expect(await history(s, session.id)).toEqual([]);
  });

  it('the budget reached while grading ends the run budget_reached and the outcome interrupted', async () => {
    const { session } = await readySession(s, {}, { budget: { type: 'limit', max_list_cost: { amount: '1', currency: 'USD' } } });
    await defineOutcome(session.id, '- costly\ngrader-script: costly');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(types(events)).toContain('outcome.evaluation_started');
    expect(events.at(-1).stop_reason).toEqual({ type: 'budget_reached' });
    expect((await outcomes(session.id))[0].status).toBe('interrupted');
    const got = (await s.api('GET', `/sessions/${session.id}`)).body.session.budget;
    expect(got.reached).toBe(true);
  });
});
