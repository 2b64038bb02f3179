// The fake cluster's container runtime: a pod is a real jailed process tree on this machine.
//
// - The pod's container command runs as its main process in a bubblewrap jail with its own
//   network namespace (only a loopback), a read-only root made of the host's system
//   directories (the "image"), its emptyDir volumes as host directories, as the pod's runAsUser.
// - `exec` joins that network namespace (nsenter, so this needs root) and the same volumes,
//   exactly as `kubectl exec` joins a running container.
// - The cluster network is emulated by a per-pod Unix socket: the env var
//   AGENT_SERVICE_EGRESS_UPSTREAM (the API's egress address in a real cluster) is rewritten to
//   it, and the fake pipes it to the real address. Nothing else leaves the pod: the
//   NetworkPolicy's effect.
// - memory and CPU limits become a cgroup (src/sandbox/cgroups.ts) where possible.
// - What the sandbox image adds to the system directories (engines pre-installed under
//   /opt/engines) is given as host directories bound read-only at their image paths.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { SYSTEM_DIRS, SYSTEM_FILES } from '../../src/sandbox/jail.js';
import { joinArgs, sessionCgroup, type SessionCgroup } from '../../src/sandbox/cgroups.js';

export const CLUSTER_NET_DIR = '/run/fake-cluster';

export interface ContainerSpec {
  command: string[];
  env: Record<string, string>;
  workingDir: string;
  mounts: { name: string; mountPath: string }[];
  runAsUser: number;
  cpu: number | null;
  memoryMb: number | null;
}

export interface RunningPod {
  readonly mainPid: number | null;
  ready(): boolean;
  exec(argv: string[]): ChildProcess;
  /** Host pids of the execs running in it now (the roots of their process trees). */
  execPids(): number[];
  kill(): void;
  readonly exited: Promise<void>;
}

function systemBinds(): string[] {
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    const st = fs.lstatSync(dir, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(dir), dir);
    else args.push('--ro-bind', dir, dir);
  }
  for (const f of SYSTEM_FILES) if (fs.existsSync(f)) args.push('--ro-bind', f, f);
  return args;
}

