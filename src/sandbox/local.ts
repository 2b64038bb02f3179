// The `local` sandbox driver: a directory per session, `<rootDir>/<sessionId>/workspace`, seen
// as /workspace by every command, which runs in a jail of its own (see isolation below).
//
// Isolation, best first (SANDBOX_ISOLATION=bwrap|unshare|none forces one):
// - bubblewrap (jail.ts): own user-less mount, PID, IPC, UTS and network namespaces;
// - util-linux unshare (unshare-jail.ts) where bwrap is missing: the same namespaces through an
//   unprivileged user namespace, a rebuilt root with /workspace;
// - none: a plain child process, loudly warned about, where no namespace can be made. Commands
//   still name /workspace: it is rewritten to the host directory in the command text, and HOME
//   and the working directory are that directory.
//
// Network: each jailed command has its own network namespace with only a loopback. Its one way
// out is the service's egress proxy: a Unix socket served for the session (SandboxEgress) is
// bound read-only at /run/agent-service/egress.sock, and a forwarder started first inside the
// namespace (launcher.ts) listens on 127.0.0.1:3128. Without a namespace the proxy listens on a
// loopback port of the host for the session. The host's own services (the API, PostgreSQL,
// Redis) are unreachable from a jail.
//
// Machine shape: vcpus and memoryMb become a cgroup per session where this process may create
// one (cgroups.ts); elsewhere they are not enforced (warned once).
import { settings } from '../config.js';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  type ExecOptions,
  type ExecResult,
  type FileStat,
  type Sandbox,
  type SandboxDriver,
  type SandboxEgress,
  type SandboxProcess,
  type SandboxSpec,
  type SpawnOptions,
  WORKSPACE,
} from './driver.js';
import { forceRemove, readContained, removeContained, statContained, writeContained } from './host-files.js';
import { bwrapUsable, cleanEnv, jailArgs, type NetworkMode } from './jail.js';
import { shQuote, unshareArgs, unshareUsable } from './unshare-jail.js';
import { spawnStreaming } from './stream-process.js';
import { AGENT_DIR, agentFiles, forwarderKind, launchArgs, type ForwarderKind } from './launcher.js';
import { cgroupSupport, joinArgs, sessionCgroup, type SessionCgroup } from './cgroups.js';
import { isInside, relativeToWorkspace, resolveInside } from './paths.js';
import { runProcess, type RunningProcess } from './process.js';
import { withEnvironmentPaths } from './environment-mount.js';

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_OUTPUT = 64 * 1024;
const DESTROY_WAIT_MS = 5_000;
const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;
const MAX_SOCKET_PATH = 100; // sun_path holds 108 bytes

export type IsolationKind = 'bwrap' | 'unshare' | 'none';

export interface LocalDriverOptions {
  rootDir: string;
  logger?: { warn: (msg: string) => void };
  /** 'none' (default): an own network namespace with only a loopback; 'host' shares the host's. */
  network?: NetworkMode;
  /** The bubblewrap binary (default `bwrap` on PATH). */
  bwrapPath?: string;
  /** The util-linux unshare binary (default `unshare` on PATH). */
  unsharePath?: string;
  /** Forces one isolation (default: the best that works here). */
  isolation?: IsolationKind;
  /** Run plain child processes even where a jail works (tests of the fallback). */
  forceNoJail?: boolean;
  /** The service's egress (proxy) for the sandboxes; without it they have no way out at all. */
  egress?: SandboxEgress;
}

export { bwrapUsable as bwrapAvailable } from './jail.js';
export { unshareUsable as unshareAvailable } from './unshare-jail.js';

type Isolation = { kind: 'bwrap'; bin: string; network: NetworkMode } | { kind: 'unshare'; bin: string; newRoot: string } | { kind: 'none' };

interface SessionState {
  env: Record<string, string>;
  vcpus: number | null;
  memoryMb: number | null;
  /** The session environment's prepared packages (bound read-only for every command). */
  environment?: SandboxSpec['environment'];
  /** Directories under /workspace bound read-only over themselves (read_only memory mounts). */
  readOnly?: string[];
}

/** `/workspace/x` in a command's text → the host directory (the unjailed fallback only). */
function rewriteWorkspace(command: string, hostWorkspace: string): string {
  return command.replace(/(?<![\w.~-])\/workspace(?=\/|$|[^\w.-])/g, hostWorkspace);
}

