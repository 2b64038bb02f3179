// The one pub/sub channel that carries interrupts to whichever process runs a session's turn
// (src/runtime/runner.ts listens to it); apart so that threads (src/runtime/threads.ts) can
// interrupt without importing the runner.
import { pubsub } from '../events/pubsub.js';

/**
 * Interrupts of every session reach each process on ONE channel, the message naming the session
 * (`<sessionId> <by>`): a process listens once, instead of a subscription (two Redis round
 * trips) per run of a session; the run it names, if live here, is aborted.
 */
export const INTERRUPTS = 'interrupts';

/** Asks the process running the session's turn (any process) to interrupt it. */
export async function publishInterrupt(sessionId: string, by: string): Promise<void> {
  await pubsub().publish(INTERRUPTS, `${sessionId} ${by}`);
}
