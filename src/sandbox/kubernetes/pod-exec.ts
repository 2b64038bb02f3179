// One command in a pod over the exec WebSocket protocol (@kubernetes/client-node's Exec:
// v5.channel.k8s.io, else v4): stdin from a buffer or stream (closed with the v5 close frame),
// stdout/stderr captured up to a cap (or streamed), the exit code from the Status document on
// the error channel. A command that outlives its timeout or abort signal is killed by a second
// exec (its process group, recorded by the wrapper in pod-scripts.ts).
import { PassThrough, Readable, Writable } from 'node:stream';
import { Exec, type KubeConfig, type V1Status } from '@kubernetes/client-node';
import { OutputBuffer } from '../process.js';
import { CONTAINER } from './pod-spec.js';

export interface PodExecRequest {
  namespace: string;
  pod: string;
  argv: string[];
  stdin?: Buffer | Readable;
  /** Stream stdout here instead of capturing it (snapshots). */
  stdoutTo?: Writable;
  /** Stream stderr here instead of capturing it (CLI engines keep only its end). */
  stderrTo?: Writable;
  maxOutputBytes?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** argv that kills the command (run when it must stop early). */
  killArgv?: string[];
}

export interface PodExecResult {
  /** null when there was no exit status (killed, timed out, aborted, or the stream broke). */
  exitCode: number | null;
  stdout: OutputBuffer;
  stderr: OutputBuffer;
  timedOut: boolean;
  aborted: boolean;
  /** The stream ended without a status: the pod may be gone. */
  broken: boolean;
}

/** The API refused the exec (no such pod, container not running, …). */
export class PodExecError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

function exitCodeOf(status: V1Status): number | null {
  if (status.status === 'Success') return 0;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  if (status.reason === 'NonZeroExitCode' && cause?.message) return Number(cause.message);
  return null;
}

function sink(buffer: OutputBuffer): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      buffer.push(chunk);
      done();
    },
  });
}

export async function podExec(kc: KubeConfig, req: PodExecRequest): Promise<PodExecResult> {
  const max = req.maxOutputBytes ?? 64 * 1024;
  const stdout = new OutputBuffer(req.stdoutTo ? 0 : max);
  const stderr = new OutputBuffer(max);
  let stdin: Readable | null = null;
  if (req.stdin instanceof Readable) stdin = req.stdin;
  else if (req.stdin) {
    const p = new PassThrough();
    p.end(req.stdin);
    stdin = p;
  }
  let status: V1Status | null = null;
  let timedOut = false;
  let aborted = false;
  const out = req.stdoutTo ?? sink(stdout);
  const err = req.stderrTo ?? sink(stderr);
  let conn: Awaited<ReturnType<Exec['exec']>>;
  try {
    conn = await new Exec(kc).exec(req.namespace, req.pod, CONTAINER, req.argv, out, err, stdin, false, (s) => (status = s));
  } catch (e) {
    const message = (e as Error).message ?? String(e);
    const code = /Unexpected server response: (\d+)/.exec(message);
    throw new PodExecError(`exec into pod ${req.pod} failed: ${message}`, code ? Number(code[1]) : null);
  }
  const stopEarly = (why: 'timeout' | 'abort') => {
    if (why === 'timeout') timedOut = true;
    else aborted = true;
    if (req.killArgv) void podExec(kc, { namespace: req.namespace, pod: req.pod, argv: req.killArgv, timeoutMs: 10_000 }).catch(() => undefined);
    // Give the kill a moment to end the command (its status then arrives), then drop the stream.
    setTimeout(() => conn.close(), 2000).unref();
  };
  const timer = req.timeoutMs ? setTimeout(() => stopEarly('timeout'), req.timeoutMs) : undefined;
  const onAbort = () => stopEarly('abort');
  if (req.signal?.aborted) onAbort();
  else req.signal?.addEventListener('abort', onAbort, { once: true });
  await new Promise<void>((resolve) => {
    if (conn.readyState === conn.CLOSED) return resolve();
    conn.on('close', () => resolve());
  });
  clearTimeout(timer);
  req.signal?.removeEventListener('abort', onAbort);
  if (stdin) stdin.destroy();
  const s = status as V1Status | null;
  if (s && s.status !== 'Success' && exitCodeOf(s) === null && !timedOut && !aborted) {
    throw new PodExecError(`exec into pod ${req.pod} failed: ${s.message ?? s.reason ?? 'unknown error'}`, s.code ?? null);
  }
  if (req.stdoutTo && !req.stdoutTo.writableEnded) req.stdoutTo.end();
  if (req.stderrTo && !req.stderrTo.writableEnded) req.stderrTo.end();
  return {
    exitCode: timedOut || aborted || !s ? null : exitCodeOf(s),
    stdout,
    stderr,
    timedOut,
    aborted,
    broken: !s && !timedOut && !aborted,
  };
}
