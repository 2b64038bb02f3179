// With REDIS_URL, schedules fire through BullMQ job schedulers: one scheduler per active cron
// routine (same id, so updates replace rather than duplicate), firing in the routine's IANA
// zone; Redis hands each occurrence to exactly one worker however many processes run.
// The missed-fire policy is the same as in-process: an occurrence handed over late (the
// service was down) fires once if within MISSED_FIRE_WINDOW_MS, else it is skipped.
import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { prisma } from '../db/client.js';
import { logger } from '../logger.js';
import { fireRoutine } from './fire.js';
import { MISSED_FIRE_WINDOW_MS } from './scheduler.js';
import type { RoutineScheduler } from './scheduling.js';

const ROUTINE_QUEUE = 'routine-fires';

/** Built when the services compose; its worker takes fires once start() has reconciled the schedules. */
export function bullRoutineScheduler(connection: Redis, workerConnection: Redis | null, prefix: string): RoutineScheduler {
  const queue = new Queue<{ routineId: string }>(ROUTINE_QUEUE, { connection, prefix });
  const worker = workerConnection
    ? new Worker<{ routineId: string }>(
        ROUTINE_QUEUE,
        async (job) => {
          const scheduledAt = new Date(job.opts.prevMillis ?? job.timestamp);
          const late = Date.now() - scheduledAt.getTime();
          if (late > MISSED_FIRE_WINDOW_MS) {
            logger.warn({ routineId: job.data.routineId, scheduledAt }, 'skipped a routine occurrence missed longer ago than the catch-up window');
            return;
          }
          const routine = await prisma.routine.findUnique({ where: { id: job.data.routineId } });
          if (!routine || routine.status !== 'active' || routine.archivedAt) return;
          // The run's (routine, scheduled_at) is unique: a duplicate hand-over cannot fire twice.
          if (await prisma.routineRun.findFirst({ where: { routineId: routine.id, scheduledAt } })) return;
          await fireRoutine(routine.id, { type: 'schedule', scheduledAt });
        },
        { connection: workerConnection, prefix, concurrency: 8, autorun: false },
      )
    : null;
  worker?.on('failed', (job, err) => logger.error({ err, routineId: job?.data.routineId }, 'routine fire job failed'));

  let stopped = false;
  const sync: RoutineScheduler['sync'] = async (r) => {
    if (stopped) return; // the queue is closed: the next start reconciles
    if (r.status === 'active' && !r.archivedAt && r.cronExpression) {
      await queue.upsertJobScheduler(
        r.id,
        { pattern: r.cronExpression, tz: r.cronTimezone ?? 'UTC' },
        { name: 'fire', data: { routineId: r.id }, opts: { removeOnComplete: 100, removeOnFail: 100 } },
      );
    } else {
      await queue.removeJobScheduler(r.id);
    }
  };

  return {
    sync,
    async start() {
      // Reconcile: every active cron routine has its scheduler, and no stale ones remain.
      const routines = await prisma.routine.findMany({
        where: { cronExpression: { not: null } },
        select: { id: true, status: true, archivedAt: true, cronExpression: true, cronTimezone: true },
      });
      const wanted = new Set<string>();
      for (const r of routines) {
        await sync(r);
        if (r.status === 'active' && !r.archivedAt) wanted.add(r.id);
      }
      for (const s of await queue.getJobSchedulers(0, -1)) {
        if (s.key && !wanted.has(s.key)) await queue.removeJobScheduler(s.key);
      }
      if (worker) void worker.run().catch((err) => logger.error({ err }, 'routine fire worker stopped'));
    },
    async stop() {
      stopped = true;
      await worker?.close();
      await queue.close();
    },
  };
}
