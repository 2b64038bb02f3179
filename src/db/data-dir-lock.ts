// One process per PGlite data directory. PGlite is PostgreSQL in this process, with no lock of
// its own on its files: a second `npm start` on the same DATA_DIR (another terminal, another
// PORT) opened the same files and both wrote them. The lock is a file beside the directory
// naming its holder (pid and the pid's start time, so a pid reused after a reboot is no holder);
// a holder that is gone (kill -9) leaves a stale lock that the next start takes over.
import fs from 'node:fs';

/** Another running process holds the data directory. */
export class DataDirInUseError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(`the data directory ${dir} is in use by another running agent service (pid ${pid}): stop it, or start this one with another DATA_DIR`);
    this.name = 'DataDirInUseError';
  }
}

interface Holder {
  pid: number;
  started: string | null;
}

/** A process's start time in clock ticks since boot (/proc, Linux), or null where unknown. */
function startTimeOf(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3; starttime is field 22.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function running(holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const started = startTimeOf(holder.pid);
  return !(holder.started && started && started !== holder.started);
}

function holderOf(file: string): Holder | null {
  try {
    const h = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Holder>;
    return typeof h.pid === 'number' ? { pid: h.pid, started: typeof h.started === 'string' ? h.started : null } : null;
  } catch {
    return null; // unreadable or half-written: no holder to respect
  }
}

/** Takes `<dir>.lock` for this process; returns its release. Throws DataDirInUseError when another live process holds it. */
export function lockDataDir(dir: string): () => void {
  const file = `${dir}.lock`;
  const mine = JSON.stringify({ pid: process.pid, started: startTimeOf(process.pid) } satisfies Holder);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, mine, { flag: 'wx' });
      return () => {
        try {
          if (fs.readFileSync(file, 'utf8') === mine) fs.rmSync(file);
        } catch {
          /* already gone */
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = holderOf(file);
    // This process again (a database reopened without its close), or a holder that is gone: take it over.
    if (holder && holder.pid !== process.pid && running(holder)) throw new DataDirInUseError(dir, holder.pid);
    fs.rmSync(file, { force: true });
  }
  throw new Error(`could not lock the data directory ${dir}`);
}
