// Runs one command in its own process group with a timeout, an abort signal and capped output.
// Every way out (timeout, abort, kill, normal exit) SIGKILLs the whole group, so nothing the
// command started outlives it, and a grandchild that escaped the group and holds the pipes
// open cannot make us wait: after the exit we give the pipes a short grace, then drop them.
import { spawn } from 'node:child_process';
import type { ExecResult } from './driver.js';

const PIPE_GRACE_MS = 500;

export interface RunOptions {
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  maxOutputBytes: number;
  stdin?: string;
  signal?: AbortSignal;
}

export interface RunningProcess {
  result: Promise<ExecResult>;
  /** SIGKILLs the process group; `result` then settles with exitCode null. */
  kill(): void;
}

/** Keeps the first `max` bytes, cut back to a whole UTF-8 character. */
export class OutputBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly max: number) {}
  push(chunk: Buffer): void {
    const room = this.max - this.size;
    if (chunk.length > room) this.truncated = true;
    if (room <= 0) return;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(part);
    this.size += part.length;
  }
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
  text(): string {
    let buf = Buffer.concat(this.chunks);
    if (this.truncated) buf = buf.subarray(0, utf8Boundary(buf));
    return buf.toString('utf8');
  }
}

/** Length of `buf` without a trailing partial UTF-8 sequence. */
function utf8Boundary(buf: Buffer): number {
  for (let back = 1; back <= Math.min(3, buf.length); back++) {
    const byte = buf[buf.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? buf.length - back : buf.length;
  }
  return buf.length;
}

export function runProcess(file: string, args: string[], opts: RunOptions): RunningProcess {
  const stdout = new OutputBuffer(opts.maxOutputBytes);
  const stderr = new OutputBuffer(opts.maxOutputBytes);
  const child = spawn(file, args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  let timedOut = false;
  let aborted = false;
  let killed = false;
  let exitCode: number | null = null;

  const killGroup = () => {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* the group is already gone */
    }
  };
  const kill = () => {
    killed = true;
    killGroup();
  };

  const result = new Promise<ExecResult>((resolve) => {
    let settled = false;
    let exited = false;
    let grace: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      if (exited) return;
      timedOut = true;
      killGroup();
    }, opts.timeoutMs);
    const onAbort = () => {
      if (exited) return;
      aborted = true;
      killGroup();
    };
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      opts.signal?.removeEventListener('abort', onAbort);
      resolve({
        exitCode: timedOut || aborted || killed ? null : exitCode,
        stdout: stdout.text(),
        stderr: stderr.text(),
        timedOut,
        aborted,
        truncated: stdout.truncated || stderr.truncated,
      });
    };

    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout!.on('data', (c: Buffer) => stdout.push(c));
    child.stderr!.on('data', (c: Buffer) => stderr.push(c));
    child.stdin!.on('error', () => undefined); // a command that never reads stdin closes it early
    child.stdin!.end(opts.stdin ?? '');
    child.on('error', (err) => {
      stderr.push(Buffer.from(`${err.message}\n`));
      exited = true;
      finish();
    });
    child.on('exit', (code) => {
      exited = true;
      exitCode = code;
      killGroup(); // leftovers (`sleep 100 &`) go with the command
      grace = setTimeout(() => {
        child.stdout!.destroy();
        child.stderr!.destroy();
        finish();
      }, PIPE_GRACE_MS);
    });
    // 'close' comes once the pipes are drained: the normal way to finish with complete output.
    child.on('close', finish);
  });
  return { result, kill };
}
