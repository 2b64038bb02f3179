// openclaw: the adapter's mapping of real `openclaw agent --local --json` output (recorded from
// OpenClaw 2026.9.6 against the gateway and the fake provider, in test/fixtures/openclaw: the
// events our plugin prints while the run goes, then the pretty-printed summary; and, for the
// fallback, summaries alone) to session events, and its invocation; and the real CLI from npm,
// started with the adapter's invocation, calling the service's /gateway: a turn whose text,
// thinking and tool call (arguments and output) arrive while it runs, and a resumed turn. The
// real CLI also runs end to end over HTTP in the jail in test/engines/cli-turns.test.ts (its
// CLI_ENGINE_CASES entry) and through the MCP relay in test/engines/cli-relay-turn.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EngineEvent } from '../../src/engines/cli/core/adapter.js';
import { openclawAdapter, openclawMapper } from '../../src/engines/cli/openclaw/adapter.js';
import { engineAdapter } from '../../src/engines/cli/registry.js';
import { uninstallableEngine } from '../../src/engines/cli/core/unavailable.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { expectValidEvents, filesUnder, fixtureLines, liveEngine } from '../helpers/engine-live.js';

const FIXTURES = 'openclaw';
const finals = (events: EngineEvent[]) => events.filter((e) => !('final' in e.fields) || e.fields.final !== false);

function mapAll(lines: string[]) {
  const mapper = openclawMapper();
  const events = lines.flatMap((l) => mapper.line(l));
  return { mapper, events };
}

/** One line as our plugin prints it. */
const ev = (seq: number, stream: string, data: Record<string, unknown>) => `AGENT_SERVICE_EVENT ${JSON.stringify({ runId: 'r1', seq, stream, data })}`;

