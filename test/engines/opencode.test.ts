// opencode: the adapter's mapping of real `opencode run --format json` output (recorded from
// opencode 1.18.33 against the gateway and the fake provider, in test/fixtures/opencode) to
// session events; and the real CLI from npm, started with the adapter's invocation, calling the
// service's /gateway: a Claude turn that writes a file with its bash tool, a resumed turn that
// remembers it, a GPT turn over OpenAI Responses, an interrupt, a budget stop, and no provider
// key in its environment or files.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { opencodeAdapter, opencodeMapper, opencodeVariant } from '../../src/engines/cli/opencode/adapter.js';
import { prisma } from '../../src/db/client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { expectValidEvents, filesUnder, fixtureLines, expectFailingToolsTurn, liveEngine } from '../helpers/engine-live.js';

const FIXTURES = 'opencode';
const SESSION_ID = /^ses_[0-9a-zA-Z]+$/;

function mapAll(lines: string[]) {
  const mapper = opencodeMapper();
  const events = lines.flatMap((l) => mapper.line(l));
  return { mapper, events };
}

describe('opencode output mapping (recorded real output)', () => {
  it('a Claude turn with a bash call: reasoning, text, the call and its result, the final message, the session id, end_turn', () => {
    const { mapper, events } = mapAll(fixtureLines(FIXTURES, 'tool-turn.jsonl'));
    expectValidEvents(events);
    expect(events.map((e) => e.type)).toEqual(['agent.reasoning', 'agent.message', 'agent.tool_use', 'agent.tool_result', 'agent.reasoning', 'agent.message']);
    const [think, say, use, result, , done] = events;
    expect(think!.fields).toMatchObject({ final: true, signature: 'sig-fake-123', part: { type: 'reasoning', text: 'I will write the file' } });
    expect(say!.fields).toMatchObject({ final: true, text: 'Writing the file now.' });
    expect(use!.fields).toMatchObject({
      part: { type: 'tool_call', index: 0, call_id: 'toolu_o1', tool_name: 'bash', args: { command: 'echo hello > hello.txt && cat hello.txt' } },
    });
    expect(result!.fields).toMatchObject({
      part: { type: 'tool_result', index: 0, call_id: 'toolu_o1', tool_name: 'bash', status: 'ok', result: { exit_code: 0, output: 'hello\n' } },
    });
    expect(done!.fields).toMatchObject({ final: true, text: 'I wrote hello.txt.' });
    expect(mapper.resumeId).toMatch(SESSION_ID);
    expect(mapper.finish(0)).toEqual({ stop: { type: 'end_turn' }, error: null });
  });

  it('a resumed turn keeps the session id; a GPT turn over Responses maps the same way', () => {
    const first = mapAll(fixtureLines(FIXTURES, 'tool-turn.jsonl')).mapper.resumeId;
    const { mapper, events } = mapAll(fixtureLines(FIXTURES, 'resume-turn.jsonl'));
    expect(events.map((e) => e.type)).toEqual(['agent.message']);
    expect(mapper.resumeId).toBe(first);

    const gpt = mapAll(fixtureLines(FIXTURES, 'gpt-tool-turn.jsonl'));
    expectValidEvents(gpt.events);
    expect(gpt.events.map((e) => e.type)).toContain('agent.tool_result');
    expect(gpt.events.find((e) => e.type === 'agent.tool_result')!.fields).toMatchObject({ part: { tool_name: 'apply_patch', status: 'ok' } });
    expect(gpt.mapper.finish(0)).toEqual({ stop: { type: 'end_turn' }, error: null });
  });

  it("a call the gateway refuses for the budget ends budget_reached; another failure ends retries_exhausted in opencode's words", () => {
    const { mapper, events } = mapAll(fixtureLines(FIXTURES, 'budget-turn.jsonl'));
    expectValidEvents(events);
    expect(mapper.finish(1).stop).toEqual({ type: 'budget_reached' });

    const failed = opencodeMapper();
    failed.line('{"type":"error","sessionID":"ses_1","error":{"name":"APIError","data":{"message":"the session credential is revoked"}}}');
    expect(failed.finish(1)).toEqual({
      stop: { type: 'retries_exhausted' },
      error: { type: 'engine_error', retry_status: 'exhausted', message: 'opencode: the session credential is revoked' },
    });
    expect(failed.resumeId).toBe('ses_1');
    expect(opencodeMapper().finish(null).error?.message).toBe('opencode exited with code none (killed) without finishing the turn');
  });

  it('the invocation: json run, provider/model, resume by session id, variant, the gateway and the key variable in its config', () => {
    const inv = opencodeAdapter.invocation(
      { prompt: 'go', systemPrompt: 'be kind', model: 'gpt-5', reasoningEffort: 'max', resumeId: 'ses_1' },
      { binPath: '/opt/engines/opencode', home: '/w/.agent', gatewayBaseUrl: 'http://127.0.0.1:3128/gateway/openai/v1' },
    );
    expect(inv.argv.join(' ')).toBe(
      '/opt/engines/opencode run --format json --pure --auto --thinking --title agent-service -m openai/gpt-5 --variant xhigh --session ses_1',
    );
    expect(inv.stdin).toBe('go');
    expect(inv.env).toMatchObject({ XDG_CONFIG_HOME: '/w/.agent/.config', XDG_DATA_HOME: '/w/.agent/.local/share', OPENCODE_DISABLE_MODELS_FETCH: '1' });
    const config = JSON.parse(inv.files['/w/.agent/.config/opencode/opencode.json']!);
    expect(config.provider).toEqual({
      anthropic: { options: { baseURL: 'http://127.0.0.1:3128/gateway/anthropic/v1', apiKey: '{env:AGENT_SERVICE_TOKEN}' } },
      openai: { options: { baseURL: 'http://127.0.0.1:3128/gateway/openai/v1', apiKey: '{env:AGENT_SERVICE_TOKEN}' } },
    });
    expect(config.instructions).toEqual(['/w/.agent/.config/opencode/agent-service-instructions.md']);
    expect(inv.files['/w/.agent/.config/opencode/agent-service-instructions.md']).toBe('be kind');
    expect([
      opencodeVariant('claude-sonnet-4-5', 'low'),
      opencodeVariant('claude-sonnet-4-5', 'max'),
      opencodeVariant('gpt-5', 'none'),
      opencodeVariant('gpt-5', null),
    ]).toEqual([null, 'max', 'none', null]);
  });
});

