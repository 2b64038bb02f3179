// The process's routine scheduler: BullMQ job schedulers with Redis (bull-scheduler.ts), the
// in-process ticker (database-claimed occurrences, scheduler.ts) otherwise. Routine changes call
// sync(). Built when the services compose, started once the service is ready, stopped at shutdown
// (a sync after stop does nothing: routines edited while the service drains fire after restart).
import type { Routine } from '../generated/prisma/client.js';
import { service } from '../services/registry.js';

export interface RoutineScheduler {
  sync(routine: Pick<Routine, 'id' | 'status' | 'archivedAt' | 'cronExpression' | 'cronTimezone'>): Promise<void>;
  /** Begins firing (reconciles the schedules first with BullMQ). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

declare module '../services/registry.js' {
  interface Services {
    routineScheduler: RoutineScheduler;
  }
}

/** What a process without a server has: routines are stored, nothing fires. */
export const idleRoutineScheduler: RoutineScheduler = { sync: async () => undefined, start: async () => undefined, stop: async () => undefined };

export function routineScheduler(): RoutineScheduler {
  return service('routineScheduler');
}
