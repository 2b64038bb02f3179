// How many sessions this process runs turns for at once (TURN_CONCURRENCY, `settings.turnConcurrency`).
// A run takes a slot before it claims its session and holds it until the session goes idle; a
// run beyond the cap waits for a slot in arrival order (a burst queues, nothing fails). The cap
// is read at each take, so a changed setting applies to the next run.
import { settings } from '../config.js';

const waiting: ((taken: boolean) => void)[] = [];
let taken = 0;

/** A slot now, or false when every slot is taken (the caller then queues the run). */
export function tryTakeSlot(): boolean {
  if (waiting.length || taken >= settings.turnConcurrency()) return false;
  taken++;
  return true;
}

/** A slot, waited for in arrival order; false when the waiting was cancelled (shutdown). */
export function takeSlot(): Promise<boolean> {
  if (tryTakeSlot()) return Promise.resolve(true);
  return new Promise((resolve) => waiting.push(resolve));
}

export function releaseSlot(): void {
  taken--;
  while (waiting.length && taken < settings.turnConcurrency()) {
    taken++;
    waiting.shift()!(true);
  }
}

/** Whether a run would start at once (no slot waited for). */
export const slotFree = (): boolean => waiting.length === 0 && taken < settings.turnConcurrency();

/** At shutdown: every run still waiting for a slot gives up (its inputs stay for the next process). */
export function cancelWaitingRuns(): void {
  for (const resolve of waiting.splice(0)) resolve(false);
}

/** Slots taken and runs waiting, for the logs and tests. */
export const slotUse = () => ({ taken, waiting: waiting.length, cap: settings.turnConcurrency() });
