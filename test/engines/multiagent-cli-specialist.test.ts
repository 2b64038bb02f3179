// A CLI-engine specialist (multiagent, issue #32): a hermes coordinator delegates to a `pi`
// agent; the real pi CLI from npm runs the thread's turn in the session's own sandbox (the
// coordinator's jail), through the gateway to the fake provider, and its reply comes back to the
// coordinator's wait_threads and onto the session's stream as thread.message.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { config } from '../../src/config.js';
import { startCliEngineServer } from '../helpers/cli-engines.js';
import type { TestServer } from '../helpers/server.js';
import type { FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents } from '../helpers/sessions.js';

let s: TestServer;
let fake: FakeProvider;
beforeAll(async () => {
  ({ s, fake } = await startCliEngineServer('pi'));
}, 300_000);
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});

describe('a CLI-engine specialist', () => {
  it('runs its thread with the real CLI in the session’s sandbox and its reply reaches the coordinator', async () => {
    const specialist = (await s.api('POST', '/agents', { body: { agentType: 'pi', llm: 'claude-sonnet-4-5', prompt: 'You are the PI-SPECIALIST.' } })).body
      .agent;
    const { session } = await readySession(s, {
      llm: 'claude-sonnet-4-5',
      prompt: 'You are the CLI-COORDINATOR.',
      multiagent: { type: 'coordinator', agents: [{ type: 'agent', id: specialist.id, name: 'pi' }] },
    });
    fake.enqueueFor(
      'CLI-COORDINATOR',
      { kind: 'tool_call', name: 'delegate', id: 'toolu_d', input: { agent: 'pi', message: 'say hello from pi' } },
      { kind: 'tool_call', name: 'wait_threads', id: 'toolu_w', input: {} },
      { kind: 'text', text: 'pi answered' },
    );
    fake.enqueueFor(
      'PI-SPECIALIST',
      {
        kind: 'tool_call',
        reasoning: 'Running it',
        name: 'bash',
        input: { command: 'echo from-the-thread > /workspace/made-by-thread.txt' },
        id: 'toolu_shell_1',
        text: 'writing',
      },
      { kind: 'text', text: 'hello from the pi CLI' },
    );
    await sendText(s, session.id, 'ask pi');
    const events = await waitForEvents(s, session.id, 'session.status_idle', 1, 120_000);
    const thread = events.find((e) => e.type === 'thread.started');
    expect(thread.agent).toMatchObject({ id: specialist.id, name: 'pi' });
    expect(events.find((e) => e.type === 'thread.message')).toMatchObject({ thread_id: thread.thread_id, text: 'hello from the pi CLI' });
    const waited = events.find((e) => e.type === 'agent.tool_result' && e.part.call_id === 'toolu_w');
    expect(waited.part.status).toBe('ok');
    expect(JSON.stringify(waited.part.result)).toContain('hello from the pi CLI');
    expect(events.filter((e) => e.type === 'agent.message' && e.final).at(-1).text).toBe('pi answered');
    // The thread's shell ran in the coordinator's sandbox: the file is in the session's workspace.
    expect(fs.readFileSync(path.join(config().dataDir, 'sandboxes', session.id, 'workspace', 'made-by-thread.txt'), 'utf8')).toBe('from-the-thread\n');
    const detail = (await s.api('GET', `/sessions/${session.id}/threads/${thread.thread_id}`)).body.thread;
    expect(detail).toMatchObject({ agentType: 'pi', status: 'idle', turns: 1 });
    // The CLI's model call went through the gateway (the provider saw the service's key, not the CLI's).
    const piCall = fake.requests.find((r) => JSON.stringify(r.body?.system ?? '').includes('PI-SPECIALIST'))!;
    expect(JSON.stringify(piCall.body.messages)).toContain('say hello from pi');
  }, 180_000);
});
