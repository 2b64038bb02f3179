// The process's routine scheduler: BullMQ job schedulers with Redis, the in-process ticker
// (database-claimed occurrences) otherwise. Routine changes call sync().
import type { Routine } from '../generated/prisma/client.js';

export interface RoutineScheduler {
  sync(routine: Pick<Routine, 'id' | 'status' | 'archivedAt' | 'cronExpression' | 'cronTimezone'>): Promise<void>;
  stop(): Promise<void>;
}

const inProcess: RoutineScheduler = { sync: async () => undefined, stop: async () => undefined };
let current: RoutineScheduler = inProcess;

export function routineScheduler(): RoutineScheduler {
  return current;
}
export function setRoutineScheduler(next: RoutineScheduler | null): void {
  current = next ?? inProcess;
}
