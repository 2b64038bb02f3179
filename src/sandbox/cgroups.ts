// Machine shape for local sandboxes: a cgroup per session with a memory limit (memoryMb) and a
// CPU quota (vcpus × one CPU period), where this process may create cgroups:
// - cgroup v2: under SANDBOX_CGROUP_PARENT, else the service's own cgroup (needs delegation:
//   a writable cgroup whose subtree_control can enable `memory` and `cpu`, e.g. a systemd
//   unit with Delegate=yes);
// - cgroup v1: a group under the service's own group in the `memory` and `cpu` hierarchies
//   (root, or hierarchies delegated to the service's user).
// Elsewhere (no cgroup filesystem, read-only, unprivileged without delegation) limits are not
// enforced: `cgroupSupport()` says so once, and docs/deployment.md documents it.
// Every command of the session joins the group before exec (see `joinArgs`), so whatever it
// starts is counted too.
import { settings } from '../config.js';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

const ROOT = '/sys/fs/cgroup';
const CPU_PERIOD_US = 100_000;

export interface CgroupLimits {
  vcpus?: number | null;
  memoryMb?: number | null;
}

export interface SessionCgroup {
  /** `cgroup.procs` files a new process writes its pid to. */
  procsFiles: string[];
  remove(): Promise<void>;
}

type Layout = { kind: 'v2'; parent: string } | { kind: 'v1'; memory: string; cpu: string };

/** The cgroup path of this process per controller (`''` for v2's unified entry). */
function ownPaths(): Map<string, string> {
  const out = new Map<string, string>();
  try {
    for (const line of fs.readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
      const [, controllers, p] = line.split(':');
      if (controllers === undefined || p === undefined) continue;
      for (const c of controllers.split(',')) out.set(c, p);
    }
  } catch {
    /* no /proc: no cgroups */
  }
  return out;
}

function writable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function tryLayout(): Layout | null {
  const own = ownPaths();
  if (fs.existsSync(path.join(ROOT, 'cgroup.controllers'))) {
    const parent = settings.sandboxCgroupParent() || path.join(ROOT, own.get('') ?? '/');
    const base = path.join(parent, 'agent-sandboxes');
    try {
      const available = fs.readFileSync(path.join(parent, 'cgroup.controllers'), 'utf8').split(/\s+/);
      if (!available.includes('memory') || !available.includes('cpu')) return null;
      fs.mkdirSync(base, { recursive: true });
      fs.writeFileSync(path.join(parent, 'cgroup.subtree_control'), '+memory +cpu');
      fs.writeFileSync(path.join(base, 'cgroup.subtree_control'), '+memory +cpu');
      return { kind: 'v2', parent: base };
    } catch {
      return null;
    }
  }
  const memory = path.join(ROOT, 'memory', own.get('memory') ?? '/');
  const cpu = path.join(ROOT, 'cpu', own.get('cpu') ?? own.get('cpu,cpuacct') ?? '/');
  if (!fs.existsSync(path.join(memory, 'memory.limit_in_bytes')) || !fs.existsSync(path.join(cpu, 'cpu.cfs_quota_us'))) return null;
  if (!writable(memory) || !writable(cpu)) return null;
  try {
    fs.mkdirSync(path.join(memory, 'agent-sandboxes'), { recursive: true });
    fs.mkdirSync(path.join(cpu, 'agent-sandboxes'), { recursive: true });
  } catch {
    return null;
  }
  return { kind: 'v1', memory: path.join(memory, 'agent-sandboxes'), cpu: path.join(cpu, 'agent-sandboxes') };
}

let layout: Layout | null | undefined;
/** Which cgroup version this process can use to limit sandboxes, or null (limits not enforced). */
export function cgroupSupport(): 'v1' | 'v2' | null {
  if (layout === undefined) layout = settings.sandboxCgroupsOff() ? null : tryLayout();
  return layout?.kind ?? null;
}

async function write(file: string, value: string): Promise<void> {
  await fsp.writeFile(file, value);
}

/** A cgroup for one session with its limits, or null when none is requested or possible. */
export async function sessionCgroup(name: string, limits: CgroupLimits): Promise<SessionCgroup | null> {
  if (!limits.vcpus && !limits.memoryMb) return null;
  if (!cgroupSupport() || !layout) return null;
  const bytes = limits.memoryMb ? String(limits.memoryMb * 1024 * 1024) : null;
  const quota = limits.vcpus ? String(Math.round(limits.vcpus * CPU_PERIOD_US)) : null;
  if (layout.kind === 'v2') {
    const dir = path.join(layout.parent, name);
    await fsp.mkdir(dir, { recursive: true });
    if (bytes) {
      await write(path.join(dir, 'memory.max'), bytes);
      await write(path.join(dir, 'memory.swap.max'), '0').catch(() => undefined);
    }
    if (quota) await write(path.join(dir, 'cpu.max'), `${quota} ${CPU_PERIOD_US}`);
    return { procsFiles: [path.join(dir, 'cgroup.procs')], remove: () => removeDirs([dir]) };
  }
  const memDir = path.join(layout.memory, name);
  const cpuDir = path.join(layout.cpu, name);
  await fsp.mkdir(memDir, { recursive: true });
  await fsp.mkdir(cpuDir, { recursive: true });
  if (bytes) {
    await write(path.join(memDir, 'memory.limit_in_bytes'), bytes);
    // Where swap accounting exists, swap counts too (no escaping the limit into swap).
    await write(path.join(memDir, 'memory.memsw.limit_in_bytes'), bytes).catch(() => undefined);
  }
  await write(path.join(cpuDir, 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
  await write(path.join(cpuDir, 'cpu.cfs_quota_us'), quota ?? '-1');
  return { procsFiles: [path.join(memDir, 'cgroup.procs'), path.join(cpuDir, 'cgroup.procs')], remove: () => removeDirs([memDir, cpuDir]) };
}

async function removeDirs(dirs: string[]): Promise<void> {
  for (const dir of dirs) {
    // A group can only go once its processes are gone; they are being killed: retry briefly.
    for (let i = 0; i < 20; i++) {
      try {
        await fsp.rmdir(dir);
        break;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') break;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
}

/** `sh -c` prefix that puts the shell in the groups, then execs the real command. */
export function joinArgs(group: SessionCgroup | null, file: string, args: string[]): { file: string; args: string[] } {
  if (!group) return { file, args };
  return {
    file: '/bin/sh',
    args: ['-c', 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"', 'cgroup-join', ...group.procsFiles, '--', file, ...args],
  };
}
