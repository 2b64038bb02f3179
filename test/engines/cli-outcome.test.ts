// An outcome on a CLI engine (issue #33): the grader is the service's, not the engine's. The real
// pi CLI runs the agent's turns in the jail; the grader asks for a revision, and the feedback
// reaches the CLI as its next turn's input; the second evaluation is satisfied.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ENGINE_CASES, startCliEngineServer } from '../helpers/cli-engines.js';
import type { TestServer } from '../helpers/server.js';
import type { FakeProvider } from '../fake-provider/server.js';
import { readySession, waitForEvents } from '../helpers/sessions.js';

const c = CLI_ENGINE_CASES.find((x) => x.agentType === 'pi')!;
const isGrader = (r: { body: any }) => JSON.stringify(r.body).includes('[outcome-grader]');

describe('an outcome on a CLI engine (pi)', () => {
  let s: TestServer;
  let fake: FakeProvider;
  beforeAll(async () => {
    ({ s, fake } = await startCliEngineServer(c.agentType));
  }, 900_000);
  afterAll(async () => {
    await s?.stop();
    await fake?.close();
  });

  it('needs_revision then satisfied: the feedback is the CLI’s next turn input', async () => {
    const { session } = await readySession(s, { agentType: c.agentType, llm: c.llm });
    fake.enqueue({ kind: 'text', text: 'first draft' }, { kind: 'text', text: 'revised draft' });
    const sent = await s.api('POST', `/sessions/${session.id}/events`, {
      body: { events: [{ type: 'user.define_outcome', description: 'Draft the release note', rubric: '- mentions outcomes\ngrader-script: fail pass' }] },
    });
    expect(sent.status).toBe(202);
    const events = await waitForEvents(s, session.id, 'session.status_idle', 1, 120_000);
    expect(events.filter((e) => e.type === 'outcome.evaluation_ended').map((e) => e.result)).toEqual(['needs_revision', 'satisfied']);
    expect(events.at(-1).stop_reason).toMatchObject({ type: 'outcome', result: 'satisfied' });
    const agentCalls = fake.requests.filter((r) => !isGrader(r));
    // The CLI's first call carried the description; a later one the grader's feedback.
    expect(JSON.stringify(agentCalls[0]!.body)).toContain('Draft the release note');
    expect(agentCalls.some((r) => JSON.stringify(r.body).includes('not yet: mentions outcomes'))).toBe(true);
    // The grader saw the CLI's final reply, not its conversation.
    const graderCalls = fake.requests.filter(isGrader);
    expect(JSON.stringify(graderCalls[0]!.body.messages)).toContain('first draft');
    expect(JSON.stringify(graderCalls[0]!.body.messages)).not.toContain('Draft the release note\\n\\n<outcome-rubric>');
  }, 300_000);
});
