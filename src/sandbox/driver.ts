// The sandbox driver interface: one sandbox per session with a /workspace. `local` jails a
// directory (bubblewrap, else util-linux unshare, else a plain process); `kubernetes` runs one
// pod per session and does everything through the exec API.
export interface SandboxSpec {
  sessionId: string;
  vcpus?: number | null;
  memoryMb?: number | null;
  env?: Record<string, string>;
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

export interface FileStat {
  size: number;
  isFile: boolean;
  isDirectory: boolean;
}

export interface Sandbox {
  readonly sessionId: string;
  /** Runs `bash -c command` with /workspace as the working directory. */
  exec(command: string, opts?: ExecOptions): Promise<ExecResult>;
  /** `path` is absolute under /workspace or relative to it. */
  readFile(path: string, opts?: { maxBytes?: number }): Promise<Buffer>;
  writeFile(path: string, data: Buffer | string, opts?: { mode?: number; readOnly?: boolean }): Promise<void>;
  stat(path: string): Promise<FileStat | null>;
  remove(path: string): Promise<void>;
  /** Copies a host directory tree to `path` (replacing it): how clones made outside get in. */
  importTree(hostDir: string, path: string): Promise<void>;
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