class LocalSandbox implements Sandbox {
  private readonly running = new Set<RunningProcess>();
  private readonly spawned = new Set<SandboxProcess>();
  private destroyed = false;

  constructor(
    readonly sessionId: string,
    readonly hostWorkspace: string,
    private readonly isolation: Isolation,
    private readonly state: SessionState,
    private readonly way: { egress: SandboxEgress; socket: string | null; loopbackPort: number | null } | null,
    private readonly cgroup: SessionCgroup | null,
    private readonly saveState: (state: SessionState) => Promise<void>,
  ) {}

  get egressEndpoint(): string | null {
    if (!this.way) return null;
    return this.way.socket && this.isolation.kind !== 'none' ? 'http://127.0.0.1:3128' : `http://127.0.0.1:${this.way.loopbackPort}`;
  }

  /** How the command reaches the egress proxy, and what it is told about it. */
  private outbound(): { forwarder: ForwarderKind; binds: [string, string][]; env: Record<string, string> } {
    if (!this.way) return { forwarder: 'none', binds: [], env: {} };
    const { egress, socket, loopbackPort } = this.way;
    const ca = egress.caFiles();
    if (this.isolation.kind === 'none') {
      return { forwarder: 'none', binds: [], env: egress.env(this.sessionId, `http://127.0.0.1:${loopbackPort}`, ca ? path.dirname(ca.cert) : null) };
    }
    const files = agentFiles(ca);
    if (socket) {
      return {
        forwarder: forwarderKind(),
        binds: [[socket, `${AGENT_DIR}/egress.sock`], ...files],
        env: egress.env(this.sessionId, 'http://127.0.0.1:3128', ca ? AGENT_DIR : null),
      };
    }
    // A jail sharing the host's network: the loopback port is reachable as it is.
    return { forwarder: 'none', binds: files, env: egress.env(this.sessionId, `http://127.0.0.1:${loopbackPort}`, ca ? AGENT_DIR : null) };
  }

