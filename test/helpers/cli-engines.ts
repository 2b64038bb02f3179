// The end-to-end suite every CLI engine passes, over HTTP with the real CLI from npm inside the
// session's bubblewrap jail and the fake provider behind the gateway. An engine joins with one
// CliEngineCase (its model, how the fake provider makes its CLI run a shell command, where the
// conversation is in a provider request) added to CLI_ENGINE_CASES.
//
// Per engine: a turn in which the CLI calls the gateway, runs a shell tool that writes a file in
// /workspace (on the host workspace afterwards), with the mapped events on the SSE stream and in
// history and session.status_idle end_turn; a second turn that resumes the CLI's own conversation
// (same conversation id; the provider receives the earlier exchange); an interrupt of a CLI
// waiting on a hanging provider → idle within about a second and no process of the jail left (a
// CLI kept as the sandbox's server stays, answers the next turn, and goes with the archive); a
// budget reached mid-turn → stop_reason budget_reached; no provider key in the CLI's environment
// or files.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './server.js';
import { startFakeProvider, type FakeProvider, type FakeStep } from '../fake-provider/server.js';
import { collectSse, history, readySession, sendText, waitFor, waitForEvents } from './sessions.js';
import { bwrapAvailable } from '../../src/sandbox/local.js';
import { engineAdapter } from '../../src/engines/cli/registry.js';
import { installEngine } from '../../src/engines/cli/core/install.js';
import { currentHarness } from '../../src/catalog/catalog.js';
import { prisma } from '../../src/db/client.js';
import { config, type Config } from '../../src/config.js';

export interface CliEngineCase {
  agentType: string;
  /** A model of the engine's catalog that the fake provider serves. */
  llm: string;
  /** The provider path its CLI calls (fake provider side): `/v1/responses`, `/v1/messages`, … */
  providerPath: string;
  /** A fake provider answer that makes the CLI run `command` with its shell tool (saying `text` first). */
  shellStep(command: string, text: string): FakeStep;
  /** The conversation a provider request carries, as text (to find an earlier turn in it). */
  conversationOf(body: any): string;
}

export const CLI_ENGINE_CASES: CliEngineCase[] = [
  {
    agentType: 'codex',
    llm: 'gpt-5',
    providerPath: '/v1/responses',
    shellStep: (cmd, text) => ({ kind: 'tool_call', name: 'exec_command', input: { cmd, tty: false }, id: 'call_shell_1', text }),
    conversationOf: (body) => JSON.stringify(body.input),
  },
  {
    agentType: 'claude_code',
    llm: 'claude-sonnet-4-5',
    providerPath: '/v1/messages',
    // Claude Code asks for thinking: an answer with a tool call starts with a thinking block.
    shellStep: (command, text) => ({
      kind: 'tool_call',
      reasoning: 'Running it',
      name: 'Bash',
      input: { command, description: 'Run it' },
      id: 'toolu_shell_1',
      text,
    }),
    conversationOf: (body) => JSON.stringify(body.messages),
  },
  {
    agentType: 'pi',
    llm: 'claude-sonnet-4-5',
    providerPath: '/v1/messages',
    // pi's default thinking level is on for Claude: a tool call starts with a thinking block.
    shellStep: (command, text) => ({ kind: 'tool_call', reasoning: 'Running it', name: 'bash', input: { command }, id: 'toolu_shell_1', text }),
    conversationOf: (body) => JSON.stringify(body.messages),
  },
  {
    agentType: 'opencode',
    llm: 'claude-sonnet-4-5',
    providerPath: '/v1/messages',
    shellStep: (command, text) => ({ kind: 'tool_call', name: 'bash', input: { command, description: 'Run it' }, id: 'toolu_shell_1', text }),
    conversationOf: (body) => JSON.stringify(body.messages),
  },
  {
    agentType: 'openclaw',
    llm: 'claude-sonnet-4-5',
    providerPath: '/v1/messages',
    shellStep: (command, text) => ({ kind: 'tool_call', name: 'exec', input: { command }, id: 'toolu_shell_1', text }),
    conversationOf: (body) => JSON.stringify(body.messages),
  },
];

