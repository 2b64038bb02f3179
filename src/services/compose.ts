// The one composition at start-up: startServer calls composeServices once, after the database
// is open, and the whole `Services` object (src/services/registry.ts) is built here in this
// order and installed at once:
//
//   config → resolver, gateway handler, listen address → blob store → egress service (its CA)
//   and sandbox driver → pub/sub → turn queue and local runner → routine scheduler
//
// Nothing built here does work on its own until startServer starts it (`turnQueue.start()`,
// `routineScheduler.start()`), so no job can run before every part it reads is installed.
// `stop()` stops the sandboxes (the queue, pub/sub and scheduler are stopped by stopService, in
// its order) and ends the composition.
import type { Config } from '../config.js';
import { redisPubSub, memoryPubSub } from '../events/pubsub.js';
import { bullQueue, inProcessQueue } from '../runtime/queue.js';
import { runSession } from '../runtime/runner.js';
import { startSandboxes } from '../runtime/sandboxes.js';
import { configuredBlobStore } from '../files/configured-blob-store.js';
import { inProcessRoutineScheduler } from '../routines/scheduler.js';
import { bullRoutineScheduler } from '../routines/bull-scheduler.js';
import { systemResolver } from '../net/outbound-guard.js';
import { handleGatewayRequest } from '../gateway/http-endpoint.js';
import { sharedRedis, newRedis } from '../redis.js';
import { installServices, type Services } from './registry.js';

export interface ComposeOptions {
  /** The address the HTTP server listens on once it does (the default PUBLIC_URL). */
  listenUrl: () => string | null;
  /** Parts a test composes instead of the real ones (a resolver for DNS rebinding tests; parts that hold nothing to close). */
  replace?: Partial<Services>;
}

export interface ComposedServices {
  readonly services: Services;
  /** Stops the sandboxes and ends the composition (after stopService). */
  stop(): Promise<void>;
}

export async function composeServices(cfg: Config, opts: ComposeOptions): Promise<ComposedServices> {
  const redisUrl = cfg.redisUrl;
  // The egress proxy (and, with SANDBOX_DRIVER=kubernetes, the pod driver and its warm pool).
  const sandboxes = await startSandboxes(cfg);
  // With BullMQ, a worker process also starts its own sessions' turns directly (faster first
  // frame); routine schedules are BullMQ job schedulers unless ROUTINE_SCHEDULER=inprocess
  // (tests that drive the ticker's clock).
  const services: Services = {
    config: cfg,
    resolver: systemResolver,
    gatewayHandler: handleGatewayRequest,
    listenUrl: opts.listenUrl,
    blobStore: configuredBlobStore(cfg.dataDir), // BLOB_STORE=local (DATA_DIR/blobs) or s3
    sandboxEgress: sandboxes.egress,
    egressCa: sandboxes.egress.ca,
    sandboxDriver: sandboxes.driver,
    pubsub: redisUrl ? redisPubSub(sharedRedis(redisUrl), newRedis(redisUrl)) : memoryPubSub(),
    turnQueue: redisUrl
      ? bullQueue(runSession, newRedis(redisUrl), cfg.turnWorker ? newRedis(redisUrl) : null, cfg.queuePrefix)
      : inProcessQueue(runSession),
    localRunner: redisUrl && cfg.turnWorker ? runSession : null,
    routineScheduler:
      redisUrl && process.env.ROUTINE_SCHEDULER !== 'inprocess'
        ? bullRoutineScheduler(newRedis(redisUrl), cfg.turnWorker ? newRedis(redisUrl) : null, cfg.queuePrefix)
        : inProcessRoutineScheduler(),
    ...opts.replace,
  };
  const composition = installServices(services);
  return {
    services,
    async stop() {
      await sandboxes.stop();
      composition.end();
    },
  };
}
