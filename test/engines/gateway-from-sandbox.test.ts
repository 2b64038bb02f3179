// The model gateway as a sandboxed command reaches it: inside the session's jail (own network
// namespace), through the egress bridge at 127.0.0.1:3128, with only AGENT_SERVICE_TOKEN as the
// key and the base URLs the sandbox environment gives. The fake provider answers; the call is
// metered; the jail holds no provider key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession } from '../helpers/sessions.js';
import { sandboxDriver } from '../../src/sandbox/current-driver.js';
import { bwrapAvailable } from '../../src/sandbox/local.js';
import { prisma } from '../../src/db/client.js';
import type { Sandbox } from '../../src/sandbox/driver.js';

const OPENAI_KEY = 'sk-oai-platform-key-outside-only';
const ANTHROPIC_KEY = 'sk-ant-platform-key-outside-only';

describe.skipIf(!bwrapAvailable())('the gateway from inside a sandbox', () => {
  let s: TestServer;
  let fake: FakeProvider;
  let box: Sandbox;
  let sessionId: string;

  beforeAll(async () => {
    fake = await startFakeProvider();
    s = await startTestServer({
      openaiApiKey: OPENAI_KEY,
      openaiBaseUrl: fake.openaiBaseUrl,
      anthropicApiKey: ANTHROPIC_KEY,
      anthropicBaseUrl: fake.anthropicBaseUrl,
    });
    const { session } = await readySession(s);
    sessionId = session.id;
    box = (await sandboxDriver().get(sessionId))!;
    // A turn is running: the only time the session's credential opens the gateway.
    await prisma.session.update({ where: { id: sessionId }, data: { status: 'running', turnCount: 1 } });
  }, 60_000);

  afterAll(async () => {
    await s?.stop();
    await fake?.close();
  });

  it('a Responses stream with a function call comes back through the bridge, metered, with no key inside', async () => {
    fake.enqueue({ kind: 'tool_call', name: 'shell', input: { command: ['ls'] }, id: 'call_in_box', usage: { input: 321, output: 12 } });
    const body = JSON.stringify({
      model: 'gpt-5',
      stream: true,
      input: 'list files',
      tools: [{ type: 'function', name: 'shell', parameters: { type: 'object' } }],
    });
    const r = await box.exec(
      `curl -sS --noproxy 127.0.0.1 -H "authorization: Bearer $AGENT_SERVICE_TOKEN" -H 'content-type: application/json' "$OPENAI_BASE_URL/responses" -d '${body}'`,
      { timeoutMs: 20_000 },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('event: response.output_item.added');
    expect(r.stdout).toContain('"call_id":"call_in_box"');
    expect(r.stdout).toContain('event: response.completed');
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(await prisma.modelUsage.findMany({ where: { sessionId } })).toMatchObject([{ provider: 'openai', inputTokens: 321, outputTokens: 12, turn: 1 }]);

    const env = await box.exec('env; cat /workspace/.* /workspace/* 2>/dev/null; true', { timeoutMs: 10_000, maxOutputBytes: 4 << 20 });
    expect(env.stdout).toContain('AGENT_SERVICE_TOKEN=ast_sbx_');
    expect(env.stdout).not.toContain(OPENAI_KEY);
    expect(env.stdout).not.toContain(ANTHROPIC_KEY);
  });

  it('an Anthropic call with a made-up key is 401 from inside too', async () => {
    const r = await box.exec(
      `curl -sS -w '\\n%{http_code}' --noproxy 127.0.0.1 -H 'x-api-key: ast_sbx_made_up' -H 'anthropic-version: 2023-06-01' -H 'content-type: application/json' "$ANTHROPIC_BASE_URL/v1/messages" -d '{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}'`,
      { timeoutMs: 20_000 },
    );
    const [answer, status] = r.stdout.split('\n');
    expect(status).toBe('401');
    expect(JSON.parse(answer!).error).toMatchObject({ code: 'unauthorized' });
  });
  // A real CLI engine inside the jail through this bridge: test/engines/cli-turns.test.ts.
});
