// The `local` sandbox driver: a directory per session, `<rootDir>/<sessionId>/workspace`,
// bind-mounted at /workspace inside a bubblewrap jail for each exec (see jail.ts). Where bwrap
// is missing or cannot create namespaces it runs plain child processes and warns once.
//
// Network: each exec gets its own, empty network namespace (`--unshare-net`, only a loopback of
// its own), so a sandboxed command cannot reach the host's services (the service's port,
// PostgreSQL, Redis) nor anything else. Until the sandboxes' egress proxy exists there is no
// outbound network from a sandbox at all. `network: 'host'` (sharing the host's namespace)
// remains for tests and trusted local use only; the service never selects it.
// vcpus and memoryMb are not enforced by this driver (bwrap has no cgroup limits).
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { type ExecOptions, type ExecResult, type FileStat, type Sandbox, type SandboxDriver, type SandboxSpec, WORKSPACE } from './driver.js';
import { forceRemove, readContained, removeContained, statContained, writeContained } from './host-files.js';
import { bwrapUsable, cleanEnv, jailArgs, type NetworkMode } from './jail.js';
import { relativeToWorkspace, resolveInside } from './paths.js';
import { runProcess, type RunningProcess } from './process.js';

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_OUTPUT = 64 * 1024;
const DESTROY_WAIT_MS = 5_000;
const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

export interface LocalDriverOptions {
  rootDir: string;
  logger?: { warn: (msg: string) => void };
  /** 'none' (default): an own network namespace with only a loopback; 'host' shares the host's. */
  network?: NetworkMode;
  /** The bubblewrap binary (default `bwrap` on PATH). */
  bwrapPath?: string;
  /** Run plain child processes even where bwrap works (tests of the fallback). */
  forceNoJail?: boolean;
}

export { bwrapUsable as bwrapAvailable } from './jail.js';

class LocalSandbox implements Sandbox {
  private readonly running = new Set<RunningProcess>();
  private destroyed = false;

  constructor(
    readonly sessionId: string,
    readonly hostWorkspace: string,
    private readonly jail: { bin: string; network: NetworkMode } | null,
    private readonly env: Record<string, string>,
  ) {}

  async exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    if (this.destroyed) throw Object.assign(new Error(`the sandbox of session ${this.sessionId} was destroyed`), { code: 'ESANDBOXGONE' });
    const rel = opts.cwd ? relativeToWorkspace(opts.cwd) : '';
    const hostCwd = resolveInside(this.hostWorkspace, rel || WORKSPACE);
    if (!fs.statSync(hostCwd, { throwIfNoEntry: false })?.isDirectory()) {
      return { exitCode: 1, stdout: '', stderr: `cd: ${opts.cwd}: No such directory\n`, timedOut: false, aborted: false, truncated: false };
    }
    const run = { timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, maxOutputBytes: opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT, stdin: opts.stdin, signal: opts.signal };
    const proc = this.jail
      ? runProcess(this.jail.bin, [...jailArgs(this.hostWorkspace, { network: this.jail.network, cwd: rel ? `${WORKSPACE}/${rel}` : WORKSPACE }), '/bin/bash', '-c', command], {
          ...run,
          cwd: this.hostWorkspace,
          env: cleanEnv(WORKSPACE, this.env),
        })
      : // Fallback: same clean environment, but the workspace is only the host directory.
        runProcess('/bin/bash', ['-c', command], { ...run, cwd: hostCwd, env: cleanEnv(this.hostWorkspace, this.env) });
    this.running.add(proc);
    try {
      return await proc.result;
    } finally {
      this.running.delete(proc);
    }
  }

  readFile(p: string, opts: { maxBytes?: number } = {}): Promise<Buffer> {
    return readContained(this.hostWorkspace, p, opts.maxBytes);
  }

  writeFile(p: string, data: Buffer | string, opts: { mode?: number; readOnly?: boolean } = {}): Promise<void> {
    return writeContained(this.hostWorkspace, p, data, opts);
  }

  stat(p: string): Promise<FileStat | null> {
    return statContained(this.hostWorkspace, p);
  }

  remove(p: string): Promise<void> {
    return removeContained(this.hostWorkspace, p);
  }

  /** Kills every running command and waits (bounded) until they are gone. */
  async close(): Promise<void> {
    this.destroyed = true;
    const all = [...this.running];
    for (const proc of all) proc.kill();
    await Promise.race([Promise.all(all.map((p) => p.result)), new Promise((r) => setTimeout(r, DESTROY_WAIT_MS).unref())]);
  }
}

export function createLocalDriver(opts: LocalDriverOptions): SandboxDriver {
  const sandboxes = new Map<string, LocalSandbox>();
  const network = opts.network ?? 'none';
  const bin = opts.bwrapPath ?? 'bwrap';
  let warned = false;

  const warn = (msg: string) => {
    if (warned) return;
    warned = true;
    if (opts.logger) opts.logger.warn(msg);
    else process.emitWarning(msg);
  };
  const jail = (): { bin: string; network: NetworkMode } | null => {
    if (opts.forceNoJail) return null;
    if (bwrapUsable(network, bin)) return { bin, network };
    // Some runtimes refuse network namespaces but allow the rest: keep the file jail at least.
    if (network === 'none' && bwrapUsable('host', bin)) {
      warn('bubblewrap cannot create a network namespace here: sandboxes share the host network and can reach its loopback services');
      return { bin, network: 'host' };
    }
    warn('bubblewrap (bwrap) is missing or cannot create namespaces here: sandboxes run as plain child processes WITHOUT isolation, host network included (install the bubblewrap package)');
    return null;
  };
  const sessionDir = (sessionId: string) => {
    // The id becomes a path component: nothing that could climb out of rootDir.
    if (!SESSION_ID.test(sessionId)) throw new Error(`invalid session id ${JSON.stringify(sessionId)}`);
    return path.join(opts.rootDir, sessionId);
  };
  // The spec's env is kept next to (not inside) the workspace so get() after a restart has it.
  const specFile = (sessionId: string) => path.join(sessionDir(sessionId), 'sandbox.json');
  const attach = (sessionId: string, env: Record<string, string>) => {
    const sb = new LocalSandbox(sessionId, path.join(sessionDir(sessionId), 'workspace'), jail(), env);
    sandboxes.set(sessionId, sb);
    return sb;
  };

  return {
    name: 'local',
    async provision(spec: SandboxSpec) {
      const existing = sandboxes.get(spec.sessionId);
      if (existing) return existing;
      await fsp.mkdir(path.join(sessionDir(spec.sessionId), 'workspace'), { recursive: true });
      const saved = await readSpecEnv(specFile(spec.sessionId));
      const env = spec.env ?? saved ?? {};
      if (spec.env || !saved) await fsp.writeFile(specFile(spec.sessionId), JSON.stringify({ env }), { mode: 0o600 });
      return attach(spec.sessionId, env);
    },
    async get(sessionId: string) {
      const existing = sandboxes.get(sessionId);
      if (existing) return existing;
      if (!fs.existsSync(path.join(sessionDir(sessionId), 'workspace'))) return null;
      return attach(sessionId, (await readSpecEnv(specFile(sessionId))) ?? {});
    },
    async destroy(sessionId: string) {
      const dir = sessionDir(sessionId);
      await sandboxes.get(sessionId)?.close();
      sandboxes.delete(sessionId);
      await forceRemove(dir);
    },
  };
}

async function readSpecEnv(file: string): Promise<Record<string, string> | null> {
  try {
    return (JSON.parse(await fsp.readFile(file, 'utf8')) as { env: Record<string, string> }).env;
  } catch {
    return null;
  }
}
