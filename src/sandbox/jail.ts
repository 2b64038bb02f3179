// The bubblewrap command line for one exec, the clean environment, and the one-time probe that
// decides between the jail and the plain-process fallback.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WORKSPACE } from './driver.js';

export type NetworkMode = 'host' | 'none';

// Read-only system directories: enough for bash, coreutils, python, git, pip and TLS. Nothing
// of the host's state: not /root, /home, /work, /var, /run, the host /tmp.
export const SYSTEM_DIRS = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/etc/alternatives',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/pki',
];
// Single /etc files: name resolution, users (whoami, git, getpass), time zone, loader cache.
// Deliberately absent: /etc/gitconfig and /etc/pip.conf, which can carry credentials.
export const SYSTEM_FILES = [
  '/etc/resolv.conf',
  '/etc/hosts',
  '/etc/nsswitch.conf',
  '/etc/host.conf',
  '/etc/gai.conf',
  '/etc/services',
  '/etc/protocols',
  '/etc/passwd',
  '/etc/group',
  '/etc/localtime',
  '/etc/ld.so.cache',
  '/etc/mime.types',
];

const BASE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Binds for the system pieces present on this host (computed once: they do not change). */
let systemBinds: string[] | undefined;
function systemArgs(): string[] {
  if (systemBinds) return systemBinds;
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    const st = fs.lstatSync(dir, { throwIfNoEntry: false });
    if (!st) continue;
    // Merged-/usr hosts have /bin -> usr/bin: recreate the link rather than bind the target twice.
    if (st.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(dir), dir);
    else args.push('--ro-bind', dir, dir);
  }
  for (const file of SYSTEM_FILES) if (fs.existsSync(file)) args.push('--ro-bind', file, file);
  return (systemBinds = args);
}

export function jailArgs(hostWorkspace: string, opts: { network: NetworkMode; cwd?: string; binds?: [string, string][] }): string[] {
  // Extra read-only files (the egress socket, forwarder, CA) under directories made in the jail's root.
  const extra: string[] = [];
  for (const dir of new Set((opts.binds ?? []).map(([, inside]) => path.posix.dirname(inside)))) extra.push('--dir', dir);
  for (const [host, inside] of opts.binds ?? []) extra.push('--ro-bind', host, inside);
  return [
    // Namespaces: own PIDs (a kill of bwrap takes the whole tree), IPC, hostname, cgroup view.
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--hostname',
    'sandbox',
    ...(opts.network === 'none' ? ['--unshare-net'] : []),
    // When the service runs as root, bwrap keeps root's capabilities unless told otherwise.
    '--cap-drop',
    'ALL',
    // Dies with the service; a new session so it cannot inject input into a controlling terminal.
    '--die-with-parent',
    '--new-session',
    ...systemArgs(),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--bind',
    hostWorkspace,
    WORKSPACE,
    ...extra,
    // The jail's own root (where /etc/x would land) is read-only too: writes go to /workspace or /tmp.
    '--remount-ro',
    '/',
    '--chdir',
    opts.cwd ?? WORKSPACE,
  ];
}

/** The only variables a sandboxed command sees: never the service's own environment. */
export function cleanEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: BASE_PATH, HOME: home, LANG: 'C.UTF-8', TERM: 'dumb', ...extra };
}

const probes = new Map<string, boolean>();
/**
 * Whether bwrap exists and can build this exact jail here (probed once per binary and network
 * mode): the full argument list, not just `--ro-bind / /`, so a flag this bwrap or kernel
 * refuses means the fallback rather than every exec failing.
 */
export function bwrapUsable(network: NetworkMode = 'none', bin = 'bwrap'): boolean {
  const key = `${bin}\0${network}`;
  let ok = probes.get(key);
  if (ok === undefined) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bwrap-probe-'));
    try {
      const probe = spawnSync(bin, [...jailArgs(dir, { network }), '/bin/sh', '-c', 'true'], { stdio: 'ignore', timeout: 10_000, env: cleanEnv(WORKSPACE) });
      ok = probe.status === 0;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    probes.set(key, ok);
  }
  return ok;
}