  async exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    if (this.destroyed) throw Object.assign(new Error(`the sandbox of session ${this.sessionId} was destroyed`), { code: 'ESANDBOXGONE' });
    const rel = opts.cwd ? relativeToWorkspace(opts.cwd) : '';
    const hostCwd = resolveInside(this.hostWorkspace, rel || WORKSPACE);
    if (!fs.statSync(hostCwd, { throwIfNoEntry: false })?.isDirectory()) {
      return { exitCode: 1, stdout: '', stderr: `cd: ${opts.cwd}: No such directory\n`, timedOut: false, aborted: false, truncated: false };
    }
    const run = {
      timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxOutputBytes: opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT,
      stdin: opts.stdin,
      signal: opts.signal,
    };
    const { file, args, env, cwd } = this.jailed(command, rel, hostCwd, {}, []);
    const joined = joinArgs(this.cgroup, file, args);
    const proc = runProcess(joined.file, joined.args, { ...run, cwd, env });
    this.running.add(proc);
    try {
      return await proc.result;
    } finally {
      this.running.delete(proc);
    }
  }

  /**
   * The jail (or plain process) for one command: `command` is bash text run in /workspace/`rel`,
   * with the sandbox's variables, `extraEnv` on top, and `mounts` bound read-only (or, without a
   * jail, their paths rewritten to the host directories).
   */
  private jailed(command: string, rel: string, hostCwd: string, extraEnv: Record<string, string>, mounts: { host: string; inside: string }[]) {
    // The session environment's packages: bound read-only, their search paths first.
    const environment = this.state.environment;
    if (environment) {
      extraEnv = withEnvironmentPaths(environment, extraEnv);
      mounts = [...mounts, { host: environment.hostDir, inside: environment.inside }];
    }
    // Read-only directories of the workspace: bound over themselves after /workspace.
    for (const inside of this.state.readOnly ?? []) mounts = [...mounts, { host: resolveInside(this.hostWorkspace, inside, { keepLast: true }), inside }];
    const out = this.outbound();
    const cwdInside = rel ? `${WORKSPACE}/${rel}` : WORKSPACE;
    const binds: [string, string][] = [...out.binds, ...mounts.map((m): [string, string] => [m.host, m.inside])];
    if (this.isolation.kind === 'bwrap') {
      return {
        file: this.isolation.bin,
        args: [...jailArgs(this.hostWorkspace, { network: this.isolation.network, cwd: cwdInside, binds }), ...launchArgs(out.forwarder, cwdInside, command)],
        env: cleanEnv(WORKSPACE, { ...this.state.env, ...out.env, ...extraEnv }),
        cwd: this.hostWorkspace,
      };
    }
    if (this.isolation.kind === 'unshare') {
      return {
        file: this.isolation.bin,
        args: unshareArgs(this.isolation.newRoot, this.hostWorkspace, binds, launchArgs(out.forwarder, cwdInside, command)),
        env: cleanEnv(WORKSPACE, { ...this.state.env, ...out.env, ...extraEnv }),
        cwd: this.hostWorkspace,
      };
    }
    // Fallback: the same clean environment; /workspace (and each mount) is the host directory.
    const rewrite = (text: string) => mounts.reduce((t, m) => t.replaceAll(m.inside, m.host), rewriteWorkspace(text, this.hostWorkspace));
    const extra = Object.fromEntries(Object.entries(extraEnv).map(([k, v]) => [k, rewrite(v)]));
    return {
      file: '/bin/bash',
      args: ['-c', rewrite(command)],
      env: cleanEnv(this.hostWorkspace, { ...this.state.env, ...out.env, ...extra, WORKSPACE: this.hostWorkspace }),
      cwd: hostCwd,
    };
  }

  async spawn(opts: SpawnOptions): Promise<SandboxProcess> {
    if (this.destroyed) throw Object.assign(new Error(`the sandbox of session ${this.sessionId} was destroyed`), { code: 'ESANDBOXGONE' });
    const rel = opts.cwd ? relativeToWorkspace(opts.cwd) : '';
    const hostCwd = resolveInside(this.hostWorkspace, rel || WORKSPACE);
    await fsp.mkdir(hostCwd, { recursive: true });
    const command = opts.argv ? `exec ${opts.argv.map(shQuote).join(' ')}` : (opts.command ?? 'true');
    const { file, args, env, cwd } = this.jailed(command, rel, hostCwd, opts.env ?? {}, opts.mounts ?? []);
    const joined = joinArgs(this.cgroup, file, args);
    const proc = spawnStreaming(joined.file, joined.args, { cwd, env, stdin: opts.stdin, stderrTailBytes: opts.stderrTailBytes });
    this.spawned.add(proc);
    void proc.exited.finally(() => this.spawned.delete(proc));
    return proc;
  }

  readFile(p: string, opts: { maxBytes?: number } = {}): Promise<Buffer> {
    return readContained(this.hostWorkspace, p, opts.maxBytes);
  }

  async writeFile(p: string, data: Buffer | string, opts: { mode?: number; readOnly?: boolean } = {}): Promise<void> {
    this.refuseReadOnly(p);
    return writeContained(this.hostWorkspace, p, data, opts);
  }

  /** Host-side writes (the file tools) honour the read-only directories too, through symlinks. */
  private refuseReadOnly(p: string): void {
    const dirs = this.state.readOnly ?? [];
    if (!dirs.length) return;
    const target = resolveInside(this.hostWorkspace, p);
    for (const inside of dirs) {
      if (isInside(resolveInside(this.hostWorkspace, inside), target)) {
        throw Object.assign(new Error(`${inside} is mounted read-only`), { code: 'EROFS' });
      }
    }
  }

  stat(p: string): Promise<FileStat | null> {
    return statContained(this.hostWorkspace, p);
  }

  remove(p: string): Promise<void> {
    return removeContained(this.hostWorkspace, p);
  }

  async setReadOnlyPaths(paths: string[]): Promise<void> {
    for (const p of paths) await fsp.mkdir(resolveInside(this.hostWorkspace, p, { keepLast: true }), { recursive: true });
    this.state.readOnly = paths;
    await this.saveState(this.state);
  }

  async importTree(hostDir: string, p: string, opts: { move?: boolean } = {}): Promise<void> {
    if (!relativeToWorkspace(p)) throw new Error(`refusing to replace ${WORKSPACE} itself`);
    const dest = resolveInside(this.hostWorkspace, p, { keepLast: true });
    await forceRemove(dest);
    await fsp.mkdir(path.dirname(dest), { recursive: true });
    if (opts.move) {
      try {
        await fsp.rename(hostDir, dest); // one step, whatever the tree's size
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      }
    }
    await fsp.cp(hostDir, dest, { recursive: true, verbatimSymlinks: true });
  }

  /** Kills every running command and waits (bounded) until they are gone. */
  async close(): Promise<void> {
    this.destroyed = true;
    const all = [...this.running];
    for (const proc of all) proc.kill();
    const spawned = [...this.spawned];
    for (const proc of spawned) proc.kill('SIGKILL');
    await Promise.race([
      Promise.all([...all.map((p) => p.result), ...spawned.map((p) => p.exited)]),
      new Promise((r) => setTimeout(r, DESTROY_WAIT_MS).unref()),
    ]);
    await this.cgroup?.remove();
  }
}

