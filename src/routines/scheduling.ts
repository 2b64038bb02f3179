// The process's routine scheduler: BullMQ job schedulers with Redis, the in-process ticker
// (database-claimed occurrences) otherwise. Routine changes call sync().
import type { RoutineScheduler } from './bull-scheduler.js';

const inProcess: RoutineScheduler = { sync: async () => undefined, stop: async () => undefined };
let current: RoutineScheduler = inProcess;

export function routineScheduler(): RoutineScheduler {
  return current;
}
export function setRoutineScheduler(next: RoutineScheduler | null): void {
  current = next ?? inProcess;
}