describe('openclaw output mapping (recorded real output)', () => {
  it("a turn with the plugin's events: the thinking and text before the call (from the stored message), the call with its arguments, its output, the streamed reply; end_turn", () => {
    const { mapper, events } = mapAll(fixtureLines('openclaw', 'stream-tool-turn.txt'));
    expectValidEvents(events);
    expect(finals(events).map((e) => e.type)).toEqual(['agent.reasoning', 'agent.message', 'agent.tool_use', 'agent.tool_result', 'agent.message']);
    const [think, say, use, result, done] = finals(events) as any[];
    expect(think.fields).toMatchObject({ final: true, signature: 'sig-fake-123', part: { text: 'I will write the file' } });
    expect(say.fields).toMatchObject({ final: true, text: 'Writing the file now.' });
    expect(use.fields.part).toMatchObject({
      type: 'tool_call',
      index: 0,
      call_id: 'toolu_o1',
      tool_name: 'exec',
      args: { command: 'echo hello > hello.txt && cat hello.txt' },
    });
    expect(result.fields.part).toMatchObject({
      type: 'tool_result',
      index: 0,
      call_id: 'toolu_o1',
      tool_name: 'exec',
      status: 'ok',
      result: { exit_code: 0, output: 'hello' },
    });
    // The reply came in chunks, then whole once (the summary repeats it: not again).
    const chunks = events.filter((e) => e.type === 'agent.message' && e.fields.final === false) as any[];
    expect(chunks.map((c) => c.fields.text).join('')).toBe('I wrote hello.txt.');
    expect(chunks.every((c) => c.fields.parts[0].stream_id === done.fields.messageId)).toBe(true);
    expect(done.fields).toMatchObject({ final: true, text: 'I wrote hello.txt.' });
    expect(mapper.resumeId).toMatch(/^[0-9a-f-]{36}$/);
    expect(mapper.finish(0)).toEqual({ stop: { type: 'end_turn' }, error: null });
  });

  it('a resumed text turn: the streamed reply once, complete when the message is stored', () => {
    const { events } = mapAll(fixtureLines('openclaw', 'stream-resume-turn.txt'));
    expect(finals(events).map((e) => [e.type, (e.fields as any).text])).toEqual([['agent.message', 'You asked for hello.txt.']]);
    expect(events.filter((e) => e.type === 'agent.message' && e.fields.final === false)).toHaveLength(3);
  });

  it('streamed thinking and text are completed by the stored message, not repeated; each event once however often it is printed', () => {
    const mapper = openclawMapper();
    const lines = [
      ev(3, 'thinking', { text: 'I will', delta: 'I will' }),
      ev(4, 'thinking', { text: 'I will run it', delta: ' run it' }),
      ev(4, 'thinking', { text: 'I will run it', delta: ' run it' }),
      ev(5, 'assistant', { text: 'Running', delta: 'Running', itemId: 'm:1' }),
      ev(6, 'assistant', { text: 'Running it.', delta: ' it.', itemId: 'm:1' }),
      ev(2, 'transcript', {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I will run it' },
          { type: 'text', text: 'Running it.' },
          { type: 'toolCall', id: 't1', name: 'exec', arguments: {} },
        ],
      }),
      ev(7, 'tool', { phase: 'start', name: 'exec', toolCallId: 't1', args: { command: 'false' } }),
      ev(8, 'tool', {
        phase: 'result',
        name: 'exec',
        toolCallId: 't1',
        isError: false,
        result: { content: [{ type: 'text', text: '(Command exited with code 1)' }], details: { status: 'completed', exitCode: 1 } },
      }),
    ];
    const events = lines.flatMap((l) => mapper.line(l));
    expectValidEvents(events);
    expect(events.map((e) => [e.type, (e.fields as any).final ?? null])).toEqual([
      ['agent.reasoning', false],
      ['agent.reasoning', false],
      ['agent.reasoning', true],
      ['agent.message', false],
      ['agent.message', false],
      ['agent.message', true],
      ['agent.tool_use', null],
      ['agent.tool_result', null],
    ]);
    expect((events[2]!.fields as any).part.text).toBe('I will run it');
    expect((events[5]!.fields as any).text).toBe('Running it.');
    // A command that exits non-zero is an error, as hermes' bash reports one.
    expect((events[7]!.fields as any).part).toMatchObject({ status: 'error', result: { exit_code: 1, output: '(Command exited with code 1)' } });
  });

  it("Tool Search: the relayed MCP call tool_call ran is recorded under hermes' name with its own arguments and MCP result; a tool_call that ran nothing is recorded itself; an MCP error", () => {
    const mapper = openclawMapper();
    const lines = [
      ev(1, 'tool', { phase: 'start', name: 'tool_call', toolCallId: 'w1', args: { id: 'agent_service__mcp__docs__search', args: { query: 'relay' } } }),
      ev(2, 'tool', {
        phase: 'start',
        name: 'agent_service__mcp__docs__search',
        toolCallId: 'tool_search_code:w1:agent_service__mcp__docs__search:1',
        parentToolCallId: 'w1',
        args: { query: 'relay' },
      }),
      ev(3, 'tool', {
        phase: 'result',
        name: 'agent_service__mcp__docs__search',
        toolCallId: 'tool_search_code:w1:agent_service__mcp__docs__search:1',
        parentToolCallId: 'w1',
        isError: false,
        result: {
          content: [
            { type: 'text', text: 'structuredContent:\n{"hits": 3}' },
            { type: 'text', text: '3 pages' },
          ],
          details: { mcpServer: 'agent_service', mcpTool: 'mcp__docs__search', structuredContent: { hits: 3 } },
        },
      }),
      ev(4, 'tool', {
        phase: 'result',
        name: 'tool_call',
        toolCallId: 'w1',
        isError: false,
        result: { content: [{ type: 'text', text: 'SECURITY NOTICE …' }] },
      }),
      ev(5, 'tool', { phase: 'start', name: 'tool_call', toolCallId: 'w2', args: { id: 'nope' } }),
      ev(6, 'tool', {
        phase: 'result',
        name: 'tool_call',
        toolCallId: 'w2',
        isError: true,
        result: { content: [{ type: 'text', text: 'unknown tool nope' }] },
      }),
      ev(7, 'tool', { phase: 'start', name: 'agent_service__fail', toolCallId: 'c3', args: {} }),
      ev(8, 'tool', {
        phase: 'result',
        name: 'agent_service__fail',
        toolCallId: 'c3',
        isError: true,
        result: { content: [{ type: 'text', text: 'the index is being rebuilt' }], details: { mcpServer: 'agent_service', mcpTool: 'fail', status: 'error' } },
      }),
    ];
    const events = lines.flatMap((l) => mapper.line(l));
    expectValidEvents(events);
    const parts = events.map((e) => (e.fields as any).part);
    expect(parts.map((p) => [p.type, p.tool_name, p.index])).toEqual([
      ['tool_call', 'mcp__docs__search', 0],
      ['tool_result', 'mcp__docs__search', 0],
      ['tool_call', 'tool_call', 1],
      ['tool_result', 'tool_call', 1],
      ['tool_call', 'fail', 2],
      ['tool_result', 'fail', 2],
    ]);
    expect(parts[0]).toMatchObject({ args: { query: 'relay' } });
    expect(parts[1]).toMatchObject({ status: 'ok', result: { content: [{ type: 'text', text: '3 pages' }], structured_content: { hits: 3 } } });
    expect(parts[2]).toMatchObject({ args: { id: 'nope' } });
    expect(parts[3]).toMatchObject({ status: 'error', result: { error: 'unknown tool nope' } });
    expect(parts[5]).toMatchObject({
      status: 'error',
      result: { content: [{ type: 'text', text: 'the index is being rebuilt' }], error: 'the index is being rebuilt' },
    });
  });

  it("without the plugin's events (summary only), a turn with an exec call: the call and its result by name only, then the reply; the session id; end_turn", () => {
    const { mapper, events } = mapAll(fixtureLines('openclaw', 'tool-turn.json'));
    expectValidEvents(events);
    expect(events.map((e) => e.type)).toEqual(['agent.tool_use', 'agent.tool_result', 'agent.message']);
    const [use, result, reply] = events;
    expect(use!.fields).toMatchObject({ part: { type: 'tool_call', index: 0, tool_name: 'exec', args: {} } });
    const callId = (use!.fields as any).part.call_id;
    expect(result!.fields).toMatchObject({ part: { type: 'tool_result', index: 0, call_id: callId, tool_name: 'exec', status: 'ok', result: {} } });
    expect(reply!.fields).toMatchObject({ final: true, text: 'I wrote it.' });
    expect(mapper.resumeId).toBe('s2');
    expect(mapper.finish(0)).toEqual({ stop: { type: 'end_turn' }, error: null });
  });

  it('a text turn: one complete message; nothing before the summary is complete', () => {
    const lines = fixtureLines('openclaw', 'text-turn.json');
    const mapper = openclawMapper();
    // Every line but the closing brace yields nothing: the summary comes whole at the end.
    expect(lines.slice(0, -2).flatMap((l) => mapper.line(l))).toEqual([]);
    const events = lines.slice(-2).flatMap((l) => mapper.line(l));
    expect(events.map((e) => e.type)).toEqual(['agent.message']);
    expect(events[0]!.fields).toMatchObject({ final: true, text: 'pong' });
    expect(mapper.resumeId).toBe('s1');
  });

  it('failures: a budget refusal ends budget_reached; an error envelope or no summary ends retries_exhausted', () => {
    const budget = openclawMapper();
    for (const l of JSON.stringify({ ok: false, error: { type: 'cli_error', message: "402 the session's budget is reached" } }, null, 2).split('\n'))
      budget.line(l);
    expect(budget.finish(1)).toEqual({ stop: { type: 'budget_reached' }, error: null });

    const failed = openclawMapper();
    for (const l of JSON.stringify({ ok: false, error: { type: 'cli_error', message: 'the session credential is revoked' } }, null, 2).split('\n'))
      failed.line(l);
    expect(failed.finish(1)).toEqual({
      stop: { type: 'retries_exhausted' },
      error: { type: 'engine_error', retry_status: 'exhausted', message: 'openclaw: the session credential is revoked' },
    });
    expect(openclawMapper().finish(null).error?.message).toBe('openclaw exited with code none (killed) without finishing the turn');
  });

  it('the invocation: a local JSON turn by session id, state and config under home, tools in /workspace, the gateway and the key variable in its config', () => {
    expect(engineAdapter('openclaw')).toBe(openclawAdapter);
    expect(uninstallableEngine('openclaw')).toBeNull();
    expect(openclawAdapter.cli).toMatchObject({ npm: 'openclaw', version: '2026.9.6', nodeMajor: 24 });
    const inv = openclawAdapter.invocation(
      { prompt: 'go', systemPrompt: 'be kind', model: 'claude-sonnet-4-5', reasoningEffort: null, resumeId: 'conv-1' },
      { binPath: '/opt/engines/openclaw', home: '/w/.agent', gatewayBaseUrl: 'http://127.0.0.1:3128/gateway/anthropic' },
    );
    expect(inv.argv.join(' ')).toBe('/opt/engines/openclaw agent --local --json --session-id conv-1 --message-file /w/.agent/message.txt');
    expect(inv.env).toEqual({ OPENCLAW_STATE_DIR: '/w/.agent/state', OPENCLAW_CONFIG_PATH: '/w/.agent/openclaw.json' });
    expect(inv.files['/w/.agent/message.txt']).toBe('go');
    expect(inv.files['/w/.agent/workspace/AGENTS.md']).toBe('be kind');
    const config = JSON.parse(inv.files['/w/.agent/openclaw.json']!);
    expect(config.models.providers.anthropic).toMatchObject({
      baseUrl: 'http://127.0.0.1:3128/gateway/anthropic',
      apiKey: '${AGENT_SERVICE_TOKEN}',
      api: 'anthropic-messages',
    });
    expect(config.agents.defaults).toMatchObject({ workspace: '/w/.agent/workspace', cwd: '/workspace', model: { primary: 'anthropic/claude-sonnet-4-5' } });
    // Our events plugin is placed under home and loaded from there; no MCP server without a relay.
    // Only our plugin and the model providers load (OpenClaw's allowlist).
    expect(config.plugins).toEqual({
      load: { paths: ['/w/.agent/plugins/agent-service-events'] },
      entries: { 'agent-service-events': { enabled: true } },
      allow: ['agent-service-events', 'anthropic', 'openai'],
    });
    expect(JSON.parse(inv.files['/w/.agent/plugins/agent-service-events/openclaw.plugin.json']!)).toMatchObject({ id: 'agent-service-events' });
    expect(JSON.parse(inv.files['/w/.agent/plugins/agent-service-events/package.json']!)).toMatchObject({
      type: 'module',
      openclaw: { extensions: ['./index.mjs'] },
    });
    expect(inv.files['/w/.agent/plugins/agent-service-events/index.mjs']).toContain('onAgentEvent');
    expect(config.mcp).toBeUndefined();
    // The MCP relay: a streamable HTTP server whose header names the variable, never its value.
    const relay = { url: 'http://127.0.0.1:3128/gateway/mcp', tokenEnv: 'AGENT_SERVICE_TOKEN' as const, startupTimeoutSec: 30, toolTimeoutSec: 660 };
    const withRelay = openclawAdapter.invocation(
      { prompt: 'go', systemPrompt: '', model: 'claude-sonnet-4-5', reasoningEffort: null, resumeId: null, mcpRelay: relay },
      { binPath: 'oc', home: '/h', gatewayBaseUrl: 'http://g/gateway/anthropic' },
    );
    expect(JSON.parse(withRelay.files['/h/openclaw.json']!).mcp).toEqual({
      servers: {
        agent_service: {
          url: relay.url,
          transport: 'streamable-http',
          headers: { Authorization: 'Bearer ${AGENT_SERVICE_TOKEN}' },
          connectionTimeoutMs: 30_000,
          requestTimeoutMs: 660_000,
        },
      },
    });
    // A first turn picks the conversation id it will resume.
    const first = openclawAdapter.invocation(
      { prompt: 'go', systemPrompt: '', model: 'gpt-5', reasoningEffort: null, resumeId: null },
      { binPath: 'oc', home: '/h', gatewayBaseUrl: 'http://g/gateway/openai/v1' },
    );
    expect(first.argv[first.argv.indexOf('--session-id') + 1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(first.files['/h/openclaw.json']!).models.providers.openai).toMatchObject({
      baseUrl: 'http://g/gateway/openai/v1',
      api: 'openai-responses',
    });
  });
});

