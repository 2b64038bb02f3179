// claude_code: the adapter's mapping of real `claude -p --output-format stream-json` output
// (recorded from Claude Code 2.1.330 against the gateway and the fake provider, in
// test/fixtures/claude_code) to session events; and the real CLI from npm, started with the
// adapter's invocation, calling the service's /gateway: a turn that writes a file with its Bash
// tool, a resumed turn that remembers it, an interrupt, a budget stop, and no provider key in
// its environment or files.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { claudeCodeAdapter, claudeCodeMapper, claudeEffort } from '../../src/engines/cli/claude-code/adapter.js';
import type { EngineEvent } from '../../src/engines/cli/core/adapter.js';
import { prisma } from '../../src/db/client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { expectValidEvents, filesUnder, fixtureLines, expectFailingToolsTurn, liveEngine } from '../helpers/engine-live.js';

const FIXTURES = 'claude_code';
const RESUME_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function mapAll(lines: string[]) {
  const mapper = claudeCodeMapper();
  const events = lines.flatMap((l) => mapper.line(l));
  return { mapper, events };
}

const finals = (events: EngineEvent[]) => events.filter((e) => !('final' in e.fields) || e.fields.final !== false);
const texts = (events: EngineEvent[], type: 'agent.message' | 'agent.reasoning', final: boolean) =>
  events
    .filter((e) => e.type === type && (e.fields as { final?: boolean }).final === final)
    .map((e) => (e.type === 'agent.message' ? e.fields.text : e.type === 'agent.reasoning' ? e.fields.part.type === 'reasoning' && e.fields.part.text : null));

