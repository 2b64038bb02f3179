// Every npm engine on a fresh machine: each CLI is installed into an EMPTY engine cache (a temp
// ENGINE_CACHE_DIR) by the service's own installer with this machine's npm, then runs one turn in
// the jail against the fake provider. A cache filled earlier (another npm, another installer)
// hides install problems: OpenClaw installed without its lifecycle scripts fails every start
// ("package lifecycle is incomplete", EROFS on the read-only mount), which only an empty cache
// shows. FRESH_ENGINES=openclaw,codex narrows the engines (CI runs a subset; OpenClaw is always in it).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANTHROPIC_KEY, CLI_ENGINE_CASES, OPENAI_KEY, requireBwrap } from '../helpers/cli-engines.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents } from '../helpers/sessions.js';
import { engineAdapter } from '../../src/engines/cli/registry.js';
import { engineCacheDir, installEngine, isInstalled } from '../../src/engines/cli/core/install.js';
import { currentHarness } from '../../src/catalog/catalog.js';

// This file's installs go into a cache of their own (the installer reads the variable at each install).
const CACHE = fs.mkdtempSync(path.join(os.tmpdir(), 'fresh-engine-cache-'));
process.env.ENGINE_CACHE_DIR = CACHE;

const wanted = process.env.FRESH_ENGINES?.split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const cases = CLI_ENGINE_CASES.filter((c) => !wanted?.length || wanted.includes(c.agentType));
/** An install from the registry (OpenClaw's is a few hundred packages), then a first turn. */
const INSTALL_MS = 600_000;
const FIRST_TURN_MS = 240_000;

describe('npm engines installed into an empty cache run their first turn', () => {
  let s: TestServer;
  let fake: FakeProvider;
  beforeAll(async () => {
    requireBwrap();
    expect(engineCacheDir()).toBe(CACHE);
    expect(fs.readdirSync(CACHE)).toEqual([]);
    fake = await startFakeProvider();
    s = await startTestServer({
      openaiApiKey: OPENAI_KEY,
      openaiBaseUrl: fake.openaiBaseUrl,
      anthropicApiKey: ANTHROPIC_KEY,
      anthropicBaseUrl: fake.anthropicBaseUrl,
    });
  });
  afterAll(async () => {
    await s?.stop();
    await fake?.close();
    fs.rmSync(CACHE, { recursive: true, force: true });
    // The stop waits for a spare's warm-up that is under way (up to 60 s, src/runtime/warm-sandboxes.ts).
  }, 180_000);

  it('the subset includes OpenClaw', () => {
    expect(cases.map((c) => c.agentType)).toContain('openclaw');
  });

  for (const c of cases) {
    it(
      `${c.agentType}: installed by the service's installer, one turn ends end_turn with the provider's reply`,
      async () => {
        const cli = engineAdapter(c.agentType)!.cli;
        // Installed first so the turn below is not timed with a download; the turn would install it the same way.
        const installed = await installEngine(cli, currentHarness(c.agentType));
        expect(isInstalled(installed.hostDir)).toBe(true);
        expect(installed.hostDir.startsWith(CACHE)).toBe(true);

        fake.reset();
        fake.enqueue({ kind: 'text', text: `fresh ${c.agentType} says hello` });
        const { session } = await readySession(s, { agentType: c.agentType, llm: c.llm });
        await sendText(s, session.id, 'say hello');
        const events = await waitForEvents(s, session.id, 'session.status_idle', 1, FIRST_TURN_MS);
        const errors = events.filter((e) => e.type === 'session.error');
        expect(events.at(-1), JSON.stringify(errors)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
        expect(events.filter((e) => e.type === 'agent.message' && e.final !== false).at(-1).text).toBe(`fresh ${c.agentType} says hello`);
        await s.api('POST', `/sessions/${session.id}/archive`);
      },
      INSTALL_MS + FIRST_TURN_MS,
    );
  }
});
