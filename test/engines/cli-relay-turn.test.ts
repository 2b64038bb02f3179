// A real CLI turn over HTTP uses the agent's remote MCP servers through the service-side MCP
// relay (/gateway/mcp), for each CLI engine with an MCP client (codex, claude_code, opencode,
// openclaw):
// the CLI from npm runs in the session's bubblewrap jail, the fake provider asks it to call the
// relayed tool under the name that CLI gives it (codex: the Responses namespace
// `mcp__agent_service`; Claude Code: `mcp__agent_service__<tool>`; opencode:
// `agent_service_<tool>`; openclaw: `agent_service__<tool>`, found with its tool_search), the
// relay calls the real test MCP server with the agent's bearer credential, and history records the call as hermes names it (`mcp__docs__search`).
// The credential stays in the service: not in any answer of the API, nor in the environment of
// the jail's processes, nor in the files the CLI holds (its HOME is in the workspace).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANTHROPIC_KEY, expectSessionCredentialOnly, filesUnder, jailProcesses, OPENAI_KEY, requireBwrap } from '../helpers/cli-engines.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider, type FakeStep } from '../fake-provider/server.js';
import { startFakeMcpServer, type FakeMcpServer } from '../fake-vendors/mcp-server.js';
import { collectSse, history, readySession, sendText, waitFor, waitForEvents } from '../helpers/sessions.js';
import { engineAdapter } from '../../src/engines/cli/registry.js';
import { installEngine } from '../../src/engines/cli/core/install.js';
import { currentHarness } from '../../src/catalog/catalog.js';
import { relayToolTimeoutSec } from '../../src/engines/cli/core/mcp-relay.js';
import { config } from '../../src/config.js';

const SECRET = 'docs-mcp-bearer-secret-7c41e9a2';
/** What the test MCP server's `search` answers (text, then its structured content). */
const SEARCH_TEXT = '3 pages match "relay"';

interface RelayCase {
  agentType: string;
  llm: string;
  /**
   * The fake provider answers that make this CLI call the relayed `mcp__docs__search` (saying
   * `text` first): the call, after whatever the CLI needs first to offer the tool.
   */
  toolSteps(input: Record<string, unknown>, id: string, text: string): FakeStep[];
  /** The names of the relay's tools the CLI offered its model in the request that called it. */
  offered(body: any): string[] | undefined;
  /** What the model got back for the call `id` (next provider request), as text. */
  toolOutput(body: any, id: string): string;
  /** The result the CLI's adapter records in agent.tool_result. */
  result: Record<string, unknown>;
  /** A piece of the CLI's MCP configuration file that names the relay. */
  configMark: string;
  /** The name the CLI gives the relayed `mcp__docs__search`. */
  offeredName: string;
}

const anthropicToolOutput = (body: any, id: string) =>
  JSON.stringify(
    body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).find((b: any) => b.type === 'tool_result' && b.tool_use_id === id)?.content,
  );