describe('claude_code output mapping (recorded real output)', () => {
  it('a turn with a Bash call: streamed reasoning and text, the call and its result, the final message, the session id, end_turn', () => {
    const { mapper, events } = mapAll(fixtureLines(FIXTURES, 'tool-turn.jsonl'));
    expectValidEvents(events);
    expect(finals(events).map((e) => e.type)).toEqual([
      'agent.reasoning',
      'agent.message',
      'agent.tool_use',
      'agent.tool_result',
      'agent.reasoning',
      'agent.message',
    ]);
    const [think, say, use, result, think2, done] = finals(events);
    expect(think!.fields).toMatchObject({ final: true, signature: 'sig-fake-123', part: { type: 'reasoning', text: 'I will write the file' } });
    expect(say!.fields).toMatchObject({ final: true, text: 'Writing the file now.' });
    expect(use!.fields).toMatchObject({
      part: { type: 'tool_call', index: 0, call_id: 'toolu_w1', tool_name: 'Bash', args: { command: 'echo hello > hello.txt && cat hello.txt' } },
    });
    expect(result!.fields).toMatchObject({
      part: { type: 'tool_result', index: 0, call_id: 'toolu_w1', tool_name: 'Bash', status: 'ok', result: { exit_code: 0, output: 'hello' } },
    });
    expect(think2!.fields).toMatchObject({ part: { text: 'The file is written' } });
    expect(done!.fields).toMatchObject({ final: true, text: 'I wrote hello.txt.' });
    // Chunks came first, under the id of the message they add up to.
    expect(texts(events, 'agent.message', false).join('')).toBe('Writing the file now.I wrote hello.txt.');
    expect(texts(events, 'agent.reasoning', false).join('')).toBe('I will write the fileThe file is written');
    const chunk = events.find((e) => e.type === 'agent.message' && e.fields.final === false)!;
    expect(chunk.type === 'agent.message' && chunk.fields.messageId).toBe(say!.type === 'agent.message' && say!.fields.messageId);
    expect(mapper.resumeId).toMatch(RESUME_ID);
    expect(mapper.finish(0)).toEqual({ stop: { type: 'end_turn' }, error: null });
  });

  it('a resumed turn keeps the session id', () => {
    const first = mapAll(fixtureLines(FIXTURES, 'tool-turn.jsonl')).mapper.resumeId;
    const { mapper, events } = mapAll(fixtureLines(FIXTURES, 'resume-turn.jsonl'));
    expect(finals(events).map((e) => e.type)).toEqual(['agent.message']);
    expect(mapper.resumeId).toBe(first);
  });

  it("a call the gateway refuses for the budget ends budget_reached; another failure ends retries_exhausted in Claude Code's words", () => {
    const { mapper, events } = mapAll(fixtureLines(FIXTURES, 'budget-turn.jsonl'));
    expectValidEvents(events);
    expect(events.filter((e) => e.type === 'agent.message' && e.fields.text.includes('API Error'))).toEqual([]);
    expect(mapper.finish(1)).toEqual({ stop: { type: 'budget_reached' }, error: null });

    const failed = claudeCodeMapper();
    failed.line('{"type":"result","subtype":"success","is_error":true,"result":"API Error: 401 the session credential is revoked","session_id":"s-1"}');
    const end = failed.finish(1);
    expect(end.stop).toEqual({ type: 'retries_exhausted' });
    expect(end.error).toMatchObject({
      type: 'engine_error',
      retry_status: 'exhausted',
      message: 'claude_code: API Error: 401 the session credential is revoked',
    });
    expect(failed.resumeId).toBe('s-1');
    expect(claudeCodeMapper().finish(null).error?.message).toBe('claude_code exited with code none (killed) without finishing the turn');
  });

  it('the invocation: stream-json in and out, resume by id, effort, the gateway, a key read from the variable only', () => {
    const inv = claudeCodeAdapter.invocation(
      {
        prompt: 'go',
        systemPrompt: 'be kind',
        model: 'claude-sonnet-4-5',
        reasoningEffort: 'xhigh',
        resumeId: 'sess-1',
        mcpRelay: { url: 'http://127.0.0.1:3128/gateway/mcp', tokenEnv: 'AGENT_SERVICE_TOKEN', startupTimeoutSec: 30, toolTimeoutSec: 60 },
      },
      { binPath: '/opt/engines/claude', home: '/workspace/.agent/engine', gatewayBaseUrl: 'http://127.0.0.1:3128/gateway/anthropic' },
    );
    expect(inv.argv.slice(0, 2)).toEqual(['/opt/engines/claude', '-p']);
    expect(inv.argv.join(' ')).toContain('--input-format stream-json --output-format stream-json --verbose');
    expect(inv.argv.join(' ')).toContain('--effort xhigh');
    expect(inv.argv.join(' ')).toContain('--resume sess-1');
    expect(inv.argv.join(' ')).toContain('--append-system-prompt-file /workspace/.agent/engine/.claude/agent-service-system-prompt.md');
    expect(JSON.parse(inv.stdin)).toEqual({ type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'go' }] } });
    expect(inv.env).toMatchObject({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:3128/gateway/anthropic', CLAUDE_CONFIG_DIR: '/workspace/.agent/engine/.claude' });
    expect(JSON.parse(inv.files['/workspace/.agent/engine/.claude/settings.json']!)).toEqual({ apiKeyHelper: 'printenv AGENT_SERVICE_TOKEN' });
    expect(inv.files['/workspace/.agent/engine/.claude/agent-service-system-prompt.md']).toBe('be kind');
    expect(JSON.parse(inv.files['/workspace/.agent/engine/.claude/agent-service-mcp.json']!)).toEqual({
      mcpServers: { agent_service: { type: 'http', url: 'http://127.0.0.1:3128/gateway/mcp', headers: { Authorization: 'Bearer ${AGENT_SERVICE_TOKEN}' } } },
    });
    expect(claudeEffort('off')).toEqual({ effort: null, thinkingOff: true });
    expect(claudeEffort(null)).toEqual({ effort: null, thinkingOff: false });
    const plain = claudeCodeAdapter.invocation(
      { prompt: 'go', systemPrompt: '', model: 'claude-haiku-4-5', reasoningEffort: 'off', resumeId: null },
      { binPath: 'claude', home: '/h', gatewayBaseUrl: 'http://127.0.0.1:3128/gateway' },
    );
    expect(plain.argv).not.toContain('--resume');
    expect(plain.argv).not.toContain('--mcp-config');
    expect(plain.env).toMatchObject({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:3128/gateway/anthropic', MAX_THINKING_TOKENS: '0' });
  });
});

// ---- the real Claude Code CLI through the gateway ------------------------------------------

const ANTHROPIC_KEY = 'sk-ant-platform-never-seen';
const OPENAI_KEY = 'sk-oai-platform-never-seen';
let s: TestServer;
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
  s = await startTestServer({
    anthropicApiKey: ANTHROPIC_KEY,
    anthropicBaseUrl: fake.anthropicBaseUrl,
    openaiApiKey: OPENAI_KEY,
    openaiBaseUrl: fake.openaiBaseUrl,
  });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});
beforeEach(() => fake.reset());

