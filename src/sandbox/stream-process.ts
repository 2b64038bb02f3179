// A long-running child whose stdout is read line by line as it comes (a CLI engine's JSON lines),
// in its own process group so a signal reaches everything it started (for a jail, the jail's
// launcher: killing it tears down the jail's PID namespace), with only stderr's end kept.
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import type { SandboxProcess } from './driver.js';

export const DEFAULT_STDERR_TAIL = 16 * 1024;

/** Keeps the last `max` bytes written to it. */
export class TailBuffer {
  private buf = Buffer.alloc(0);
  constructor(private readonly max: number) {}
  push(chunk: Buffer): void {
    this.buf = Buffer.concat([this.buf, chunk]);
    if (this.buf.length > this.max) this.buf = this.buf.subarray(this.buf.length - this.max);
  }
  text(): string {
    // Drop a leading partial UTF-8 character cut by the window.
    let start = 0;
    while (start < this.buf.length && start < 3 && (this.buf[start]! & 0xc0) === 0x80) start++;
    return this.buf.subarray(start).toString('utf8');
  }
}

export function spawnStreaming(
  file: string,
  args: string[],
  opts: { cwd: string; env: Record<string, string>; stdin?: string; stderrTailBytes?: number },
): SandboxProcess {
  const child = spawn(file, args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  const stderr = new TailBuffer(opts.stderrTailBytes ?? DEFAULT_STDERR_TAIL);
  child.stderr!.on('data', (c: Buffer) => stderr.push(c));
  child.stdin!.on('error', () => undefined); // a process that never reads stdin closes it early
  child.stdin!.end(opts.stdin ?? '');
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, signal);
    } catch {
      /* already gone */
    }
  };
  const exited = new Promise<number | null>((resolve) => {
    child.on('error', (err) => {
      stderr.push(Buffer.from(`${err.message}\n`));
      resolve(null);
    });
    child.on('exit', (code) => {
      signalGroup('SIGKILL'); // leftovers in the group go with it
      resolve(code);
    });
  });
  const lines = readline.createInterface({ input: child.stdout!, crlfDelay: Infinity });
  // A grandchild that escaped and holds stdout open must not keep the reader waiting forever.
  void exited.then(() => setTimeout(() => child.stdout!.destroy(), 500).unref());
  return { lines, exited, kill: (signal) => signalGroup(signal), stderrTail: () => stderr.text() };
}