const CASES: RelayCase[] = [
  {
    agentType: 'codex',
    llm: 'gpt-5',
    // Codex offers the relay's tools as the Responses namespace tool `mcp__agent_service`.
    toolSteps: (input, id, text) => [{ kind: 'tool_call', name: 'mcp__docs__search', namespace: 'mcp__agent_service', input, id, text }],
    offered: (body) => body.tools.find((t: any) => t.type === 'namespace' && t.name === 'mcp__agent_service')?.tools.map((t: any) => t.name),
    toolOutput: (body, id) => JSON.stringify(body.input.find((x: any) => x.type === 'function_call_output' && x.call_id === id)?.output),
    result: {
      content: [
        { type: 'text', text: SEARCH_TEXT },
        { type: 'text', text: '{"hits":3}' },
      ],
    },
    configMark: '[mcp_servers.agent_service]',
    offeredName: 'mcp__docs__search',
  },
  {
    agentType: 'claude_code',
    llm: 'claude-sonnet-4-5',
    // Claude Code asks for thinking: an answer with a tool call starts with a thinking block.
    // It defers MCP tools: the first request only names them, and the model loads a tool's
    // schema with its ToolSearch tool (`select:<name>`) before calling it, as a real model does.
    toolSteps: (input, id, text) => [
      {
        kind: 'tool_call',
        reasoning: 'Loading the tool',
        name: 'ToolSearch',
        input: { query: 'select:mcp__agent_service__mcp__docs__search', max_results: 5 },
        id: 'toolu_search_1',
        text: 'Loading the docs tool.',
      },
      { kind: 'tool_call', reasoning: 'Searching', name: 'mcp__agent_service__mcp__docs__search', input, id, text },
    ],
    offered: (body) => body.tools?.map((t: any) => t.name).filter((n: string) => n.startsWith('mcp__agent_service__')),
    toolOutput: anthropicToolOutput,
    // Recorded as hermes records an MCP result: the content blocks the model read.
    result: { content: expect.arrayContaining([{ type: 'text', text: expect.stringContaining(SEARCH_TEXT) }]) },
    configMark: '"mcpServers"',
    offeredName: 'mcp__agent_service__mcp__docs__search',
  },
  {
    agentType: 'opencode',
    llm: 'claude-sonnet-4-5',
    toolSteps: (input, id, text) => [{ kind: 'tool_call', name: 'agent_service_mcp__docs__search', input, id, text }],
    offered: (body) => body.tools?.map((t: any) => t.name).filter((n: string) => n.startsWith('agent_service_')),
    toolOutput: anthropicToolOutput,
    // opencode gives the blocks' text as one string: one text block.
    result: { content: [{ type: 'text', text: expect.stringContaining(SEARCH_TEXT) }] },
    // The relay's timeout (its tool listing and each call) is the longest a relayed call may take.
    configMark: `"timeout": ${relayToolTimeoutSec() * 1000}`,
    offeredName: 'agent_service_mcp__docs__search',
  },
  {
    agentType: 'openclaw',
    llm: 'claude-sonnet-4-5',
    // OpenClaw's Tool Search (its default) keeps MCP tools out of the request's tools: the model
    // finds one with tool_search and calls it by name with tool_call, which runs it as a child
    // call (the one history records).
    toolSteps: (input, id, text) => [
      { kind: 'tool_call', name: 'tool_search', input: { query: 'search the documentation' }, id: 'toolu_search_1', text: 'Looking for the docs tool.' },
      { kind: 'tool_call', name: 'tool_call', input: { id: 'agent_service__mcp__docs__search', args: input }, id, text },
    ],
    // The relay's tools tool_search found (its result, in the request that called the tool).
    offered: (body) => {
      const found = anthropicToolOutput(body, 'toolu_search_1') ?? '';
      return [...new Set([...found.matchAll(/\\"name\\": \\"(agent_service__[\w-]+)\\"/g)].map((m) => m[1]!))];
    },
    toolOutput: anthropicToolOutput,
    // The relay's answer as OpenClaw's MCP client got it: text, then the structured part as text.
    result: {
      content: [
        { type: 'text', text: SEARCH_TEXT },
        { type: 'text', text: '{"hits":3}' },
      ],
    },
    configMark: '"transport": "streamable-http"',
    offeredName: 'agent_service__mcp__docs__search',
  },
];