describe('the real Claude Code CLI through the gateway', () => {
  it('runs a turn that writes a file, is metered, keeps no key, and the next turn resumes the conversation', async () => {
    const live = await liveEngine(s, claudeCodeAdapter, { model: 'claude-sonnet-4-5' });
    fake.enqueue(
      {
        kind: 'tool_call',
        reasoning: 'I will write the file',
        name: 'Bash',
        input: { command: 'echo hello > hello.txt && cat hello.txt', description: 'Write hello.txt' },
        id: 'toolu_w1',
        text: 'Writing the file now.',
        usage: { input: 1000, output: 50 },
      },
      { kind: 'reasoning_then_text', reasoning: 'The file is written', text: 'I wrote hello.txt.', usage: { input: 1200, output: 20 } },
    );
    const first = await live.turn('write hello.txt', null);
    live.record(FIXTURES, 'tool-turn.jsonl', first.lines);
    expect(first.result.stop, first.stderr).toEqual({ type: 'end_turn' });
    expect(first.result.resumeId).toMatch(RESUME_ID);
    expect(finals(first.events).map((e) => e.type)).toEqual([
      'agent.reasoning',
      'agent.message',
      'agent.tool_use',
      'agent.tool_result',
      'agent.reasoning',
      'agent.message',
    ]);
    expect(first.events.find((e) => e.type === 'agent.tool_result')!.fields).toMatchObject({
      part: { tool_name: 'Bash', status: 'ok', result: { exit_code: 0, output: 'hello' } },
    });
    expect(fs.readFileSync(path.join(live.workspace, 'hello.txt'), 'utf8')).toBe('hello\n');
    // Through the gateway: the provider saw the service's key and the agent's prompt.
    expect(fake.requests.map((r) => r.path)).toEqual(['/v1/messages', '/v1/messages']);
    expect(fake.requests[0]!.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(JSON.stringify(fake.requests[0]!.body.system)).toContain('You are the test agent.');
    const used = await prisma.modelUsage.findMany({ where: { sessionId: live.sessionId } });
    expect(used.map((u) => u.inputTokens).sort()).toEqual([1000, 1200]);

    fake.enqueue({ kind: 'text', text: 'You asked for hello.txt.' });
    const second = await live.turn('what did I ask?', first.result.resumeId);
    live.record(FIXTURES, 'resume-turn.jsonl', second.lines);
    expect(second.result).toEqual({ stop: { type: 'end_turn' }, resumeId: first.result.resumeId });
    expect(finals(second.events).map((e) => e.type)).toEqual(['agent.message']);
    const history = JSON.stringify(fake.requests.at(-1)!.body.messages);
    expect(history).toContain('I wrote hello.txt.');
    expect(history).toContain('write hello.txt');

    const held = JSON.stringify(live.env) + filesUnder(live.home) + filesUnder(live.workspace);
    expect(held).not.toContain(ANTHROPIC_KEY);
    expect(held).not.toContain(OPENAI_KEY);
    expect(filesUnder(live.home)).not.toContain(live.token); // the credential stays in the variable
  }, 240_000);

  it('a budget reached mid-call stops the turn: budget_reached, no error', async () => {
    const live = await liveEngine(s, claudeCodeAdapter, { model: 'claude-sonnet-4-5', reasoningEffort: 'low' });
    await prisma.session.update({ where: { id: live.sessionId }, data: { budgetMaxCents: 1 } });
    fake.enqueue({
      kind: 'tool_call',
      reasoning: 'Writing',
      name: 'Bash',
      input: { command: 'echo hi > hi.txt', description: 'Write hi.txt' },
      id: 'toolu_b1',
      usage: { input: 100_000, output: 50 },
    });
    const turn = await live.turn('write hi.txt', null);
    live.record(FIXTURES, 'budget-turn.jsonl', turn.lines);
    expect(turn.result.stop).toEqual({ type: 'budget_reached' });
    expect(fake.requests).toHaveLength(1); // the gateway refused the second call itself
    expect(turn.events.filter((e) => e.type === 'session.error')).toEqual([]);
  }, 240_000);

  it('an interrupt stops the CLI mid-answer within a second', async () => {
    const live = await liveEngine(s, claudeCodeAdapter, { model: 'claude-sonnet-4-5' });
    fake.enqueue({ kind: 'hang', text: 'Thinking about it' });
    const ctl = new AbortController();
    let abortedAt = 0;
    const turn = await live.turn('take your time', null, {
      signal: ctl.signal,
      onEvent: (e) => {
        if (e.type === 'agent.message' && !abortedAt) {
          abortedAt = Date.now();
          ctl.abort();
        }
      },
    });
    expect(abortedAt).toBeGreaterThan(0);
    expect(Date.now() - abortedAt).toBeLessThan(1500);
    expect(turn.result.stop).toEqual({ type: 'end_turn' });
  }, 240_000);

  it('records a turn whose shell command fails and whose file read fails (tool-errors-turn.jsonl)', async () => {
    await expectFailingToolsTurn(s, fake, claudeCodeAdapter, FIXTURES, {
      shell: { name: 'Bash', input: { command: 'echo partial; exit 3', description: 'Fail on purpose' }, id: 'toolu_e1' },
      read: { name: 'Read', input: { file_path: '/nonexistent-dir/missing.txt' }, id: 'toolu_e2' },
      reasoning: 'Trying two things',
    });
  }, 240_000);
});
