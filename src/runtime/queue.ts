// Turn jobs. In-process by default; BullMQ on Redis when REDIS_URL is set, so any process's
// worker may run a session's turns (the runner's claim keeps them one at a time per session).
import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { logger } from '../logger.js';
import { service } from '../services/registry.js';
import { settings } from '../config.js';
import { slotFree } from './turn-slots.js';

export interface TurnQueue {
  enqueue(sessionId: string): Promise<void>;
  /** Whether this process runs turns (in-process queue, or a BullMQ worker here): a send may then start its turn itself. */
  readonly runsTurnsHere: boolean;
  /** Begins taking jobs (after the services are composed: a job reads them). */
  start(): void;
  close(): Promise<void>;
}

export type Runner = (sessionId: string) => Promise<void>;

export function inProcessQueue(run: Runner): TurnQueue {
  const active = new Set<Promise<void>>();
  let closed = false;
  return {
    runsTurnsHere: true,
    async enqueue(sessionId) {
      if (closed) return;
      const p = Promise.resolve()
        .then(() => run(sessionId))
        .catch((err) => logger.error({ err, sessionId }, 'session run failed'))
        .finally(() => active.delete(p));
      active.add(p);
    },
    start() {
      // Nothing to take: enqueue() runs the session itself.
    },
    async close() {
      closed = true;
      await Promise.allSettled([...active]);
    },
  };
}

export const TURN_QUEUE = 'session-turns';

/** `workerConnection` null: this process only enqueues (an API-only process; others run turns). */
export function bullQueue(run: Runner, connection: Redis, workerConnection: Redis | null, prefix: string, concurrency = settings.turnConcurrency()): TurnQueue {
  const queue = new Queue<{ sessionId: string }>(TURN_QUEUE, { connection, prefix });
  const worker = workerConnection
    ? new Worker<{ sessionId: string }>(TURN_QUEUE, async (job) => run(job.data.sessionId), {
        connection: workerConnection,
        concurrency,
        prefix,
        autorun: false,
      })
    : null;
  worker?.on('failed', (job, err) => logger.error({ err, sessionId: job?.data.sessionId }, 'session run job failed'));
  return {
    runsTurnsHere: worker !== null,
    async enqueue(sessionId) {
      await queue.add('run', { sessionId }, { removeOnComplete: 1000, removeOnFail: 1000, attempts: 1 });
    },
    start() {
      if (worker) void worker.run().catch((err) => logger.error({ err }, 'turn worker stopped'));
    },
    async close() {
      await worker?.close();
      await queue.close();
    },
  };
}

declare module '../services/registry.js' {
  interface Services {
    /** BullMQ with REDIS_URL, in-process otherwise. */
    turnQueue: TurnQueue;
    /** Processes that run turns also start them at once, without waiting for the queue's hop (BullMQ workers); null otherwise. */
    localRunner: Runner | null;
  }
}

export async function enqueueSessionRun(sessionId: string): Promise<void> {
  // The queued job stays the durable path (another process may take it; the claim keeps
  // one runner per session), the local call is the fast one; with every turn slot here taken,
  // the job is left to whichever process's worker has room.
  const run = service('localRunner');
  if (run && slotFree()) setImmediate(() => void run(sessionId).catch((err) => logger.error({ err, sessionId }, 'session run failed')));
  await service('turnQueue').enqueue(sessionId);
}
