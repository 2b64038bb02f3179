// The `local` sandbox driver: a directory per session, bind-mounted at /workspace inside a
// bubblewrap jail (read-only system directories, its own /tmp, PID/IPC/UTS namespaces, a clean
// environment). Without a usable bwrap it runs a plain child process and says so once.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { type ExecOptions, type ExecResult, type Sandbox, type SandboxDriver, type SandboxSpec, WORKSPACE } from './driver.js';
import { hostPath, relativeToWorkspace } from './paths.js';

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_OUTPUT = 64 * 1024;
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib64', '/lib32', '/etc/alternatives', '/etc/ssl', '/etc/ca-certificates', '/etc/pki'];
const SYSTEM_FILES = ['/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf', '/etc/passwd', '/etc/group', '/etc/localtime', '/etc/ld.so.cache', '/etc/gitconfig'];

export interface LocalDriverOptions {
  rootDir: string;
  logger?: Pick<Logger, 'warn' | 'info'>;
  /** Run without the jail even where bwrap works (tests of the fallback). */
  forceNoJail?: boolean;
}

let bwrapUsable: boolean | undefined;
/** Whether bwrap exists and can create its namespaces here (probed once). */
export function bwrapAvailable(): boolean {
  if (bwrapUsable === undefined) {
    const probe = spawnSync('bwrap', ['--ro-bind', '/', '/', '--unshare-pid', '--dev', '/dev', '--proc', '/proc', 'true'], { stdio: 'ignore', timeout: 10_000 });
    bwrapUsable = probe.status === 0;
  }
  return bwrapUsable;
}

function jailArgs(workspace: string): string[] {
  const args = ['--die-with-parent', '--new-session', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--hostname', 'sandbox'];
  for (const dir of SYSTEM_DIRS) if (fs.existsSync(dir)) args.push(fs.lstatSync(dir).isSymbolicLink() ? '--symlink' : '--ro-bind', fs.lstatSync(dir).isSymbolicLink() ? fs.readlinkSync(dir) : dir, dir);
  for (const file of SYSTEM_FILES) if (fs.existsSync(file)) args.push('--ro-bind', file, file);
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--bind', workspace, WORKSPACE, '--chdir', WORKSPACE);
  return args;
}

function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: WORKSPACE,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    ...extra,
  };
}

class OutputBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly max: number) {}
  push(chunk: Buffer): void {
    if (this.size >= this.max) {
      this.truncated = true;
      return;
    }
    const room = this.max - this.size;
    if (chunk.length > room) this.truncated = true;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(part);
    this.size += part.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

class LocalSandbox implements Sandbox {
  readonly processes = new Set<ChildProcess>();
  constructor(
    readonly sessionId: string,
    readonly hostWorkspace: string,
    private readonly jailed: boolean,
    private readonly env: Record<string, string>,
  ) {}

  exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const stdout = new OutputBuffer(opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT);
    const stderr = new OutputBuffer(opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT);
    const cwd = opts.cwd ? relativeToWorkspace(opts.cwd) : '';
    const inner = cwd ? `cd ${JSON.stringify(`${WORKSPACE}/${cwd}`)} && ${command}` : command;
    const [file, args] = this.jailed
      ? ['bwrap', [...jailArgs(this.hostWorkspace), '/bin/bash', '-c', inner]]
      : ['/bin/bash', ['-c', cwd ? `cd ${JSON.stringify(path.join(this.hostWorkspace, cwd))} && ${command}` : command]];
    return new Promise((resolve) => {
      const child = spawn(file, args as string[], {
        cwd: this.hostWorkspace,
        env: cleanEnv(this.jailed ? this.env : { ...this.env, HOME: this.hostWorkspace }),
        detached: true, // its own process group: a kill reaches every child it started
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      this.processes.add(child);
      let timedOut = false;
      let aborted = false;
      const killGroup = () => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup();
      }, timeoutMs);
      const onAbort = () => {
        aborted = true;
        killGroup();
      };
      if (opts.signal?.aborted) onAbort();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      child.stdout!.on('data', (c: Buffer) => stdout.push(c));
      child.stderr!.on('data', (c: Buffer) => stderr.push(c));
      child.stdin!.on('error', () => undefined);
      child.stdin!.end(opts.stdin ?? '');
      const finish = (exitCode: number | null) => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        this.processes.delete(child);
        killGroup(); // leftovers (`sleep 100 &`) go with the command
        resolve({ exitCode, stdout: stdout.text(), stderr: stderr.text(), timedOut, aborted, truncated: stdout.truncated || stderr.truncated });
      };
      child.on('error', (err) => {
        stderr.push(Buffer.from(String(err.message)));
        finish(null);
      });
      // 'exit' rather than 'close': a background child holding the pipes open must not hang us.
      child.on('exit', (code) => setImmediate(() => finish(timedOut || aborted ? null : code)));
    });
  }

  async readFile(p: string, opts: { maxBytes?: number } = {}): Promise<Buffer> {
    const file = hostPath(this.hostWorkspace, p);
    const handle = await fsp.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      if (opts.maxBytes === undefined) return await handle.readFile();
      const buf = Buffer.alloc(opts.maxBytes);
      const { bytesRead } = await handle.read(buf, 0, opts.maxBytes, 0);
      return buf.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  }

  async writeFile(p: string, data: Buffer | string, opts: { mode?: number; readOnly?: boolean } = {}): Promise<void> {
    const file = hostPath(this.hostWorkspace, p);
    await fsp.mkdir(path.dirname(file), { recursive: true });
    hostPath(this.hostWorkspace, p); // re-check after creating parents
    const mode = opts.readOnly ? 0o444 : (opts.mode ?? 0o644);
    try {
      const st = await fsp.lstat(file);
      if (st.isFile() && !(st.mode & 0o200)) await fsp.chmod(file, 0o644);
    } catch {
      /* new file */
    }
    const handle = await fsp.open(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW, mode);
    try {
      await handle.writeFile(data);
      await handle.chmod(mode);
    } finally {
      await handle.close();
    }
  }

  async stat(p: string) {
    try {
      const st = await fsp.stat(hostPath(this.hostWorkspace, p));
      return { size: st.size, isFile: st.isFile(), isDirectory: st.isDirectory() };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async remove(p: string): Promise<void> {
    const file = hostPath(this.hostWorkspace, p);
    if (file === this.hostWorkspace) throw new Error('refusing to remove /workspace itself');
    await fsp.rm(file, { recursive: true, force: true });
  }

  killAll(): void {
    for (const child of this.processes) {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    this.processes.clear();
  }
}

export function createLocalDriver(opts: LocalDriverOptions): SandboxDriver {
  const sandboxes = new Map<string, LocalSandbox>();
  let warned = false;
  const jailed = () => {
    const ok = !opts.forceNoJail && bwrapAvailable();
    if (!ok && !warned && !opts.forceNoJail) {
      warned = true;
      opts.logger?.warn('bubblewrap (bwrap) is not usable here: sandboxes run as plain child processes without isolation; install the bubblewrap package');
    }
    return ok;
  };
  const dirOf = (sessionId: string) => {
    if (!/^[A-Za-z0-9_-]+$/.test(sessionId)) throw new Error('invalid session id');
    return path.join(opts.rootDir, sessionId, 'workspace');
  };
  const attach = (spec: SandboxSpec) => {
    const sb = new LocalSandbox(spec.sessionId, dirOf(spec.sessionId), jailed(), spec.env ?? {});
    sandboxes.set(spec.sessionId, sb);
    return sb;
  };
  return {
    name: 'local',
    async provision(spec) {
      const existing = sandboxes.get(spec.sessionId);
      if (existing) return existing;
      await fsp.mkdir(dirOf(spec.sessionId), { recursive: true });
      return attach(spec);
    },
    async get(sessionId) {
      const existing = sandboxes.get(sessionId);
      if (existing) return existing;
      if (!fs.existsSync(dirOf(sessionId))) return null;
      return attach({ sessionId });
    },
    async destroy(sessionId) {
      sandboxes.get(sessionId)?.killAll();
      sandboxes.delete(sessionId);
      const dir = path.join(opts.rootDir, sessionId);
      // Read-only copies inside must not stop the removal.
      await fsp.chmod(dir, 0o755).catch(() => undefined);
      await fsp.rm(dir, { recursive: true, force: true });
    },
  };
}
