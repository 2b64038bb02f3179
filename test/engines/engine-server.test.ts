// A CLI engine kept running as the sandbox's server (src/engines/cli/engine-server.ts), over HTTP
// with the real opencode from npm in the jail: after ENGINE_SERVER_IDLE_MS without a turn the
// server stops (an idle opencode server holds hundreds of MB), and the next turn starts it again
// and continues the same conversation from the session's storage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jailProcesses, startCliEngineServer } from '../helpers/cli-engines.js';
import type { TestServer } from '../helpers/server.js';
import type { FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitFor, waitForEvents } from '../helpers/sessions.js';

describe('an engine server without turns', () => {
  let s: TestServer;
  let fake: FakeProvider;
  const before = process.env.ENGINE_SERVER_IDLE_MS;
  beforeAll(async () => {
    process.env.ENGINE_SERVER_IDLE_MS = '1500';
    ({ s, fake } = await startCliEngineServer('opencode'));
  }, 900_000);
  afterAll(async () => {
    if (before === undefined) delete process.env.ENGINE_SERVER_IDLE_MS;
    else process.env.ENGINE_SERVER_IDLE_MS = before;
    await s?.stop();
    await fake?.close();
  });

  it('stops after its idle time; the next turn starts it again and continues the conversation', async () => {
    const { session } = await readySession(s, { agentType: 'opencode', llm: 'claude-sonnet-4-5' });
    fake.enqueue({ kind: 'text', text: 'the otter is called Pim' });
    await sendText(s, session.id, 'name the otter');
    await waitForEvents(s, session.id, 'session.status_idle', 1, 180_000);
    expect(jailProcesses(session.id).length).toBeGreaterThan(0); // the server, kept after the turn
    await waitFor(async () => jailProcesses(session.id).length === 0, 15_000, 'the idle server to stop');

    fake.enqueue({ kind: 'text', text: 'Pim, still' });
    await sendText(s, session.id, 'what is the otter called?');
    const events = await waitForEvents(s, session.id, 'session.status_idle', 2, 180_000);
    expect(events.at(-1)).toMatchObject({ stop_reason: { type: 'end_turn' } });
    expect(events.filter((e) => e.type === 'agent.message' && e.final).map((e) => e.text)).toEqual(['the otter is called Pim', 'Pim, still']);
    // The restarted server continued the same opencode session: the earlier exchange went along.
    expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain('the otter is called Pim');
  }, 600_000);
});
