// CLI engines: the codex adapter's mapping of real `codex exec --json` output (recorded from
// codex 0.169.0 against the fake provider, in test/fixtures/codex) to session events; the
// engine-independent runner's interrupt; the real codex binary (installed into a cache directory
// outside node_modules at test time) running a turn that calls the service's /gateway, writes a
// file, is metered and resumes its conversation next turn with no provider key in its
// environment or files; and kimi_code / dsh turns ending with an error naming what is missing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { installEngine } from '../../src/engines/cli/core/install.js';
import { codexAdapter, codexMapper, CODEX_VERSION } from '../../src/engines/cli/codex/adapter.js';
import { runCliTurn } from '../../src/engines/cli/core/run-cli.js';
import type { EngineEvent } from '../../src/engines/cli/core/adapter.js';
import { sessionEvent } from '../../src/events/types.js';
import { prisma } from '../../src/db/client.js';
import { issueSessionCredential } from '../../src/gateway/session-credentials.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents } from '../helpers/sessions.js';
import { localSpawner } from '../helpers/cli-process.js';

const fixture = (name: string) => fs.readFileSync(path.join(import.meta.dirname, '../fixtures/codex', name), 'utf8').split('\n');

function mapAll(lines: string[]) {
  const mapper = codexMapper();
  const events = lines.flatMap((l) => mapper.line(l));
  return { mapper, events };
}

/** Each mapped event is a valid SessionEvent once the store adds its common fields. */
function expectValid(events: EngineEvent[]) {
  for (const e of events) sessionEvent.parse({ id: 'evt_1', sessionId: 'ses_1', agentId: null, at: new Date().toISOString(), type: e.type, ...e.fields });
}

describe('codex output mapping (recorded real output)', () => {
  it('a turn with a shell command: message, tool use and result, reasoning, final message, thread id, end_turn', () => {
    const { mapper, events } = mapAll(fixture('exec-tool-turn.jsonl'));
    expectValid(events);
    expect(events.map((e) => e.type)).toEqual(['agent.message', 'agent.tool_use', 'agent.tool_result', 'agent.reasoning', 'agent.message']);
    expect(events[0]!.fields).toMatchObject({ final: true, text: 'Writing the file now.' });
    expect(events[1]!.fields).toMatchObject({
      part: { type: 'tool_call', index: 0, call_id: 'item_2', tool_name: 'bash', args: { command: "/bin/bash -lc 'echo hello > hello.txt && cat hello.txt'" } },
    });
    expect(events[2]!.fields).toMatchObject({
      part: { type: 'tool_result', index: 0, call_id: 'item_2', tool_name: 'bash', status: 'ok', result: { exit_code: 0, output: 'hello\n' } },
    });
    expect(events[3]!.fields).toMatchObject({ final: true, part: { type: 'reasoning', text: 'The file is written' } });
    expect(events[4]!.fields).toMatchObject({ text: 'I wrote hello.txt.' });
    expect(mapper.resumeId).toBe('01a20768-e2d9-7bc2-9989-f41a9e4f4d1f');
    expect(mapper.finish(0)).toEqual({ stop: { type: 'end_turn' }, error: null });
  });

  it('a resumed turn keeps the same thread id', () => {
    const { mapper, events } = mapAll(fixture('exec-resume-turn.jsonl'));
    expect(events.map((e) => e.type)).toEqual(['agent.message']);
    expect(mapper.resumeId).toBe('01a20768-e2d9-7bc2-9989-f41a9e4f4d1f');
  });

  it("a failed turn ends retries_exhausted with the provider's words; a budget stop ends budget_reached", () => {
    const { mapper, events } = mapAll(fixture('exec-failed-turn.jsonl'));
    expectValid(events);
    expect(events.map((e) => e.type)).toEqual(['session.error']);
    const end = mapper.finish(1);
    expect(end.stop).toEqual({ type: 'retries_exhausted' });
    expect(end.error).toMatchObject({ type: 'engine_error', retry_status: 'exhausted', message: expect.stringContaining('the model is not available') });

    const budget = codexMapper();
    budget.line('{"type":"turn.failed","error":{"message":"stream error: budget_reached: the session\'s budget is reached"}}');
    expect(budget.finish(1)).toEqual({ stop: { type: 'budget_reached' }, error: null });
    expect(codexMapper().finish(null).error?.message).toContain('without finishing the turn');
  });

  it('the invocation resumes by thread id, maps the effort, and its files hold the gateway but no key', () => {
    const inv = codexAdapter.invocation(
      { prompt: 'go', systemPrompt: 'be kind', model: 'gpt-5', reasoningEffort: 'xhigh', resumeId: 'thread-1' },
      { binPath: '/opt/engines/codex/bin/codex', home: '/workspace/.agent/engine', gatewayBaseUrl: 'http://127.0.0.1:3128/gateway/openai/v1' },
    );
    expect(inv.argv.slice(0, 4)).toEqual(['/opt/engines/codex/bin/codex', 'exec', 'resume', 'thread-1']);
    expect(inv.argv).toContain('model_reasoning_effort="high"');
    expect(inv.stdin).toBe('go');
    expect(inv.files['/workspace/.agent/engine/.codex/config.toml']).toContain('base_url = "http://127.0.0.1:3128/gateway/openai/v1"');
    expect(inv.files['/workspace/.agent/engine/.codex/config.toml']).toContain('env_key = "AGENT_SERVICE_TOKEN"');
    expect(inv.files['/workspace/.agent/engine/.codex/AGENTS.md']).toBe('be kind');
  });
});