const ANTHROPIC_KEY = 'sk-ant-platform-never-seen';
let s: TestServer;
let fake: FakeProvider;

describe('the real openclaw CLI through the gateway', () => {
  beforeAll(async () => {
    fake = await startFakeProvider();
    s = await startTestServer({ anthropicApiKey: ANTHROPIC_KEY, anthropicBaseUrl: fake.anthropicBaseUrl });
  });
  afterAll(async () => {
    await s?.stop();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  it("a turn's thinking, text, tool call with its arguments and its output arrive while it runs; the next turn resumes", async () => {
    // Outside the jail the CLI's tools work in the test's workspace, not /workspace.
    let workspace = '/workspace';
    const adapter = {
      ...openclawAdapter,
      invocation: (...a: Parameters<typeof openclawAdapter.invocation>) => {
        const inv = openclawAdapter.invocation(...a);
        for (const [f, text] of Object.entries(inv.files)) inv.files[f] = text.replace('"cwd": "/workspace"', `"cwd": ${JSON.stringify(workspace)}`);
        return inv;
      },
    };
    const live = await liveEngine(s, adapter, { model: 'claude-sonnet-4-5' });
    workspace = live.workspace;
    // The reply after the tool streams in three chunks 1.5 s apart: what came before it must
    // have arrived at least that long before the reply was complete.
    const REPLY_DELAY_MS = 2 * 1500;
    fake.enqueue(
      {
        kind: 'tool_call',
        reasoning: 'I will write the file',
        name: 'exec',
        input: { command: 'echo hello > hello.txt && cat hello.txt' },
        id: 'toolu_o1',
        text: 'Writing the file now.',
      },
      { kind: 'text', text: 'I wrote hello.txt.', chunks: 3, delayMs: 1500 },
    );
    const arrived = new Map<EngineEvent, number>();
    const first = await live.turn('write hello.txt', null, { onEvent: (e) => arrived.set(e, Date.now()) });
    const ended = Date.now();
    live.record(FIXTURES, 'stream-tool-turn.txt', first.lines);
    expect(first.result.stop, first.stderr).toEqual({ type: 'end_turn' });
    expectValidEvents(first.events);
    expect(finals(first.events).map((e) => e.type)).toEqual(['agent.reasoning', 'agent.message', 'agent.tool_use', 'agent.tool_result', 'agent.message']);
    const [think, say, use, result, done] = finals(first.events) as any[];
    expect(think.fields).toMatchObject({ final: true, part: { text: 'I will write the file' } });
    expect(say.fields).toMatchObject({ final: true, text: 'Writing the file now.' });
    expect(use.fields.part).toMatchObject({
      type: 'tool_call',
      call_id: 'toolu_o1',
      tool_name: 'exec',
      args: { command: 'echo hello > hello.txt && cat hello.txt' },
    });
    expect(result.fields.part).toMatchObject({
      type: 'tool_result',
      call_id: 'toolu_o1',
      tool_name: 'exec',
      status: 'ok',
      result: { exit_code: 0, output: expect.stringContaining('hello') },
    });
    expect(done.fields).toMatchObject({ final: true, text: 'I wrote hello.txt.' });
    // The reply streamed as chunks before it was complete.
    expect(
      first.events.filter((e) => e.type === 'agent.message' && e.fields.final === false && (e.fields as any).parts[0].stream_id === done.fields.messageId)
        .length,
    ).toBeGreaterThanOrEqual(2);
    // Events as they happen: the call and its result came while the model was still answering,
    // not with the summary at the end.
    expect(arrived.get(done)! - arrived.get(use)!).toBeGreaterThanOrEqual(REPLY_DELAY_MS - 200);
    expect(arrived.get(done)! - arrived.get(result)!).toBeGreaterThanOrEqual(REPLY_DELAY_MS - 200);
    expect(ended - arrived.get(use)!).toBeGreaterThanOrEqual(REPLY_DELAY_MS - 200);
    expect(fs.readFileSync(path.join(live.workspace, 'hello.txt'), 'utf8')).toBe('hello\n');
    expect(fake.requests.map((r) => r.path)).toEqual(['/v1/messages', '/v1/messages']);
    expect(fake.requests[0]!.headers['x-api-key']).toBe(ANTHROPIC_KEY);

    fake.enqueue({ kind: 'text', text: 'You asked for hello.txt.' });
    const second = await live.turn('what did I ask?', first.result.resumeId);
    live.record(FIXTURES, 'stream-resume-turn.txt', second.lines);
    expect(second.result).toEqual({ stop: { type: 'end_turn' }, resumeId: first.result.resumeId });
    expect(finals(second.events).map((e) => e.type)).toEqual(['agent.message']);
    expect(finals(second.events)[0]!.fields).toMatchObject({ text: 'You asked for hello.txt.' });
    const history = JSON.stringify(fake.requests.at(-1)!.body.messages);
    expect(history).toContain('I wrote hello.txt.');
    expect(history).toContain('write hello.txt');

    const held = JSON.stringify(live.env) + filesUnder(live.home) + filesUnder(live.workspace);
    expect(held).not.toContain(ANTHROPIC_KEY);
    expect(filesUnder(live.home)).not.toContain(live.token);
  }, 300_000);
});
