// The jail where bubblewrap is missing: util-linux `unshare` (on every Debian/Ubuntu) makes
// unprivileged user, mount, PID, network, IPC and UTS namespaces; a setup script inside them
// builds a fresh root on a tmpfs (the host's system directories read-only, the workspace at
// /workspace, a private /tmp, /proc, a minimal /dev, the egress files at /run/agent-service),
// brings up the namespace's loopback, then chroots into it with every capability dropped
// (setpriv), so the command cannot undo the read-only mounts.
//
// The root inside maps to the service's own uid outside: files the command writes in the
// workspace belong to the service's user, as with bubblewrap.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WORKSPACE } from './driver.js';
import { SYSTEM_DIRS, SYSTEM_FILES, cleanEnv } from './jail.js';

const DEV_NODES = ['null', 'zero', 'full', 'random', 'urandom', 'tty'];

export const shQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

const UNSHARE_FLAGS = ['--user', '--map-root-user', '--mount', '--pid', '--fork', '--kill-child', '--net', '--ipc', '--uts'];

/** The setup script (run as the namespaces' root) for one workspace and its read-only binds. */
function setupScript(newRoot: string, hostWorkspace: string, binds: [string, string][]): string {
  const R = shQuote(newRoot);
  const lines = ['set -e', `R=${R}`, 'mount -t tmpfs -o mode=755 tmpfs "$R"'];
  for (const dir of SYSTEM_DIRS) {
    const st = fs.lstatSync(dir, { throwIfNoEntry: false });
    if (!st) continue;
    const d = shQuote(dir);
    if (st.isSymbolicLink()) lines.push(`mkdir -p "$R"$(dirname ${d}); ln -s ${shQuote(fs.readlinkSync(dir))} "$R"${d}`);
    else lines.push(`mkdir -p "$R"${d}; mount --rbind ${d} "$R"${d}; mount -o remount,bind,ro "$R"${d} 2>/dev/null || true`);
  }
  // A file (or a directory: the engine cache) bound read-only at `inside`.
  const file = (host: string, inside: string) => {
    const i = shQuote(inside);
    const h = shQuote(host);
    lines.push(
      `if [ -d ${h} ]; then mkdir -p "$R"${i}; else mkdir -p "$R"$(dirname ${i}); touch "$R"${i}; fi; mount --bind ${h} "$R"${i}; mount -o remount,bind,ro "$R"${i} 2>/dev/null || true`,
    );
  };
  for (const f of SYSTEM_FILES) if (fs.existsSync(f)) file(f, f);
  // Binds inside /workspace (read-only directories of it) go over the workspace, after it.
  const inWorkspace = ([, inside]: [string, string]) => inside.startsWith(`${WORKSPACE}/`);
  for (const bind of binds) if (!inWorkspace(bind)) file(bind[0], bind[1]);
  lines.push(`mkdir -p "$R${WORKSPACE}"; mount --bind ${shQuote(hostWorkspace)} "$R${WORKSPACE}"`);
  for (const bind of binds) if (inWorkspace(bind)) file(bind[0], bind[1]);
  lines.push(
    'mkdir -p "$R/tmp"; mount -t tmpfs -o mode=1777 tmpfs "$R/tmp"',
    'mkdir -p "$R/proc"; mount -t proc proc "$R/proc"',
    'mkdir -p "$R/dev"',
    `for n in ${DEV_NODES.join(' ')}; do [ -e /dev/$n ] || continue; touch "$R/dev/$n"; mount --bind /dev/$n "$R/dev/$n"; done`,
    'ln -s /proc/self/fd "$R/dev/fd"; ln -s /proc/self/fd/0 "$R/dev/stdin"; ln -s /proc/self/fd/1 "$R/dev/stdout"; ln -s /proc/self/fd/2 "$R/dev/stderr"',
    // The new network namespace's loopback starts down: iproute2, else an ioctl from perl (SIOCSIFFLAGS, IFF_UP).
    `ip link set lo up 2>/dev/null || perl -e 'socket(S,2,2,0) or die; ioctl(S,0x8914,pack("a16s","lo",1)) or die' 2>/dev/null || true`,
    'echo sandbox > /proc/sys/kernel/hostname 2>/dev/null || true',
    'mount -o remount,ro "$R" 2>/dev/null || true',
    // Capabilities go before the command starts: no remounting, no new privileges.
    'if command -v setpriv >/dev/null 2>&1; then exec chroot "$R" setpriv --bounding-set=-all --inh-caps=-all --no-new-privs "$@"; fi',
    'exec chroot "$R" "$@"',
  );
  return lines.join('\n');
}

/** `unshare` argv running `inner` (argv inside the jail) over `hostWorkspace`. */
export function unshareArgs(newRoot: string, hostWorkspace: string, binds: [string, string][], inner: string[]): string[] {
  return [...UNSHARE_FLAGS, '/bin/sh', '-c', setupScript(newRoot, hostWorkspace, binds), 'jail-setup', ...inner];
}

const probes = new Map<string, boolean>();
/** Whether util-linux unshare can build this jail here (probed once per binary). */
export function unshareUsable(bin = 'unshare'): boolean {
  let ok = probes.get(bin);
  if (ok === undefined) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'unshare-probe-'));
    try {
      fs.mkdirSync(path.join(dir, 'root'));
      fs.mkdirSync(path.join(dir, 'ws'));
      const probe = spawnSync(bin, unshareArgs(path.join(dir, 'root'), path.join(dir, 'ws'), [], ['/bin/sh', '-c', `test -d ${WORKSPACE}`]), {
        stdio: 'ignore',
        timeout: 10_000,
        env: cleanEnv(WORKSPACE),
      });
      ok = probe.status === 0;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    probes.set(bin, ok);
  }
  return ok;
}