// ---- the real opencode CLI through the gateway ---------------------------------------------

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

describe('the real opencode CLI through the gateway', () => {
  it('runs a Claude turn that writes a file, is metered, keeps no key, and the next turn resumes the conversation', async () => {
    const live = await liveEngine(s, opencodeAdapter, { model: 'claude-sonnet-4-5', reasoningEffort: 'high' });
    fake.enqueue(
      {
        kind: 'tool_call',
        reasoning: 'I will write the file',
        name: 'bash',
        input: { command: 'echo hello > hello.txt && cat hello.txt', description: 'Write hello.txt' },
        id: 'toolu_o1',
        text: 'Writing the file now.',
        usage: { input: 1000, output: 50 },
      },
      { kind: 'reasoning_then_text', reasoning: 'The file is written', text: 'I wrote hello.txt.', usage: { input: 1200, output: 20 } },
    );
    const first = await live.turn('write hello.txt', null);
    live.record(FIXTURES, 'tool-turn.jsonl', first.lines);
    expect(first.result.stop, first.stderr).toEqual({ type: 'end_turn' });
    expect(first.result.resumeId).toMatch(SESSION_ID);
    expect(first.events.map((e) => e.type)).toEqual([
      'agent.reasoning',
      'agent.message',
      'agent.tool_use',
      'agent.tool_result',
      'agent.reasoning',
      'agent.message',
    ]);
    expect(fs.readFileSync(path.join(live.workspace, 'hello.txt'), 'utf8')).toBe('hello\n');
    expect(fake.requests.map((r) => r.path)).toEqual(['/v1/messages', '/v1/messages']);
    expect(fake.requests[0]!.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(fake.requests[0]!.body.thinking).toMatchObject({ type: 'enabled' });
    expect(JSON.stringify(fake.requests[0]!.body.system)).toContain('You are the test agent.');
    const used = await prisma.modelUsage.findMany({ where: { sessionId: live.sessionId } });
    expect(used.map((u) => u.inputTokens).sort()).toEqual([1000, 1200]);

    fake.enqueue({ kind: 'text', text: 'You asked for hello.txt.' });
    const second = await live.turn('what did I ask?', first.result.resumeId);
    live.record(FIXTURES, 'resume-turn.jsonl', second.lines);
    expect(second.result).toEqual({ stop: { type: 'end_turn' }, resumeId: first.result.resumeId });
    expect(second.events.map((e) => e.type)).toEqual(['agent.message']);
    const history = JSON.stringify(fake.requests.at(-1)!.body.messages);
    expect(history).toContain('I wrote hello.txt.');
    expect(history).toContain('write hello.txt');

    const held = JSON.stringify(live.env) + filesUnder(live.home) + filesUnder(live.workspace);
    expect(held).not.toContain(ANTHROPIC_KEY);
    expect(held).not.toContain(OPENAI_KEY);
    expect(filesUnder(live.home)).not.toContain(live.token);
  }, 240_000);

  it("runs a GPT turn over the gateway's OpenAI Responses route with its apply_patch tool", async () => {
    const live = await liveEngine(s, opencodeAdapter, { model: 'gpt-5', reasoningEffort: 'low' });
    fake.enqueue(
      {
        kind: 'tool_call',
        reasoning: 'Writing the note',
        name: 'apply_patch',
        input: { patchText: '*** Begin Patch\n*** Add File: note.txt\n+from gpt\n*** End Patch' },
        id: 'call_o2',
        usage: { input: 900, output: 40 },
      },
      { kind: 'text', text: 'Saved note.txt.' },
    );
    const turn = await live.turn('save a note', null);
    live.record(FIXTURES, 'gpt-tool-turn.jsonl', turn.lines);
    expect(turn.result.stop, turn.stderr).toEqual({ type: 'end_turn' });
    expect(fs.readFileSync(path.join(live.workspace, 'note.txt'), 'utf8')).toBe('from gpt\n');
    expect(fake.requests.map((r) => r.path)).toEqual(['/v1/responses', '/v1/responses']);
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(fake.requests[0]!.body.reasoning).toMatchObject({ effort: 'low' });
  }, 240_000);

  it('a budget reached mid-call stops the turn: budget_reached, no error', async () => {
    const live = await liveEngine(s, opencodeAdapter, { model: 'claude-sonnet-4-5' });
    await prisma.session.update({ where: { id: live.sessionId }, data: { budgetMaxCents: 1 } });
    fake.enqueue({
      kind: 'tool_call',
      name: 'bash',
      input: { command: 'echo hi > hi.txt', description: 'Write hi.txt' },
      id: 'toolu_b1',
      usage: { input: 100_000, output: 50 },
    });
    const turn = await live.turn('write hi.txt', null);
    live.record(FIXTURES, 'budget-turn.jsonl', turn.lines);
    expect(turn.result.stop, turn.lines.join('\n')).toEqual({ type: 'budget_reached' });
    expect(turn.events.filter((e) => e.type === 'session.error')).toEqual([]);
  }, 240_000);

  it('an interrupt stops the CLI waiting on the model within a second', async () => {
    const live = await liveEngine(s, opencodeAdapter, { model: 'claude-sonnet-4-5' });
    fake.enqueue({ kind: 'hang', text: 'Thinking about it' });
    const ctl = new AbortController();
    let abortedAt = 0;
    // opencode prints a text part only once it is complete: interrupt once the model is called.
    const poll = setInterval(() => {
      if (fake.requests.length && !abortedAt) {
        abortedAt = Date.now();
        ctl.abort();
      }
    }, 20);
    const turn = await live.turn('take your time', null, { signal: ctl.signal }).finally(() => clearInterval(poll));
    expect(abortedAt).toBeGreaterThan(0);
    expect(Date.now() - abortedAt).toBeLessThan(1500);
    expect(turn.result.stop).toEqual({ type: 'end_turn' });
  }, 240_000);

  it('records a turn whose shell command fails and whose file read fails (tool-errors-turn.jsonl)', async () => {
    await expectFailingToolsTurn(s, fake, opencodeAdapter, FIXTURES, {
      shell: { name: 'bash', input: { command: 'echo partial; exit 3', description: 'Fail on purpose' }, id: 'toolu_e1' },
      read: { name: 'read', input: { filePath: '/nonexistent-dir/missing.txt' }, id: 'toolu_e2' },
    });
  }, 240_000);
});