describe('the CLI runner', () => {
  it('an interrupt stops a CLI that ignores SIGTERM within a second; nothing after it reaches the session', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-run-'));
    const line = (o: unknown) => `console.log(${JSON.stringify(JSON.stringify(o))});`;
    const script =
      "process.on('SIGTERM', () => {});" +
      line({ type: 'thread.started', thread_id: 't-1' }) +
      line({ type: 'item.completed', item: { id: 'item_0', type: 'agent_message', text: 'working' } }) +
      `setTimeout(() => { ${line({ type: 'item.completed', item: { id: 'item_1', type: 'agent_message', text: 'too late' } })} }, 3000); setInterval(() => {}, 1000);`;
    const ctl = new AbortController();
    const emitted: EngineEvent[] = [];
    let abortedAt = 0;
    const result = await runCliTurn({
      invocation: { argv: [process.execPath, '-e', script], env: {}, stdin: '', files: {} },
      mapper: codexMapper(),
      spawn: localSpawner({ cwd: dir, env: { PATH: process.env.PATH! } }),
      emit: async (e) => {
        emitted.push(e);
        abortedAt = Date.now();
        ctl.abort(); // the user interrupts once the first message is on the stream
      },
      signal: ctl.signal,
    });
    expect(Date.now() - abortedAt).toBeLessThan(1000);
    expect(result).toEqual({ stop: { type: 'end_turn' }, resumeId: 't-1' });
    expect(emitted.map((e) => e.type === 'agent.message' && e.fields.text)).toEqual(['working']);
  });
});

// ---- over HTTP: the real codex CLI through the gateway, and engines that cannot run ----------

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

/** The codex CLI from npm, in the engine cache the service itself uses (installed once, reused). */
async function codexBinary(): Promise<string> {
  const engine = await installEngine(codexAdapter.cli, CODEX_VERSION);
  return path.join(engine.hostDir, 'node_modules', '.bin', 'codex');
}

/** Every file under a directory, as text. */
function filesUnder(dir: string): string {
  let out = '';
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out += fs.readFileSync(path.join(entry.parentPath, entry.name)).toString('latin1');
  }
  return out;
}

