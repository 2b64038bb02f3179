// CLI engine turns end to end, over HTTP: each installable engine (test/helpers/cli-engines.ts)
// runs its real CLI from npm inside the session's jail through the gateway; and what holds for
// every engine: an engine version that cannot be installed gives a clear session.error (kimi_code
// and dsh, which have no CLI to install, are in codex.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ENGINE_CASES, defineCliEngineSuite, OPENAI_KEY, requireBwrap } from '../helpers/cli-engines.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents } from '../helpers/sessions.js';
import { prisma } from '../../src/db/client.js';

for (const c of CLI_ENGINE_CASES) defineCliEngineSuite(c);

describe('CLI engines that cannot be installed', () => {
  let s: TestServer;
  let fake: FakeProvider;
  beforeAll(async () => {
    requireBwrap();
    fake = await startFakeProvider();
    s = await startTestServer({ openaiApiKey: OPENAI_KEY, openaiBaseUrl: fake.openaiBaseUrl });
  });
  afterAll(async () => {
    await s?.stop();
    await fake?.close();
  });

  it("a harnessVersion npm does not have: session.error engine_install_failed naming package@version and npm's words; retries_exhausted", async () => {
    const { agent, session } = await readySession(s, { agentType: 'codex', llm: 'gpt-5' });
    // An agent pinned to a version that was never published (as an old pin of a withdrawn release would be).
    await prisma.agent.update({ where: { id: agent.id }, data: { harnessVersion: '0.0.0-never-published' } });
    await sendText(s, session.id, 'hello');
    const events = await waitForEvents(s, session.id, 'session.status_idle', 1, 120_000);
    const error = events.find((e) => e.type === 'session.error');
    expect(error.error).toMatchObject({ type: 'engine_install_failed', retry_status: 'exhausted' });
    expect(error.error.message).toContain('@openai/codex@0.0.0-never-published');
    expect(error.error.message).toMatch(/ETARGET|No matching version|notarget/i);
    expect(events.at(-1).stop_reason).toEqual({ type: 'retries_exhausted' });
    expect(fake.requests).toHaveLength(0);
  }, 180_000);
});
