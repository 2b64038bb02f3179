// Runs one turn of a CLI engine, whatever the engine: starts the CLI (through a spawner the
// sandbox provides), turns each line of its output into session events through the adapter's
// mapper as it arrives, and stops it within a second when the turn is interrupted (SIGTERM,
// then SIGKILL after a grace period). Returns how the turn ended and the CLI's conversation id
// for the next turn's resume.
import type { StopReason } from '../../../events/types.js';
import type { CliInvocation, CliOutputMapper, CliProcess, EngineEvent, SessionErrorDetail } from './adapter.js';

export type { CliProcess };

/**
 * Starts the CLI. `signal` is the turn's: a spawner with a slow start (a Kubernetes pod receiving
 * the engine's copy) gives the start up when it aborts, rejecting instead of starting the CLI.
 */
export type CliSpawner = (inv: CliInvocation, signal: AbortSignal) => Promise<CliProcess>;

/** SIGTERM first, SIGKILL after this long: a turn's interrupt is done within a second. */
export const KILL_GRACE_MS = 500;

export interface CliTurnResult {
  stop: StopReason;
  resumeId: string | null;
}

export async function runCliTurn(opts: {
  invocation: CliInvocation;
  mapper: CliOutputMapper;
  spawn: CliSpawner;
  emit: (event: EngineEvent) => Promise<unknown>;
  signal: AbortSignal;
}): Promise<CliTurnResult> {
  const { mapper, signal } = opts;
  let proc: CliProcess;
  try {
    proc = await opts.spawn(opts.invocation, signal);
  } catch (err) {
    // Interrupted before the CLI started: the turn is over, nothing ran.
    if (signal.aborted) return { stop: { type: 'end_turn' }, resumeId: mapper.resumeId };
    throw err;
  }
  let killTimer: NodeJS.Timeout | undefined;
  const stop = () => {
    proc.kill('SIGTERM');
    killTimer = setTimeout(() => proc.kill('SIGKILL'), KILL_GRACE_MS);
    killTimer.unref();
  };
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, { once: true });
  try {
    for await (const line of proc.lines) {
      if (signal.aborted) break; // interrupted: nothing more from this turn reaches the session
      for (const ev of mapper.line(line)) await opts.emit(ev);
    }
    const code = await proc.exited;
    if (signal.aborted) return { stop: { type: 'end_turn' }, resumeId: mapper.resumeId };
    const end = mapper.finish(code);
    if (end.error) await opts.emit({ type: 'session.error', fields: { error: end.error } });
    return { stop: end.stop, resumeId: mapper.resumeId };
  } finally {
    signal.removeEventListener('abort', stop);
    if (killTimer) {
      // Wait for the process to be gone (it is killed by now at the latest), then drop the timer.
      await proc.exited.catch(() => null);
      clearTimeout(killTimer);
    }
  }
}

export type { SessionErrorDetail };