describe('the real codex CLI through the gateway', () => {
  it('runs a turn that writes a file, is metered, keeps no key, and the next turn resumes the conversation', async () => {
    const bin = await codexBinary();
    const { session } = await readySession(s);
    await prisma.session.update({ where: { id: session.id }, data: { status: 'running', turnCount: 1 } });
    const token = issueSessionCredential(session.id);
    const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'codex-ws-'));
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'codex-home-'));
    const env = { PATH: process.env.PATH!, HOME: home, AGENT_SERVICE_TOKEN: token };
    const turn = async (prompt: string, resumeId: string | null) => {
      const events: EngineEvent[] = [];
      const inv = codexAdapter.invocation(
        { prompt, systemPrompt: 'You are the test agent.', model: 'gpt-5', reasoningEffort: 'low', resumeId },
        { binPath: bin, home, gatewayBaseUrl: `${s.url}/gateway/openai/v1` },
      );
      const result = await runCliTurn({
        invocation: inv,
        mapper: codexAdapter.mapper(),
        spawn: localSpawner({ cwd: workspace, env }),
        emit: async (e) => void events.push(e),
        signal: new AbortController().signal,
      });
      return { events, result };
    };

    fake.enqueue(
      {
        kind: 'tool_call',
        name: 'exec_command',
        input: { cmd: 'echo hello > hello.txt && cat hello.txt', tty: false },
        id: 'call_w1',
        text: 'Writing the file now.',
        usage: { input: 1000, output: 50 },
      },
      { kind: 'reasoning_then_text', reasoning: 'done', text: 'I wrote hello.txt.', usage: { input: 1200, output: 20 } },
    );
    const first = await turn('write hello.txt', null);
    expect(first.result.stop).toEqual({ type: 'end_turn' });
    expect(first.result.resumeId).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.events.map((e) => e.type)).toEqual(['agent.message', 'agent.tool_use', 'agent.tool_result', 'agent.reasoning', 'agent.message']);
    expect(first.events[2]!.fields).toMatchObject({ part: { tool_name: 'bash', status: 'ok', result: { exit_code: 0, output: 'hello\n' } } });
    expect(fs.readFileSync(path.join(workspace, 'hello.txt'), 'utf8')).toBe('hello\n');
    // The calls went through the gateway: the provider saw the service's key, the CLI the credential.
    expect(fake.requests.map((r) => r.path)).toEqual(['/v1/responses', '/v1/responses']);
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(fake.requests[0]!.body.reasoning).toMatchObject({ effort: 'low' });
    const used = await prisma.modelUsage.findMany({ where: { sessionId: session.id } });
    expect(used.map((u) => u.inputTokens).sort()).toEqual([1000, 1200]);

    fake.enqueue({ kind: 'text', text: 'You asked for hello.txt.' });
    const second = await turn('what did I ask?', first.result.resumeId);
    expect(second.result).toEqual({ stop: { type: 'end_turn' }, resumeId: first.result.resumeId });
    expect(second.events.map((e) => e.type)).toEqual(['agent.message']);
    const history = JSON.stringify(fake.requests.at(-1)!.body.input);
    expect(history).toContain('I wrote hello.txt.');
    expect(history).toContain('write hello.txt');

    // Nothing the CLI holds names a provider key: its environment, its home, its workspace.
    const held = JSON.stringify(env) + filesUnder(home) + filesUnder(workspace);
    expect(held).not.toContain(OPENAI_KEY);
    expect(held).not.toContain(ANTHROPIC_KEY);
    expect(held).not.toMatch(/sk-(oai|ant)-platform/);
  }, 240_000);
});

describe('engines whose CLI cannot be installed', () => {
  it.each([
    ['kimi_code', ['Kimi Code CLI', 'not published on npm or Debian', 'github.com/MoonshotAI/kimi-code', 'choose another agentType']],
    ['dsh', ['dsh (DeepSeek Harness) CLI', 'no dsh CLI is published on npm or Debian', 'choose another agentType']],
  ])('a %s turn ends with a session.error naming what is missing and how to get it', async (agentType, phrases) => {
    const { session } = await readySession(s, { agentType });
    await sendText(s, session.id, 'hello');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const error = events.find((e) => e.type === 'session.error');
    expect(error.error).toMatchObject({ type: 'engine_unavailable', retry_status: 'exhausted' });
    for (const p of phrases) expect(error.error.message).toContain(p);
    expect(events.at(-1).stop_reason).toEqual({ type: 'retries_exhausted' });
    expect(fake.requests).toHaveLength(0);
  });
});