export const OPENAI_KEY = 'sk-oai-platform-key-never-in-a-jail';
export const ANTHROPIC_KEY = 'sk-ant-platform-key-never-in-a-jail';

/** The bubblewrap jail is what these tests run the CLIs in: its absence is a failure that names the package. */
export function requireBwrap(): void {
  if (!bwrapAvailable()) throw new Error('bubblewrap is missing or cannot create namespaces here: apt-get install bubblewrap');
}

/**
 * What every CLI engine suite starts with: the jail checked, the engine's CLI installed (or found
 * in ENGINE_CACHE_DIR: no test times a download), the fake provider as both upstreams and a
 * server using it (with keys the CLIs must never see).
 */
export async function startCliEngineServer(agentType: string, overrides: Partial<Config> = {}): Promise<{ s: TestServer; fake: FakeProvider }> {
  requireBwrap();
  await installEngine(engineAdapter(agentType)!.cli, currentHarness(agentType));
  const fake = await startFakeProvider();
  const s = await startTestServer({
    openaiApiKey: OPENAI_KEY,
    openaiBaseUrl: fake.openaiBaseUrl,
    anthropicApiKey: ANTHROPIC_KEY,
    anthropicBaseUrl: fake.anthropicBaseUrl,
    ...overrides,
  });
  return { s, fake };
}

/** Host processes inside a session's jail: those whose mounts include its workspace. */
export function jailProcesses(sessionId: string): number[] {
  const mark = `/sandboxes/${sessionId}/workspace`;
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/mountinfo`, 'utf8').includes(mark)) pids.push(Number(entry));
    } catch {
      /* gone meanwhile, or not ours to read */
    }
  }
  return pids;
}

/** Everything under a directory as text (to look for keys). */
/** The environments of these host processes, joined (a process gone meanwhile gives nothing). */
export function processEnvironments(pids: number[]): string {
  return pids
    .map((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/environ`, 'latin1');
      } catch {
        return '';
      }
    })
    .join('\n');
}

/** A running CLI's environment: the session credential, never a provider key (nor these secrets). */
export function expectSessionCredentialOnly(pids: number[], secrets: string[] = []): void {
  const environ = processEnvironments(pids);
  expect(environ).toContain('AGENT_SERVICE_TOKEN=ast_sbx_');
  for (const secret of [OPENAI_KEY, ANTHROPIC_KEY, ...secrets]) expect(environ).not.toContain(secret);
}

