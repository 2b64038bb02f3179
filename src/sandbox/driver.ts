// The sandbox driver interface: one sandbox per session with a /workspace. `local` jails a
// directory with bubblewrap; a Kubernetes driver (one pod per session, everything through
// exec) fits the same shape.
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

export class SandboxPathError extends Error {}

export const WORKSPACE = '/workspace';