describe.each(CASES)("a $agentType turn over HTTP uses the agent's MCP servers through the relay", (c) => {
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
    await installEngine(engineAdapter(c.agentType)!.cli, currentHarness(c.agentType));
    mcp = await startFakeMcpServer();
    fake = await startFakeProvider();
    s = await startTestServer({
      openaiApiKey: OPENAI_KEY,
      openaiBaseUrl: fake.openaiBaseUrl,
      anthropicApiKey: ANTHROPIC_KEY,
      anthropicBaseUrl: fake.anthropicBaseUrl,
    });
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

  it("the model calls mcp__docs__search through the relay: the MCP server gets the agent's bearer token, history has the call and its result, end_turn; the secret is nowhere the CLI or a client can read", async () => {
    const { agent, session } = await readySession(recorded, {
      agentType: c.agentType,
      llm: c.llm,
      mcpServers: [{ name: 'docs', url: mcp.url, authentication: { type: 'bearer', token: SECRET }, tools: { include: ['search'] } }],
    });
    const id = session.id as string;
    const callId = c.agentType === 'codex' ? 'call_relay_1' : 'toolu_relay_1';
    mcp.requests.length = 0;
    mcp.calls.length = 0;
    // The tool call lasts a while, so the jail's processes can be read while the turn runs.
    mcp.delayMs = 2000;
    const steps = c.toolSteps({ query: 'relay' }, callId, 'Searching the docs.');
    fake.enqueue(...steps, { kind: 'text', text: 'Three pages match.' });
    /** The provider requests that answered with the relayed call, and that carried its result. */
    const [callRequest, resultRequest] = [steps.length - 1, steps.length];
    const live = collectSse(`${s.base}/sessions/${id}/events/stream`, s.adminToken, (f) => f.some((x) => x.data?.type === 'session.status_idle'), {
      timeoutMs: 180_000,
    });
    await sendText(recorded, id, 'search the docs for relay');

    // While the relayed call runs: the CLI's environment holds the session credential, not the secret.
    // (or the turn ended without it: then the failure says what the turn did instead)
    let ended: any[] = [];
    await waitFor(
      async () => mcp.calls.length > 0 || (ended = await history(s, id)).some((e) => e.type === 'session.status_idle'),
      120_000,
      'the relay to call the MCP server',
    );
    expect(
      mcp.calls.length,
      `the turn ended without a call to the MCP server: ${JSON.stringify(ended.filter((e) => e.type.startsWith('agent.') || e.type === 'session.error'))}`,
    ).toBeGreaterThan(0);
    const procs = jailProcesses(id);
    expect(procs.length).toBeGreaterThan(0);
    expectSessionCredentialOnly(procs, [SECRET]);

    const frames = await live;
    const events = await waitForEvents(recorded, id, 'session.status_idle', 1, 180_000);
    const errors = JSON.stringify(events.filter((e) => e.type === 'session.error'));
    expect(events.at(-1), errors).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });

    // The CLI offered its model the relay's tools under its own naming, include applied.
    expect(c.offered(fake.requests[callRequest]!.body), JSON.stringify(fake.requests[callRequest]!.body.tools?.map((t: any) => t.name))).toEqual([
      c.offeredName,
    ]);

    // The real MCP server ran the call, with the agent's credential on every request.
    expect(mcp.calls).toEqual([{ name: 'search', args: { query: 'relay' } }]);
    const authorized = mcp.requests.filter((q) => q.headers.authorization);
    expect(authorized.length).toBeGreaterThan(0);
    expect(authorized.length).toBe(mcp.requests.length);
    for (const q of authorized) expect(q.headers.authorization).toBe(`Bearer ${SECRET}`);

    // History (and the live stream) record the call as hermes names it, with the server's result.
    const streamed = frames.map((f) => f.data);
    for (const list of [events, streamed]) {
      const use = list.find((e) => e.type === 'agent.tool_use' && e.part.tool_name === 'mcp__docs__search');
      const result = list.find((e) => e.type === 'agent.tool_result' && e.part.call_id === use?.part.call_id);
      expect(use?.part, JSON.stringify(list.map((e) => e.type))).toMatchObject({ type: 'tool_call', tool_name: 'mcp__docs__search', args: { query: 'relay' } });
      expect(result?.part).toMatchObject({ type: 'tool_result', call_id: use.part.call_id, tool_name: 'mcp__docs__search', status: 'ok', result: c.result });
      expect(list.indexOf(use)).toBeLessThan(list.indexOf(result));
    }
    expect(events.filter((e) => e.type === 'agent.message' && e.final !== false).at(-1).text).toContain('Three pages match.');
    // The model read the relayed result.
    expect(fake.requests).toHaveLength(steps.length + 1);
    expect(c.toolOutput(fake.requests[resultRequest]!.body, callId)).toContain('3 pages match');

    // The CLI's files (HOME is in the workspace) configure the relay, and hold no secret.
    const held = filesUnder(path.join(config().dataDir, 'sandboxes', id, 'workspace'));
    expect(held).toContain(c.configMark);
    expect(held).toContain('/gateway/mcp');
    expect(held).not.toContain(SECRET);
    expect(held).not.toContain(OPENAI_KEY);
    expect(held).not.toContain(ANTHROPIC_KEY);

    // No answer of the API carried the secret: the agent, the session, its history and stream.
    await recorded.api('GET', `/sessions/${id}`);
    expect((await recorded.api('GET', `/agents/${agent.id}`)).status).toBe(200);
    await history(recorded, id);
    expect(answers.length).toBeGreaterThan(3);
    for (const a of answers) expect(a).not.toContain(SECRET);
    expect(JSON.stringify(frames)).not.toContain(SECRET);
  }, 300_000);
});