export function filesUnder(dir: string): string {
  let out = '';
  if (!fs.existsSync(dir)) return out;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    try {
      out += fs.readFileSync(path.join(entry.parentPath, entry.name)).toString('latin1');
    } catch (err) {
      // A running server (OpenClaw's Gateway) may remove a file between the listing and the read.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return out;
}

const types = (events: any[]) => events.map((e) => e.type);

/**
 * How long a session's first turn may take: it starts the CLI, or the sandbox's engine server,
 * whose start the service waits up to 180 s for on a CPU-starved machine (engine-server.ts).
 */
const FIRST_TURN_MS = 240_000;
/** A test that waits for a first turn, and a little more. */
const CASE_MS = FIRST_TURN_MS + 120_000;

export function defineCliEngineSuite(c: CliEngineCase): void {
  describe(`CLI engine ${c.agentType}: real turns in the sandbox`, () => {
    let s: TestServer;
    let fake: FakeProvider;

    beforeAll(async () => {
      ({ s, fake } = await startCliEngineServer(c.agentType));
    }, 900_000);
    afterAll(async () => {
      await s?.stop();
      await fake?.close();
    });
    beforeEach(() => fake.reset());

    const session = async (sessionBody: Record<string, unknown> = {}) =>
      (await readySession(s, { agentType: c.agentType, llm: c.llm }, sessionBody)).session as { id: string };
    const workspaceOf = (id: string) => path.join(config().dataDir, 'sandboxes', id, 'workspace');

    it(
      'a turn: the CLI calls the gateway, writes a file in /workspace with its shell tool, events stream, idle end_turn; the next turn resumes',
      async () => {
        const { id } = await session();
        fake.enqueue(c.shellStep('echo from-the-cli > made-by-cli.txt', 'Writing the file now.'), { kind: 'text', text: 'I wrote made-by-cli.txt.' });
        const live = collectSse(`${s.base}/sessions/${id}/events/stream`, s.adminToken, (f) => f.some((x) => x.data?.type === 'session.status_idle'), {
          timeoutMs: FIRST_TURN_MS,
        });
        await sendText(s, id, 'write made-by-cli.txt');
        const frames = await live;
        const events = await waitForEvents(s, id, 'session.status_idle', 1, FIRST_TURN_MS);
        const streamed = frames.map((f) => f.data);
        expect(streamed.at(-1), JSON.stringify(events.filter((e) => e.type === 'session.error'))).toMatchObject({
          type: 'session.status_idle',
          stop_reason: { type: 'end_turn' },
        });
        for (const list of [streamed, events]) {
          expect(types(list)).toEqual(expect.arrayContaining(['session.status_running', 'agent.tool_use', 'agent.tool_result', 'agent.message']));
        }
        const use = events.find((e) => e.type === 'agent.tool_use');
        const result = events.find((e) => e.type === 'agent.tool_result');
        expect(use.part).toMatchObject({ type: 'tool_call' });
        expect(result.part).toMatchObject({ type: 'tool_result', call_id: use.part.call_id, status: 'ok' });
        expect(events.filter((e) => e.type === 'agent.message').at(-1).text).toContain('I wrote made-by-cli.txt.');
        expect(types(events).indexOf('agent.tool_use')).toBeLessThan(types(events).indexOf('agent.tool_result'));
        // The file is on the host side of the workspace: the tool ran in the session's sandbox.
        expect(fs.readFileSync(path.join(workspaceOf(id), 'made-by-cli.txt'), 'utf8')).toBe('from-the-cli\n');
        // The provider saw the service's key; the call was metered into the session.
        expect(fake.requests.map((r) => r.path)).toEqual([c.providerPath, c.providerPath]);
        expect(fake.requests[0]!.headers.authorization ?? fake.requests[0]!.headers['x-api-key']).toMatch(/platform-key-never-in-a-jail/);
        expect(await prisma.modelUsage.count({ where: { sessionId: id } })).toBe(2);
        // The idle event's usage is what the gateway metered for the turn (issue #31).
        const metered = await prisma.modelUsage.findMany({ where: { sessionId: id } });
        expect(events.filter((e) => e.type === 'session.status_idle').at(-1).usage).toMatchObject({
          input_tokens: metered.reduce((n, r) => n + r.inputTokens, 0),
          output_tokens: metered.reduce((n, r) => n + r.outputTokens, 0),
          model_calls: 2,
          tool_calls: events.filter((e) => e.type === 'agent.tool_result').length,
        });
        const conversation = (await prisma.session.findUniqueOrThrow({ where: { id } })).cliConversationId;
        expect(conversation).toBeTruthy();

        // Second turn: the CLI resumes its own conversation.
        fake.enqueue({ kind: 'text', text: 'You asked me to write made-by-cli.txt.' });
        await sendText(s, id, 'what did I ask you?');
        const after = await waitForEvents(s, id, 'session.status_idle', 2, 120_000);
        expect(after.at(-1)).toMatchObject({ stop_reason: { type: 'end_turn' } });
        expect(after.filter((e) => e.type === 'agent.message').at(-1).text).toBe('You asked me to write made-by-cli.txt.');
        const seen = c.conversationOf(fake.requests.at(-1)!.body);
        expect(seen).toContain('write made-by-cli.txt');
        expect(seen).toContain('I wrote made-by-cli.txt.');
        expect(seen).toContain('what did I ask you?');
        expect((await prisma.session.findUniqueOrThrow({ where: { id } })).cliConversationId).toBe(conversation);

        // Nothing the CLI holds names a provider key: its workspace and state directory.
        const held = filesUnder(workspaceOf(id));
        expect(held).not.toContain(OPENAI_KEY);
        expect(held).not.toContain(ANTHROPIC_KEY);
      },
      CASE_MS,
    );

    it(
      "interrupt of a CLI waiting on the provider: idle within about a second, the jail's processes gone, no key in their environment",
      async () => {
        const { id } = await session();
        fake.enqueue({ kind: 'hang', text: 'thinking' });
        await sendText(s, id, 'take your time');
        await waitFor(async () => fake.requests.length > 0, FIRST_TURN_MS, 'the CLI to call the provider');
        const procs = jailProcesses(id);
        expect(procs.length).toBeGreaterThan(0);
        // The running CLI's own environment: the session credential, never a provider key.
        expectSessionCredentialOnly(procs);

        const started = Date.now();
        expect((await s.api('POST', `/sessions/${id}/interrupt`)).body).toEqual({ status: 'interrupting' });
        const events = await waitForEvents(s, id, 'session.status_idle', 1, 10_000);
        const took = Date.now() - started;
        expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
        expect(took).toBeLessThan(1500);
        if (!engineAdapter(c.agentType)?.server) {
          await waitFor(async () => jailProcesses(id).length === 0, 2000, "the jail's processes to be gone");
          return;
        }
        // A CLI kept running as the sandbox's server: the interrupted turn is over, the server
        // answers the next turn at once, and the archive takes it away with the sandbox.
        expect(jailProcesses(id).length).toBeGreaterThan(0);
        fake.enqueue({ kind: 'text', text: 'after the interrupt' });
        await sendText(s, id, 'still there?');
        const next = await waitForEvents(s, id, 'session.status_idle', 2, 60_000);
        expect(next.filter((e) => e.type === 'agent.message' && e.final).map((e) => e.text)).toContain('after the interrupt');
        await waitFor(async () => (await s.api('POST', `/sessions/${id}/archive`)).status === 200, 5000, 'the archive');
        await waitFor(async () => jailProcesses(id).length === 0, 5000, "the jail's processes to be gone");
      },
      CASE_MS,
    );

    it(
      'a budget reached mid-turn stops the CLI: stop_reason budget_reached',
      async () => {
        const { id } = await session({ budget: { type: 'limit', max_list_cost: { amount: '1', currency: 'USD' } } });
        // The first answer costs far more than 1 cent: the budget is reached when it is metered, and
        // the CLI's next call (after its tool ran) is refused by the gateway. (Not so much that the
        // universe's starting credits run out: the next test's sends would be refused.)
        fake.enqueue({ ...c.shellStep('echo spent > spent.txt', 'Spending.'), usage: { input: 1_000_000, output: 10 } } as FakeStep, {
          kind: 'text',
          text: 'never reached',
        });
        await sendText(s, id, 'spend it all');
        const events = await waitForEvents(s, id, 'session.status_idle', 1, FIRST_TURN_MS);
        expect(events.at(-1), JSON.stringify(events.filter((e) => e.type === 'session.error'))).toMatchObject({
          type: 'session.status_idle',
          stop_reason: { type: 'budget_reached' },
        });
        expect(fake.requests).toHaveLength(1);
        expect((await s.api('GET', `/sessions/${id}`)).body.session.status).toBe('idle');
      },
      CASE_MS,
    );

    it(
      'history and the live stream agree on the mapped events',
      async () => {
        const { id } = await session();
        fake.enqueue({ kind: 'text', text: 'pong' });
        await sendText(s, id, 'ping');
        const events = await waitForEvents(s, id, 'session.status_idle', 1, FIRST_TURN_MS);
        // Streamed chunks (final: false) may come first; the complete message is the one that counts.
        const complete = events.filter((e) => e.final !== false);
        expect(
          types(complete).filter((t) => t.startsWith('agent.') || t.startsWith('session.status')),
          JSON.stringify(events.slice(-3)),
        ).toEqual(['session.status_running', 'agent.message', 'session.status_idle']);
        expect((await history(s, id)).find((e) => e.type === 'agent.message' && e.final !== false).text).toBe('pong');
      },
      CASE_MS,
    );
  });
}
