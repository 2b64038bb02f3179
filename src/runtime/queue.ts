// Turn jobs. In-process by default; BullMQ on Redis when REDIS_URL is set, so any process's
// worker may run a session's turns (the runner's claim keeps them one at a time per session).
import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { performance } from 'node:perf_hooks';
import { logger } from '../logger.js';
import { service } from '../services/registry.js';
import { carried, withCarried, type Carried } from '../telemetry/tracing.js';
import { queueWait, scrapedLabelledGauge } from '../telemetry/metrics.js';
import { settings } from '../config.js';
import { slotFree } from './turn-slots.js';

export interface TurnQueue {
  enqueue(sessionId: string): Promise<void>;
  /** Whether this process runs turns (in-process queue, or a BullMQ worker here): a send may then start its turn itself. */
  readonly runsTurnsHere: boolean;
  /** Begins taking jobs (after the services are composed: a job reads them). */
  start(): void;
  /** Jobs waiting and running (this process's for the in-process queue; the shared queue's with BullMQ). */
  depth(): Promise<{ waiting: number; active: number }>;
  close(): Promise<void>;
}

export type Runner = (sessionId: string) => Promise<void>;

export function inProcessQueue(run: Runner): TurnQueue {
  const active = new Set<Promise<void>>();
  let closed = false;
  return {
    runsTurnsHere: true,
    async depth() {
      return { waiting: 0, active: active.size };
    },
    async enqueue(sessionId) {
      if (closed) return;
      const queuedAt = performance.now();
      const p = Promise.resolve()
        .then(() => {
          queueWait.observe((performance.now() - queuedAt) / 1000);
          return run(sessionId);
        })
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

/**
 * A turn job: the session, and the request id and trace context of the send that queued it, so
 * the process that runs the turn logs the same request id and its turn span joins the trace.
 */
export interface TurnJob {
  sessionId: string;
  carried?: Carried;
}

/** `workerConnection` null: this process only enqueues (an API-only process; others run turns). */
export function bullQueue(run: Runner, connection: Redis, workerConnection: Redis | null, prefix: string, concurrency = settings.turnConcurrency()): TurnQueue {
  const queue = new Queue<TurnJob>(TURN_QUEUE, { connection, prefix });
  const worker = workerConnection
    ? new Worker<TurnJob>(
        TURN_QUEUE,
        async (job) => {
          queueWait.observe(Math.max(0, Date.now() - job.timestamp) / 1000);
          return withCarried(job.data.carried, () => run(job.data.sessionId));
        },
        {
          connection: workerConnection,
          concurrency,
          prefix,
          autorun: false,
        },
      )
    : null;
  worker?.on('failed', (job, err) => logger.error({ err, sessionId: job?.data.sessionId }, 'session run job failed'));
  return {
    runsTurnsHere: worker !== null,
    async depth() {
      const counts = await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active');
      return { waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0), active: counts.active ?? 0 };
    },
    async enqueue(sessionId) {
      const from = carried();
      await queue.add('run', from ? { sessionId, carried: from } : { sessionId }, { removeOnComplete: 1000, removeOnFail: 1000, attempts: 1 });
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

scrapedLabelledGauge(
  'agent_service_turn_queue_jobs',
  'Turn jobs by state (waiting, active): the shared queue with Redis, this process otherwise',
  ['state'],
  async () => {
    const { waiting, active } = await service('turnQueue').depth();
    return [
      { labels: { state: 'waiting' }, value: waiting },
      { labels: { state: 'active' }, value: active },
    ];
  },
);

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
