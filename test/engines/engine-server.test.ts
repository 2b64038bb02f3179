// A CLI engine kept running as the sandbox's server (src/engines/cli/core/engine-server.ts), over HTTP
// with the real opencode and OpenClaw from npm in the jail: after ENGINE_SERVER_IDLE_MS without a
// turn the server stops (an idle one holds hundreds of MB, OpenClaw's Gateway over a GB), and the
// next turn starts it again and continues the same conversation from the session's storage; a
// server killed during a turn ends that turn with an error at once (never a hang), and the next
// turn starts it again.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jailProcesses, startCliEngineServer } from '../helpers/cli-engines.js';
import { installEngine } from '../../src/engines/cli/core/install.js';
import { engineAdapter } from '../../src/engines/cli/registry.js';
import { currentHarness } from '../../src/catalog/catalog.js';
import type { TestServer } from '../helpers/server.js';
import type { FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitFor, waitForEvents } from '../helpers/sessions.js';

/** A session's server stops after its idle time; the next turn starts it again and continues the conversation. */
async function idleStopThenResume(ctx: { s: TestServer; fake: FakeProvider }, agentType: string, conversationOf: (body: any) => string): Promise<void> {
  const { s, fake } = ctx;
  const { session } = await readySession(s, { agentType, llm: 'claude-sonnet-4-5' });
  fake.reset();
  fake.enqueue({ kind: 'text', text: 'the otter is called Pim' });
  await sendText(s, session.id, 'name the otter');
  await waitForEvents(s, session.id, 'session.status_idle', 1, 300_000);
  expect(jailProcesses(session.id).length).toBeGreaterThan(0); // the server, kept after the turn
  await waitFor(async () => jailProcesses(session.id).length === 0, 15_000, 'the idle server to stop');

  fake.enqueue({ kind: 'text', text: 'Pim, still' });
  await sendText(s, session.id, 'what is the otter called?');
  const events = await waitForEvents(s, session.id, 'session.status_idle', 2, 300_000);
  expect(events.at(-1), JSON.stringify(events.filter((e) => e.type === 'session.error'))).toMatchObject({ stop_reason: { type: 'end_turn' } });
  expect(events.filter((e) => e.type === 'agent.message' && e.final).map((e) => e.text)).toEqual(['the otter is called Pim', 'Pim, still']);
  // The restarted server continued the same conversation: the earlier exchange went along.
  expect(conversationOf(fake.requests.at(-1)!.body)).toContain('the otter is called Pim');
}

describe('an engine server without turns', () => {
  let s: TestServer;
  let fake: FakeProvider;
  const before = process.env.ENGINE_SERVER_IDLE_MS;
  beforeAll(async () => {
    process.env.ENGINE_SERVER_IDLE_MS = '1500';
    ({ s, fake } = await startCliEngineServer('opencode'));
    await installEngine(engineAdapter('openclaw')!.cli, currentHarness('openclaw'));
  }, 900_000);
  afterAll(async () => {
    if (before === undefined) delete process.env.ENGINE_SERVER_IDLE_MS;
    else process.env.ENGINE_SERVER_IDLE_MS = before;
    await s?.stop();
    await fake?.close();
  });

  it("opencode's stops after its idle time; the next turn starts it again and continues the conversation", async () => {
    await idleStopThenResume({ s, fake }, 'opencode', (body) => JSON.stringify(body.messages));
  }, 600_000);

  it("OpenClaw's Gateway too: restarted, it continues the conversation of the session key", async () => {
    await idleStopThenResume({ s, fake }, 'openclaw', (body) => JSON.stringify(body.messages));
  }, 900_000);

  it('a server that takes connections but answers nothing fails the turn after ENGINE_SERVER_ANSWER_MS and is stopped; the next turn starts a new one', async () => {
    const { session } = await readySession(s, { agentType: 'opencode', llm: 'claude-sonnet-4-5' });
    fake.reset();
    fake.enqueue({ kind: 'text', text: 'awake' });
    await sendText(s, session.id, 'are you awake?');
    await waitForEvents(s, session.id, 'session.status_idle', 1, 240_000);
    // Frozen: its socket still takes connections (the kernel queues them), nothing answers.
    const frozen = jailProcesses(session.id);
    for (const pid of frozen) process.kill(pid, 'SIGSTOP');
    const before = process.env.ENGINE_SERVER_ANSWER_MS;
    process.env.ENGINE_SERVER_ANSWER_MS = '3000';
    try {
      const sent = Date.now();
      await sendText(s, session.id, 'still there?');
      const events = await waitForEvents(s, session.id, 'session.status_idle', 2, 60_000);
      expect(Date.now() - sent).toBeLessThan(20_000);
      expect(events.at(-1)).toMatchObject({ stop_reason: { type: 'retries_exhausted' } });
      expect(events.filter((e) => e.type === 'session.error').at(-1)).toMatchObject({
        error: { type: 'engine_error', message: expect.stringContaining('answered nothing within 3 s') },
      });
      await waitFor(async () => frozen.every((pid) => !fs.existsSync(`/proc/${pid}`)), 10_000, 'the frozen server to be gone');
    } finally {
      if (before === undefined) delete process.env.ENGINE_SERVER_ANSWER_MS;
      else process.env.ENGINE_SERVER_ANSWER_MS = before;
      for (const pid of frozen) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          /* gone */
        }
      }
    }
    fake.enqueue({ kind: 'text', text: 'a new server' });
    await sendText(s, session.id, 'and now?');
    const after = await waitForEvents(s, session.id, 'session.status_idle', 3, 240_000);
    expect(after.at(-1)).toMatchObject({ stop_reason: { type: 'end_turn' } });
    expect(after.filter((e) => e.type === 'agent.message' && e.final).map((e) => e.text)).toContain('a new server');
  }, 900_000);

  // OpenClaw's Gateway restarted after a SIGKILL is slow to listen (30–40 s here, once over the
  // 180 s limit on a loaded CI machine: open, see docs/engines.md), so for it only the killed turn's
  // end is checked; opencode's restart is.
  it.each([
    ['opencode', true],
    ['openclaw', false],
  ] as const)(
    'a server (%s) killed during a turn ends that turn with session.error at once; the next turn starting it again is checked: %s',
    async (agentType, checkRestart) => {
      const { session } = await readySession(s, { agentType, llm: 'claude-sonnet-4-5' });
      fake.reset();
      fake.enqueue({ kind: 'hang', text: 'thinking' });
      await sendText(s, session.id, 'take your time');
      await waitFor(async () => fake.requests.length === 1, 240_000, 'the turn to reach the provider');
      for (const pid of jailProcesses(session.id)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone already */
        }
      }
      const killed = Date.now();
      const events = await waitForEvents(s, session.id, 'session.status_idle', 1, 30_000);
      expect(Date.now() - killed).toBeLessThan(10_000);
      expect(events.at(-1)).toMatchObject({ stop_reason: { type: 'retries_exhausted' } });
      expect(events.find((e) => e.type === 'session.error')).toMatchObject({ error: { type: 'engine_error' } });
      if (!checkRestart) return;

      fake.enqueue({ kind: 'text', text: 'back again' });
      await sendText(s, session.id, 'are you there?');
      const after = await waitForEvents(s, session.id, 'session.status_idle', 2, 300_000);
      expect(after.at(-1), JSON.stringify(after.filter((e) => e.type === 'session.error'))).toMatchObject({ stop_reason: { type: 'end_turn' } });
      expect(after.filter((e) => e.type === 'agent.message' && e.final).map((e) => e.text)).toContain('back again');
    },
    900_000,
  );
});