export function createLocalDriver(opts: LocalDriverOptions): SandboxDriver {
  const sandboxes = new Map<string, LocalSandbox>();
  const network = opts.network ?? 'none';
  const warned = new Set<string>();
  let isolation: Isolation | undefined;

  const warn = (msg: string) => {
    if (warned.has(msg)) return;
    warned.add(msg);
    if (opts.logger) opts.logger.warn(msg);
    else process.emitWarning(msg);
  };
  const pickIsolation = (): Isolation => {
    if (isolation) return isolation;
    const wanted = opts.forceNoJail ? 'none' : (opts.isolation ?? (settings.sandboxIsolation() as IsolationKind | undefined));
    const bwrap = opts.bwrapPath ?? 'bwrap';
    const unshare = opts.unsharePath ?? 'unshare';
    const unshareJail = (): Isolation => ({ kind: 'unshare', bin: unshare, newRoot: path.join(opts.rootDir, '.jail-root') });
    if (wanted === 'none') isolation = { kind: 'none' };
    else if (wanted === 'unshare') isolation = unshareJail();
    else if (bwrapUsable(network, bwrap)) isolation = { kind: 'bwrap', bin: bwrap, network };
    else if (network === 'none' && wanted !== 'bwrap' && unshareUsable(unshare)) {
      warn(
        'bubblewrap (bwrap) is missing or cannot create namespaces here: sandboxes use util-linux unshare instead (install the bubblewrap package for the tighter jail)',
      );
      isolation = unshareJail();
    } else if (network === 'none' && bwrapUsable('host', bwrap)) {
      // Some runtimes refuse network namespaces but allow the rest: keep the file jail at least.
      warn('bubblewrap cannot create a network namespace here: sandboxes share the host network and can reach its loopback services');
      isolation = { kind: 'bwrap', bin: bwrap, network: 'host' };
    } else {
      warn(
        'neither bubblewrap (bwrap) nor util-linux unshare can create namespaces here: sandboxes run as plain child processes WITHOUT isolation, host network and files included (install the bubblewrap package)',
      );
      isolation = { kind: 'none' };
    }
    if (isolation.kind === 'unshare') fs.mkdirSync(isolation.newRoot, { recursive: true });
    return isolation;
  };
  const sessionDir = (sessionId: string) => {
    // The id becomes a path component: nothing that could climb out of rootDir.
    if (!SESSION_ID.test(sessionId)) throw new Error(`invalid session id ${JSON.stringify(sessionId)}`);
    return path.join(opts.rootDir, sessionId);
  };
  const socketPath = (sessionId: string) => {
    const inside = path.join(sessionDir(sessionId), '.agent', 'egress.sock');
    if (inside.length <= MAX_SOCKET_PATH) return inside;
    // A deep DATA_DIR: a short path in the temporary directory, unique per rootDir.
    const tag = crypto.createHash('sha256').update(opts.rootDir).digest('hex').slice(0, 10);
    return path.join(os.tmpdir(), `agent-egress-${process.getuid?.() ?? 0}`, `${tag}-${sessionId}.sock`);
  };
  // The spec (env, shape) is kept next to (not inside) the workspace so get() after a restart has it.
  const specFile = (sessionId: string) => path.join(sessionDir(sessionId), 'sandbox.json');
  const attach = async (sessionId: string, state: SessionState) => {
    const iso = pickIsolation();
    let way: { egress: SandboxEgress; socket: string | null; loopbackPort: number | null } | null = null;
    if (opts.egress) {
      const namespaced = iso.kind === 'unshare' || (iso.kind === 'bwrap' && iso.network === 'none');
      if (namespaced) {
        const socket = socketPath(sessionId);
        await opts.egress.serveSocket(sessionId, socket);
        way = { egress: opts.egress, socket, loopbackPort: null };
      } else way = { egress: opts.egress, socket: null, loopbackPort: await opts.egress.serveLoopback(sessionId) };
    }
    let cgroup: SessionCgroup | null = null;
    if (state.vcpus || state.memoryMb) {
      cgroup = await sessionCgroup(`sandbox-${sessionId}`, state).catch(() => null);
      if (!cgroup)
        warn(
          `vcpus and memoryMb are not enforced for local sandboxes here (${cgroupSupport() ? 'the cgroup could not be made' : 'no writable cgroup hierarchy'}); use the kubernetes driver or run the service where it may create cgroups`,
        );
    }
    const save = (st: SessionState) => fsp.writeFile(specFile(sessionId), JSON.stringify(st), { mode: 0o600 });
    const sb = new LocalSandbox(sessionId, path.join(sessionDir(sessionId), 'workspace'), iso, state, way, cgroup, save);
    sandboxes.set(sessionId, sb);
    return sb;
  };

  return {
    name: 'local',
    async provision(spec: SandboxSpec) {
      const existing = sandboxes.get(spec.sessionId);
      if (existing) return existing;
      await fsp.mkdir(path.join(sessionDir(spec.sessionId), 'workspace'), { recursive: true });
      const saved = await readState(specFile(spec.sessionId));
      const state: SessionState = {
        env: spec.env ?? saved?.env ?? {},
        vcpus: spec.vcpus ?? saved?.vcpus ?? null,
        memoryMb: spec.memoryMb ?? saved?.memoryMb ?? null,
        environment: spec.environment !== undefined ? spec.environment : (saved?.environment ?? null),
        readOnly: saved?.readOnly ?? [],
      };
      if (!saved || JSON.stringify(saved) !== JSON.stringify(state)) await fsp.writeFile(specFile(spec.sessionId), JSON.stringify(state), { mode: 0o600 });
      return attach(spec.sessionId, state);
    },
    async get(sessionId: string) {
      const existing = sandboxes.get(sessionId);
      if (existing) return existing;
      if (!fs.existsSync(path.join(sessionDir(sessionId), 'workspace'))) return null;
      return attach(sessionId, (await readState(specFile(sessionId))) ?? { env: {}, vcpus: null, memoryMb: null });
    },
    async copyWorkspace(fromSessionId: string, toSessionId: string) {
      const from = path.join(sessionDir(fromSessionId), 'workspace');
      if (!fs.existsSync(from)) return false;
      const to = path.join(sessionDir(toSessionId), 'workspace');
      await fsp.mkdir(to, { recursive: true });
      await copyTree(from, to);
      return true;
    },
    async destroy(sessionId: string) {
      const dir = sessionDir(sessionId);
      await sandboxes.get(sessionId)?.close();
      sandboxes.delete(sessionId);
      await opts.egress?.stop(sessionId);
      await fsp.rm(socketPath(sessionId), { force: true });
      await forceRemove(dir);
    },
  };
}

/**
 * `cp -a from/. to/`: modes, times and links as they are (a link is copied, never followed out
 * of the workspace); twice as fast as fs.cp here. A file a running command removes meanwhile is
 * simply not copied.
 */
async function copyTree(from: string, to: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    execFile('cp', ['-a', '--reflink=auto', '--', `${from}/.`, `${to}/`], { maxBuffer: 1024 * 1024 }, (err, _out, stderr) => {
      const problems = stderr.split('\n').filter((l) => l.trim() && !l.includes('No such file or directory'));
      if (err && problems.length) reject(new Error(`copying the workspace failed: ${problems.slice(0, 3).join('; ')}`));
      else resolve();
    });
  });
}

async function readState(file: string): Promise<SessionState | null> {
  try {
    const raw = JSON.parse(await fsp.readFile(file, 'utf8')) as Partial<SessionState>;
    return { env: raw.env ?? {}, vcpus: raw.vcpus ?? null, memoryMb: raw.memoryMb ?? null, environment: raw.environment ?? null, readOnly: raw.readOnly ?? [] };
  } catch {
    return null;
  }
}
