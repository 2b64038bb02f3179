// A real codex turn over HTTP uses the agent's remote MCP servers through the service-side MCP
// relay (/gateway/mcp): the codex CLI from npm runs in the session's bubblewrap jail, the fake
// provider asks it to call the relayed tool (codex offers the relay's tools as the Responses
// namespace `mcp__agent_service`), the relay calls the real test MCP server with the agent's
// bearer credential, and history records the call as hermes names it (`mcp__docs__search`).
// The credential stays in the service: not in any answer of the API, nor in the environment of
// the jail's processes, nor in the files the CLI holds (its HOME is in the workspace).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filesUnder, jailProcesses, OPENAI_KEY, requireBwrap } from '../helpers/cli-engines.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startFakeMcpServer, type FakeMcpServer } from '../fake-vendors/mcp-server.js';
import { collectSse, history, readySession, sendText, waitFor, waitForEvents } from '../helpers/sessions.js';
import { engineAdapter } from '../../src/engines/cli/registry.js';
import { installEngine } from '../../src/engines/cli/install.js';
import { currentHarness } from '../../src/catalog/catalog.js';
import { config } from '../../src/config.js';

const SECRET = 'docs-mcp-bearer-secret-7c41e9a2';

describe('a codex turn over HTTP uses the agent\'s MCP servers through the relay', () => {
  let s: TestServer;
  let fake: FakeProvider;
  let mcp: FakeMcpServer;
  /** Every API answer of this test (bodies as text), to look for the secret in them. */
  const answers: string[] = [];
  /** The test server, with every api() answer recorded. */
  let recorded: TestServer;

  beforeAll(async () => {
    requireBwrap();
    // The relay reaches the test MCP server on 127.0.0.1 (outbound to loopback is refused otherwise).
    process.env.OUTBOUND_ALLOW = '127.0.0.0/8';
    await installEngine(engineAdapter('codex')!.cli, currentHarness('codex'));
    mcp = await startFakeMcpServer();
    fake = await startFakeProvider();
    s = await startTestServer({ openaiApiKey: OPENAI_KEY, openaiBaseUrl: fake.openaiBaseUrl });
    recorded = {
      ...s,
      api: async (method, target, opts) => {
        const res = await s.api(method, target, opts);
        answers.push(`${res.status} ${JSON.stringify([...res.headers])} ${new TextDecoder().decode(res.bytes)}`);
        return res;
      },
    };
  }, 900_000);
  afterAll(async () => {
    await s?.stop();
    await fake?.close();
    await mcp?.close();
    delete process.env.OUTBOUND_ALLOW;
  });

  it('the model calls mcp__docs__search in codex: the MCP server gets the agent\'s bearer token, history has the call and its result, end_turn; the secret is nowhere the CLI or a client can read', async () => {
    const { agent, session } = await readySession(recorded, {
      agentType: 'codex',
      llm: 'gpt-5',
      mcpServers: [{ name: 'docs', url: mcp.url, authentication: { type: 'bearer', token: SECRET }, tools: { include: ['search'] } }],
    });
    const id = session.id as string;
    mcp.requests.length = 0;
    mcp.calls.length = 0;
    // The tool call lasts a while, so the jail's processes can be read while the turn runs.
    mcp.delayMs = 2000;
    fake.enqueue(
      { kind: 'tool_call', name: 'mcp__docs__search', namespace: 'mcp__agent_service', input: { query: 'relay' }, id: 'call_relay_1', text: 'Searching the docs.' },
      { kind: 'text', text: 'Three pages match.' },
    );
    const live = collectSse(`${s.base}/sessions/${id}/events/stream`, s.adminToken, (f) => f.some((x) => x.data?.type === 'session.status_idle'), { timeoutMs: 180_000 });
    await sendText(recorded, id, 'search the docs for relay');

    // While the relayed call runs: the CLI's environment holds the session credential, not the secret.
    // (or the turn ended without it: then the failure says what the turn did instead)
    let ended: any[] = [];
    await waitFor(async () => mcp.calls.length > 0 || (ended = await history(s, id)).some((e) => e.type === 'session.status_idle'), 120_000, 'the relay to call the MCP server');
    expect(mcp.calls.length, `the turn ended without a call to the MCP server: ${JSON.stringify(ended.filter((e) => e.type.startsWith('agent.') || e.type === 'session.error'))}`).toBeGreaterThan(0);
    const procs = jailProcesses(id);
    expect(procs.length).toBeGreaterThan(0);
    const environ = procs.map((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/environ`, 'latin1');
      } catch {
        return '';
      }
    }).join('\n');
    expect(environ).toContain('AGENT_SERVICE_TOKEN=ast_sbx_');
    expect(environ).not.toContain(SECRET);
    expect(environ).not.toContain(OPENAI_KEY);

    const frames = await live;
    const events = await waitForEvents(recorded, id, 'session.status_idle', 1, 180_000);
    const errors = JSON.stringify(events.filter((e) => e.type === 'session.error'));
    expect(events.at(-1), errors).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });

    // Codex was offered the relay's tools as the namespace mcp__agent_service, include applied.
    const offered = fake.requests[0]!.body.tools.find((t: any) => t.type === 'namespace' && t.name === 'mcp__agent_service');
    expect(offered, JSON.stringify(fake.requests[0]!.body.tools.map((t: any) => t.name))).toBeTruthy();
    expect(offered.tools.map((t: any) => t.name)).toEqual(['mcp__docs__search']);

    // The real MCP server ran the call, with the agent's credential on every request.
    expect(mcp.calls).toEqual([{ name: 'search', args: { query: 'relay' } }]);
    const authorized = mcp.requests.filter((q) => q.headers.authorization);
    expect(authorized.length).toBeGreaterThan(0);
    expect(authorized.length).toBe(mcp.requests.length);
    for (const q of authorized) expect(q.headers.authorization).toBe(`Bearer ${SECRET}`);

    // History (and the live stream) record the call as hermes names it, with the server's result.
    const streamed = frames.map((f) => f.data);
    for (const list of [events, streamed]) {
      const use = list.find((e) => e.type === 'agent.tool_use');
      const result = list.find((e) => e.type === 'agent.tool_result');
      expect(use?.part, JSON.stringify(list.map((e) => e.type))).toMatchObject({ type: 'tool_call', tool_name: 'mcp__docs__search', args: { query: 'relay' } });
      expect(result?.part).toMatchObject({
        type: 'tool_result', call_id: use.part.call_id, tool_name: 'mcp__docs__search', status: 'ok',
        result: { content: [{ type: 'text', text: '3 pages match "relay"' }, { type: 'text', text: '{"hits":3}' }] },
      });
      expect(list.findIndex((e) => e.type === 'agent.tool_use')).toBeLessThan(list.findIndex((e) => e.type === 'agent.tool_result'));
    }
    expect(events.filter((e) => e.type === 'agent.message').at(-1).text).toContain('Three pages match.');
    // The model read the relayed result.
    const output = fake.requests[1]!.body.input.find((x: any) => x.type === 'function_call_output' && x.call_id === 'call_relay_1');
    expect(JSON.stringify(output?.output)).toContain('3 pages match');

    // The CLI's files (HOME is in the workspace) configure the relay, and hold no secret.
    const held = filesUnder(path.join(config().dataDir, 'sandboxes', id, 'workspace'));
    expect(held).toContain('[mcp_servers.agent_service]');
    expect(held).not.toContain(SECRET);
    expect(held).not.toContain(OPENAI_KEY);

    // No answer of the API carried the secret: the agent, the session, its history and stream.
    await recorded.api('GET', `/sessions/${id}`);
    expect((await recorded.api('GET', `/agents/${agent.id}`)).status).toBe(200);
    await history(recorded, id);
    expect(answers.length).toBeGreaterThan(3);
    for (const a of answers) expect(a).not.toContain(SECRET);
    expect(JSON.stringify(frames)).not.toContain(SECRET);
  }, 300_000);
});
