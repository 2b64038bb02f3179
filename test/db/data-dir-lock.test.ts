// One process per PGlite data directory (src/db/data-dir-lock.ts): a live holder refuses a second
// opener; a holder that is gone (killed), a pid reused by another program, or this process again
// is taken over; the release removes only this process's own lock.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDirInUseError, lockDataDir } from '../../src/db/data-dir-lock.js';
import { openDatabase } from '../../src/db/client.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'data-dir-lock-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  fs.rmSync(root, { recursive: true, force: true });
});

let n = 0;
const newDir = () => path.join(root, `pglite-${n++}`);
const startTime = (pid: number) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
};
function sleeper(): ChildProcess {
  const c = spawn('sleep', ['60'], { stdio: 'ignore' });
  children.push(c);
  return c;
}

describe('the PGlite data directory lock', () => {
  it('a live process holding it refuses another, naming its pid', () => {
    const dir = newDir();
    const holder = sleeper();
    fs.writeFileSync(`${dir}.lock`, JSON.stringify({ pid: holder.pid, started: startTime(holder.pid!) }));
    expect(() => lockDataDir(dir)).toThrow(DataDirInUseError);
    expect(() => lockDataDir(dir)).toThrow(`in use by another running agent service (pid ${holder.pid})`);
  });

  it('a holder that was killed, or a pid now another program with another start time, is taken over', async () => {
    const gone = sleeper();
    const goneDir = newDir();
    fs.writeFileSync(`${goneDir}.lock`, JSON.stringify({ pid: gone.pid, started: startTime(gone.pid!) }));
    gone.kill('SIGKILL');
    await new Promise((r) => gone.once('exit', r));
    const release = lockDataDir(goneDir);
    expect(JSON.parse(fs.readFileSync(`${goneDir}.lock`, 'utf8'))).toMatchObject({ pid: process.pid });
    release();
    expect(fs.existsSync(`${goneDir}.lock`)).toBe(false);

    const reused = sleeper();
    const reusedDir = newDir();
    fs.writeFileSync(`${reusedDir}.lock`, JSON.stringify({ pid: reused.pid, started: '1' }));
    lockDataDir(reusedDir)();
  });

  it('this process again takes it over; a release leaves a lock that is not its own', () => {
    const dir = newDir();
    const first = lockDataDir(dir);
    const second = lockDataDir(dir);
    second();
    expect(fs.existsSync(`${dir}.lock`)).toBe(false);
    const holder = sleeper();
    fs.writeFileSync(`${dir}.lock`, JSON.stringify({ pid: holder.pid, started: startTime(holder.pid!) }));
    first(); // not ours any more: left alone
    expect(JSON.parse(fs.readFileSync(`${dir}.lock`, 'utf8'))).toMatchObject({ pid: holder.pid });
  });

  it('openDatabase takes it for its life and gives it back on close; a held directory is not opened', async () => {
    const dir = newDir();
    const db = await openDatabase({ pgliteDir: dir });
    expect(JSON.parse(fs.readFileSync(`${dir}.lock`, 'utf8'))).toMatchObject({ pid: process.pid });
    await db.close();
    expect(fs.existsSync(`${dir}.lock`)).toBe(false);
    const holder = sleeper();
    fs.writeFileSync(`${dir}.lock`, JSON.stringify({ pid: holder.pid, started: startTime(holder.pid!) }));
    await expect(openDatabase({ pgliteDir: dir })).rejects.toBeInstanceOf(DataDirInUseError);
  }, 60_000);
});