const BASE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Starts a pod's container; resolves once its main process runs. */
export async function startPod(opts: { dir: string; container: ContainerSpec; upstream: string | null; image?: Record<string, string> }): Promise<RunningPod> {
  const volumes = path.join(opts.dir, 'volumes');
  const netDir = path.join(opts.dir, 'net');
  fs.mkdirSync(netDir, { recursive: true });
  const uid = opts.container.runAsUser;
  const binds: string[] = [];
  // Parents of mount points, made world-traversable first (bwrap would make them 0700, root's).
  const dirs: string[] = [];
  const parents = new Set<string>();
  const image = Object.entries(opts.image ?? {});
  for (const target of [...opts.container.mounts.map((m) => m.mountPath), CLUSTER_NET_DIR, ...SYSTEM_DIRS, ...SYSTEM_FILES, ...image.map(([at]) => at)]) {
    for (let d = path.posix.dirname(target); d !== '/'; d = path.posix.dirname(d)) parents.add(d);
  }
  for (const d of [...parents].sort()) dirs.push('--perms', '0755', '--dir', d);
  for (const m of opts.container.mounts) {
    const host = path.join(volumes, m.name);
    fs.mkdirSync(host, { recursive: true });
    fs.chownSync(host, uid, uid);
    binds.push('--bind', host, m.mountPath);
  }
  // The emulated cluster network: one socket, to the real egress address.
  let bridge: net.Server | null = null;
  const env: Record<string, string> = { PATH: BASE_PATH, ...opts.container.env };
  if (opts.upstream && env.AGENT_SERVICE_EGRESS_UPSTREAM) {
    const [host, port] = [opts.upstream.replace(/:\d+$/, ''), Number(opts.upstream.split(':').pop())];
    const sock = path.join(netDir, 'net.sock');
    bridge = net.createServer((c) => {
      const up = net.connect({ host, port });
      c.on('error', () => up.destroy());
      up.on('error', () => c.destroy());
      c.pipe(up);
      up.pipe(c);
    });
    await new Promise<void>((r) => bridge!.listen(sock, r));
    fs.chmodSync(sock, 0o666);
    env.AGENT_SERVICE_EGRESS_UPSTREAM = `${CLUSTER_NET_DIR}/net.sock`;
  }
  const common = [
    // Capabilities: dropped by bwrap for a root container, by setpriv (after the uid change) otherwise.
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--hostname',
    'sandbox-pod',
    ...(uid === 0 ? ['--cap-drop', 'ALL'] : []),
    '--die-with-parent',
    '--new-session',
    ...dirs,
    ...systemBinds(),
    ...image.flatMap(([at, host]) => ['--ro-bind', host, at]),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    ...binds,
    '--ro-bind',
    netDir,
    CLUSTER_NET_DIR,
    '--remount-ro',
    '/',
    '--chdir',
    opts.container.workingDir,
  ];
  const asUser = (argv: string[]) =>
    uid === 0
      ? argv
      : ['/usr/bin/setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', ...argv];
  const cgroup: SessionCgroup | null = await sessionCgroup(`pod-${path.basename(opts.dir)}`, {
    vcpus: opts.container.cpu,
    memoryMb: opts.container.memoryMb,
  }).catch(() => null);

  const info = fs.mkdtempSync(path.join(opts.dir, 'info-'));
  const infoFile = path.join(info, 'info.json');
  const infoFd = fs.openSync(infoFile, 'w');
  const main = joinArgs(cgroup, 'bwrap', ['--unshare-net', '--info-fd', '3', ...common, ...asUser(opts.container.command)]);
  const logFd = fs.openSync(path.join(opts.dir, 'main.log'), 'w');
  const proc = spawn(main.file, main.args, { env, stdio: ['ignore', logFd, logFd, infoFd], detached: true });
  fs.closeSync(logFd);
  fs.closeSync(infoFd);
  let mainPid: number | null = null;
  for (let i = 0; i < 200 && mainPid === null; i++) {
    try {
      mainPid = (JSON.parse(fs.readFileSync(infoFile, 'utf8')) as { 'child-pid': number })['child-pid'];
    } catch {
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  const execs = new Set<ChildProcess>();
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  let dead = false;
  void exited.then(() => {
    dead = true;
    bridge?.close();
    for (const e of execs) killGroup(e);
    void cgroup?.remove();
  });

  return {
    get mainPid() {
      return mainPid;
    },
    ready() {
      if (dead || mainPid === null) return false;
      try {
        // Ready once the container's forwarder listens on 127.0.0.1:3128 (or it listens on nothing).
        const tcp = fs.readFileSync(`/proc/${mainPid}/net/tcp`, 'utf8');
        return !opts.container.env.AGENT_SERVICE_EGRESS_UPSTREAM || tcp.includes('0100007F:0C38 00000000:0000 0A');
      } catch {
        return false;
      }
    },
    execPids: () => [...execs].map((e) => e.pid).filter((pid): pid is number => !!pid),
    exec(argv) {
      if (dead || mainPid === null) throw new Error('container not running');
      const args = ['--target', String(mainPid), '--net', '--', 'bwrap', ...common, ...asUser(argv)];
      const joined = joinArgs(cgroup, 'nsenter', args);
      const child = spawn(joined.file, joined.args, { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
      execs.add(child);
      child.once('exit', () => execs.delete(child));
      return child;
    },
    kill() {
      // The container first (the pod turns Failed), then what was exec'd into it.
      killGroup(proc);
      for (const e of execs) killGroup(e);
    },
    exited,
  };
}

function killGroup(p: ChildProcess): void {
  try {
    if (p.pid) process.kill(-p.pid, 'SIGKILL');
  } catch {
    /* gone */
  }
}
