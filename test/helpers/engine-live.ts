// Runs a real engine CLI's turns with its adapter's invocation as a plain child process of the
// test (the sandbox's spawner runs it in the jail): the CLI installed from npm into the shared
// engine cache (install.ts, the same layout turns use), the gateway of a test server as its only
// model API, the session's credential as its only key. Keeps every output line so a test can
// record it: RECORD_CLI_FIXTURES=1 writes them, scrubbed of the credential and temporary paths,
// into test/fixtures/<engine>/.
import fs from 'node:fs';
import { expect } from 'vitest';
import os from 'node:os';
import path from 'node:path';
import { prisma } from '../../src/db/client.js';
import type { EngineAdapter, EngineEvent } from '../../src/engines/cli/core/adapter.js';
import { installEngine } from '../../src/engines/cli/core/install.js';
import { runCliTurn, type CliSpawner, type CliTurnResult } from '../../src/engines/cli/core/run-cli.js';
import { sessionEvent } from '../../src/events/types.js';
import { issueSessionCredential } from '../../src/gateway/session-credentials.js';
import { localSpawner } from './cli-process.js';
import { readySession } from './sessions.js';
import type { TestServer } from './server.js';
import type { FakeProvider } from '../fake-provider/server.js';

/** The engine's CLI (and the Node it needs) from the engine cache, installed on first use. */
export async function engineInstall(adapter: EngineAdapter): Promise<{ bin: string; pathPrefix: string }> {
  const installed = await installEngine(adapter.cli, adapter.cli.version);
  const bin = path.join(installed.hostDir, 'node_modules', '.bin', adapter.cli.bin);
  return { bin, pathPrefix: installed.node ? `${installed.node.hostDir}:` : '' };
}

/** Each mapped event is a valid SessionEvent once the store adds its common fields. */
export function expectValidEvents(events: EngineEvent[]): void {
  for (const e of events) sessionEvent.parse({ id: 'evt_1', sessionId: 'ses_1', agentId: null, at: new Date().toISOString(), type: e.type, ...e.fields });
}

/** Every file under a directory, as text (to look for keys the CLI must never hold). */
export function filesUnder(dir: string): string {
  let out = '';
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out += fs.readFileSync(path.join(entry.parentPath, entry.name)).toString('latin1');
  }
  return out;
}

export interface LiveTurn {
  events: EngineEvent[];
  result: CliTurnResult;
  /** The CLI's raw stdout lines. */
  lines: string[];
  stderr: string;
}

export interface LiveEngine {
  sessionId: string;
  token: string;
  workspace: string;
  home: string;
  env: Record<string, string>;
  turn(prompt: string, resumeId: string | null, opts?: { signal?: AbortSignal; onEvent?: (e: EngineEvent) => void }): Promise<LiveTurn>;
  /** RECORD_CLI_FIXTURES=1: the lines into test/fixtures/<dir>/<name>, the credential and paths replaced. */
  record(dir: string, name: string, lines: string[]): void;
}

/** A running session of the test server whose credential the CLI uses, and its turns. */
export async function liveEngine(
  s: TestServer,
  adapter: EngineAdapter,
  opts: { model: string; reasoningEffort?: string | null; systemPrompt?: string },
): Promise<LiveEngine> {
  const { bin, pathPrefix } = await engineInstall(adapter);
  const { session } = await readySession(s);
  // The gateway accepts the credential only while a turn of its session runs.
  await prisma.session.update({ where: { id: session.id }, data: { status: 'running', turnCount: 1 } });
  const token = issueSessionCredential(session.id);
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), `${adapter.agentType}-ws-`));
  const home = fs.mkdtempSync(path.join(os.tmpdir(), `${adapter.agentType}-home-`));
  const env = { PATH: `${pathPrefix}${process.env.PATH!}`, HOME: home, AGENT_SERVICE_TOKEN: token };
  const scrub = (text: string) => text.replaceAll(token, '<AGENT_SERVICE_TOKEN>').replaceAll(workspace, '/workspace').replaceAll(home, '/home/agent');
  return {
    sessionId: session.id,
    token,
    workspace,
    home,
    env,
    async turn(prompt, resumeId, turnOpts = {}) {
      const events: EngineEvent[] = [];
      const lines: string[] = [];
      const stderr: string[] = [];
      const inv = adapter.invocation(
        { prompt, systemPrompt: opts.systemPrompt ?? 'You are the test agent.', model: opts.model, reasoningEffort: opts.reasoningEffort ?? null, resumeId },
        { binPath: bin, home, gatewayBaseUrl: `${s.url}/gateway` },
      );
      const spawn = localSpawner({ cwd: workspace, env, stderr });
      const teeing: CliSpawner = async (i, signal) => {
        const proc = await spawn(i, signal);
        return {
          ...proc,
          lines: (async function* () {
            for await (const l of proc.lines) {
              lines.push(l);
              yield l;
            }
          })(),
        };
      };
      const result = await runCliTurn({
        invocation: inv,
        mapper: adapter.mapper(),
        spawn: teeing,
        emit: async (e) => {
          events.push(e);
          turnOpts.onEvent?.(e);
        },
        signal: turnOpts.signal ?? new AbortController().signal,
      });
      return { events, result, lines, stderr: stderr.join('') };
    },
    record(dir, name, lines) {
      if (!process.env.RECORD_CLI_FIXTURES) return;
      const target = path.join(import.meta.dirname, '../fixtures', dir, name);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(
        target,
        `${lines
          .map(scrub)
          .filter((l) => l.trim())
          .join('\n')}\n`,
      );
    },
  };
}

export const fixtureLines = (dir: string, name: string) => fs.readFileSync(path.join(import.meta.dirname, '../fixtures', dir, name), 'utf8').split('\n');

interface ToolCall {
  name: string;
  input: Record<string, unknown>;
  id: string;
}

/**
 * A live turn in which the CLI's own shell command fails (`exit 3`) and its file read fails
 * (missing file), in the CLI's tool names: recorded as `<fixtures>/tool-errors-turn.jsonl`;
 * the turn ends normally and both results are errors.
 */
export async function expectFailingToolsTurn(
  s: TestServer,
  fake: FakeProvider,
  adapter: EngineAdapter,
  fixtures: string,
  calls: { shell: ToolCall; read: ToolCall; reasoning?: string },
): Promise<void> {
  const live = await liveEngine(s, adapter, { model: 'claude-sonnet-4-5' });
  fake.enqueue(
    { kind: 'tool_call', ...(calls.reasoning ? { reasoning: calls.reasoning } : {}), ...calls.shell, more: [calls.read], text: 'Trying.' },
    { kind: 'text', text: 'Both failed.' },
  );
  const turn = await live.turn('try both', null);
  live.record(fixtures, 'tool-errors-turn.jsonl', turn.lines);
  expect(turn.result.stop, turn.stderr).toEqual({ type: 'end_turn' });
  const results = turn.events.filter((e) => e.type === 'agent.tool_result');
  expect(results.map((e) => e.type === 'agent.tool_result' && e.fields.part.type === 'tool_result' && e.fields.part.status)).toEqual(['error', 'error']);
}
