// Fires scheduled routines. Each routine stores the occurrence it owes (`nextRunAt`); a process
// fires it only after moving `nextRunAt` forward with a conditional UPDATE, so however many
// processes tick, each occurrence fires once.
//
// Missed fires (the service was down): occurrences missed within MISSED_FIRE_WINDOW_MS (1 h by
// default) are coalesced into one catch-up fire for the latest of them; older ones are skipped.
import { settings } from '../config.js';
import { prisma } from '../db/client.js';
import { logger } from '../logger.js';
import { fireRoutine, followingRun } from './fire.js';
import { latestRunAtOrBefore } from './cron.js';
import type { RoutineScheduler } from './scheduling.js';

export const MISSED_FIRE_WINDOW_MS = settings.missedFireWindowMs();

/** One pass: fires every due occurrence at `now`. Exposed for tests (a fake clock). */
export async function schedulerTick(now: Date = new Date()): Promise<string[]> {
  const due = await prisma.routine.findMany({
    where: { status: 'active', archivedAt: null, nextRunAt: { not: null, lte: now } },
    select: { id: true, nextRunAt: true, cronExpression: true, cronTimezone: true },
    take: 100,
  });
  const fired: string[] = [];
  for (const r of due) {
    const owed = r.nextRunAt!;
    const next = followingRun(r, now);
    // Claim: only the process that moves nextRunAt from `owed` fires.
    const claimed = await prisma.routine.updateMany({ where: { id: r.id, nextRunAt: owed, status: 'active' }, data: { nextRunAt: next } });
    if (claimed.count !== 1) continue;
    const late = now.getTime() - owed.getTime();
    const occurrence = late <= 60_000 ? owed : latestRunAtOrBefore(r.cronExpression!, r.cronTimezone ?? 'UTC', now, MISSED_FIRE_WINDOW_MS);
    if (!occurrence) {
      logger.warn({ routineId: r.id, missedSince: owed }, 'routine occurrences missed longer ago than the catch-up window were skipped');
      continue;
    }
    try {
      await fireRoutine(r.id, { type: 'schedule', scheduledAt: occurrence });
      fired.push(r.id);
    } catch (err) {
      logger.error({ err, routineId: r.id }, 'routine fire failed');
    }
  }
  return fired;
}

/**
 * The ticker as the process's routine scheduler (no Redis, or ROUTINE_SCHEDULER=inprocess):
 * routines are read from the database at each tick, so sync() has nothing to do.
 */
export function inProcessRoutineScheduler(): RoutineScheduler {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | null = null;
  return {
    sync: async () => undefined,
    async start() {
      if (timer) return;
      // Read when the scheduler starts (not when the module loads): a test or an operator sets it before.
      const tickMs = settings.schedulerTickMs();
      timer = setInterval(() => {
        if (running) return;
        running = schedulerTick()
          .catch((err) => logger.warn({ err }, 'scheduler tick failed'))
          .finally(() => (running = null));
      }, tickMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
