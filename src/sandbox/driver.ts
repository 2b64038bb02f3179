// The sandbox driver interface: one sandbox per session with a /workspace. `local` jails a
// directory (bubblewrap, else util-linux unshare, else a plain process); `kubernetes` runs one
// pod per session and does everything through the exec API.
export interface SandboxSpec {
  sessionId: string;
  vcpus?: number | null;
  memoryMb?: number | null;
  env?: Record<string, string>;
  /** The session environment's prepared packages, read-only for every command (null: none). */
  environment?: EnvironmentMount | null;
}

/**
 * A prepared host directory seen read-only at `inside`, and the search-path variables (PATH,
 * NODE_PATH, PYTHONPATH, …) to prepend for every command (src/sandbox/environment-mount.ts).
 */
export interface EnvironmentMount {
  hostDir: string;
  inside: string;
  prepend: Record<string, string>;
}

export interface ExecOptions {
  timeoutMs?: number;
  maxOutputBytes?: number;
  stdin?: string;
  signal?: AbortSignal;
  /** Absolute path inside /workspace. */
  cwd?: string;
}

export interface ExecResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  truncated: boolean;
}

/** A host directory a process needs read-only at `inside` (SpawnOptions.mounts). */
export interface SandboxMount {
  host: string;
  inside: string;
  /**
   * A file that only a complete copy of exactly this directory has (the engine cache's install
   * marker). A driver that cannot bind `host` uses a directory already at `inside` (baked into
   * its image) when that directory has this file; without it, the directory is always copied.
   */
  marker?: string;
}

/** A long-running process started in the sandbox whose output is read as it comes (CLI engines). */
export interface SpawnOptions {
  /** argv inside the sandbox (run as is, no shell), or `command` for `bash -c`. */
  argv?: string[];
  command?: string;
  /** Variables on top of the sandbox's own (egress endpoint, session credential, proxies, CA). */
  env?: Record<string, string>;
  stdin?: string;
  /** Absolute path inside /workspace (default /workspace). */
  cwd?: string;
  /**
   * Host directories the process needs read-only at these paths (the engine install cache). A
   * driver that cannot bind them places a copy and rewrites the paths in argv and env.
   */
  mounts?: SandboxMount[];
  /** How much of stderr's end is kept for error messages (default 16 KiB). */
  stderrTailBytes?: number;
  /**
   * Gives up the start while it is still being prepared (a driver copying `mounts` in): spawn
   * then rejects with an AbortError and the process is never started; a copy under way goes on
   * for the next spawn. Once started, the process is stopped with kill().
   */
  signal?: AbortSignal;
}

export interface SandboxProcess {
  /** stdout, line by line, as the process writes it; ends when it closes stdout. */
  lines: AsyncIterable<string>;
  /** The exit code; null when it ended by a signal. */
  exited: Promise<number | null>;
  /** Signals the process and everything it started (SIGKILL leaves nothing behind). */
  kill(signal: 'SIGTERM' | 'SIGKILL'): void;
  /** The last stderr bytes so far. */
  stderrTail(): string;
}

export interface FileStat {
  size: number;
  isFile: boolean;
  isDirectory: boolean;
}

export interface Sandbox {
  readonly sessionId: string;
  /** Runs `bash -c command` with /workspace as the working directory. */
  exec(command: string, opts?: ExecOptions): Promise<ExecResult>;
  /**
   * Starts a process whose stdout is streamed (a CLI engine's turn); destroy() kills it too.
   * Both drivers have it; optional so views of a sandbox (e.g. a relay) need not.
   */
  spawn?(opts: SpawnOptions): Promise<SandboxProcess>;
  /** `path` is absolute under /workspace or relative to it. */
  readFile(path: string, opts?: { maxBytes?: number }): Promise<Buffer>;
  writeFile(path: string, data: Buffer | string, opts?: { mode?: number; readOnly?: boolean }): Promise<void>;
  stat(path: string): Promise<FileStat | null>;
  remove(path: string): Promise<void>;
  /**
   * Directories under /workspace that commands see read-only from now on (a read_only memory
   * store mount), replacing the previous list; the jail binds them read-only over themselves.
   * Optional: a driver without it cannot enforce read-only mounts.
   */
  setReadOnlyPaths?(paths: string[]): Promise<void>;
  /**
   * Copies a host directory tree to `path` (replacing it): how clones made outside get in. With
   * `move`, the caller gives `hostDir` up: a driver may move it in instead of copying it (the
   * local one renames it when it is on the same file system).
   */
  importTree(hostDir: string, path: string, opts?: { move?: boolean }): Promise<void>;
  /** The egress endpoint as commands inside see it (`http://127.0.0.1:3128` in a network namespace), null without egress. */
  readonly egressEndpoint?: string | null;
  /** Host path of /workspace where the driver has one (local), else null. */
  readonly hostWorkspace: string | null;
}

export interface SandboxDriver {
  readonly name: string;
  /** Idempotent: provisioning an existing session reattaches to it. */
  provision(spec: SandboxSpec): Promise<Sandbox>;
  /** Reattach (e.g. after a restart), or null when the session has no sandbox. */
  get(sessionId: string): Promise<Sandbox | null>;
  /** Kills every process of the session and deletes its workspace; idempotent. */
  destroy(sessionId: string): Promise<void>;
  /**
   * Copies the files of `fromSessionId`'s /workspace, as they are now, into `toSessionId`'s (a
   * fork), whose sandbox may not be provisioned yet: provisioning it then keeps the files. False
   * when the source has no sandbox (nothing copied).
   */
  copyWorkspace(fromSessionId: string, toSessionId: string): Promise<boolean>;
}

/**
 * The service's side of a sandbox's way out (src/egress/service.ts), as drivers see it: where to
 * serve a session's egress, and the variables every sandboxed command gets.
 */
export interface SandboxEgress {
  /** Serves the session's egress on a Unix socket at `hostPath` (bind-mounted into the jail). */
  serveSocket(sessionId: string, hostPath: string): Promise<void>;
  /** Serves it on a loopback TCP port instead (sandboxes without a network namespace). */
  serveLoopback(sessionId: string): Promise<number>;
  stop(sessionId: string): Promise<void>;
  /** Variables for one command: endpoint, a fresh session credential, proxies, gateway URLs, CA paths. */
  env(sessionId: string, endpoint: string, caDir: string | null): Record<string, string>;
  /** Host files of the egress CA sandboxes trust (certificate and bundle), or null. */
  caFiles(): { cert: string; bundle: string } | null;
}

/** A sandbox (pod) went away under a running command; the driver may replace it. */
export class SandboxUnavailableError extends Error {
  readonly code = 'ESANDBOXGONE';
}

export class SandboxPathError extends Error {}

export const WORKSPACE = '/workspace';
