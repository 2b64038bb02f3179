// Which spare sandboxes (warm-sandboxes.ts) a process holds, written down beside the data they
// take: DATA_DIR/spares/<host>-<pid>/<session id>, one empty file each. A spare is nobody's
// session, so nothing else remembers it: a process killed with -9 would leave its spares on disk
// for good. A process starting on the same host removes the spares of a process that no longer
// runs; another running process's spares (several processes on one DATA_DIR) are left alone.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface SpareLedger {
  add(sessionId: string): void;
  remove(sessionId: string): void;
  /** The spares of processes of this host that no longer run; `forget` once one is removed. */
  orphans(): { sessionId: string; forget(): void }[];
}

const OWNER = /^(.+)-(\d+)$/;

/** Whether a process with this id runs here (one of another user counts: signal 0 was refused, not missed). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function spareLedger(dataDir: string, host = os.hostname(), pid = process.pid): SpareLedger {
  const root = path.join(dataDir, 'spares');
  const own = path.join(root, `${host}-${pid}`);
  return {
    add(sessionId) {
      fs.mkdirSync(own, { recursive: true });
      fs.writeFileSync(path.join(own, sessionId), '');
    },
    remove(sessionId) {
      fs.rmSync(path.join(own, sessionId), { force: true });
    },
    orphans() {
      let owners: string[];
      try {
        owners = fs.readdirSync(root);
      } catch {
        return [];
      }
      const found: { sessionId: string; forget(): void }[] = [];
      for (const owner of owners) {
        const m = OWNER.exec(owner);
        // Another host's process cannot be asked whether it runs: its spares are its own business.
        if (!m || m[1] !== host || Number(m[2]) === pid || running(Number(m[2]))) continue;
        const dir = path.join(root, owner);
        let ids: string[];
        try {
          ids = fs.readdirSync(dir);
        } catch {
          continue; // not a directory of ours
        }
        // An owner with nothing left is forgotten at once.
        if (!ids.length) fs.rmSync(dir, { recursive: true, force: true });
        for (const sessionId of ids) {
          found.push({
            sessionId,
            forget() {
              fs.rmSync(path.join(dir, sessionId), { force: true });
              if (!fs.readdirSync(dir).length) fs.rmSync(dir, { recursive: true, force: true });
            },
          });
        }
      }
      return found;
    },
  };
}
