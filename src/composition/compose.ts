// The one composition at start-up: startServer opens the database, then calls composeServices
// once with it, and the whole `Services` object (src/services/registry.ts) is built here in this
// order and installed at once:
//
//   config, database, secret key, instance identity → resolver, gateway handler, listen address
//   → blob store → egress service (its CA) and sandbox driver → Redis connections → pub/sub →
//   turn queue, local runner and the runner's turn gate → spare sandboxes → routine scheduler
//
// Nothing built here does work on its own until startServer starts it (`turnQueue.start()`,
// `routineScheduler.start()`), so no job can run before every part it reads is installed.
// `stop()` removes the spare sandboxes, stops the engine servers (CLIs kept running in sandboxes)
// and the sandboxes (the queue, pub/sub, scheduler, Redis connections and database are stopped
// or closed by stopService, in its order) and ends the composition.
import { syncMemoryMountsBack } from '../memory/mount.js';
import { settings, type Config } from '../config.js';
import { redisPubSub, memoryPubSub } from '../events/pubsub.js';
import { bullQueue, inProcessQueue } from '../runtime/queue.js';
import { openTurnGate, runSession, storeInputsAndStartTurn } from '../runtime/runner.js';
import { startSandboxes } from '../runtime/sandboxes.js';
import { createWarmSandboxes } from '../runtime/warm-sandboxes.js';
import { spareLedger } from '../runtime/spare-ledger.js';
import { stopEngineServers } from '../engines/cli/core/engine-server.js';
import { configuredBlobStore } from '../blobs/configured-blob-store.js';
import { inProcessRoutineScheduler } from '../routines/scheduler.js';
import { bullRoutineScheduler } from '../routines/bull-scheduler.js';
import { systemResolver } from '../net/outbound-guard.js';
import { handleGatewayRequest } from '../gateway/http-endpoint.js';
import { syncResources } from '../resources/resources.js';
import { relayDelegation } from '../runtime/delegation-tools.js';
import { materializeSkills } from '../skills/materialize.js';
import { openRedis } from '../redis.js';
import type { Database } from '../db/client.js';
import { loadSecretKey } from '../crypto/secret-box.js';
import { instanceIdentity, ownerIdOf } from '../services/instance.js';
import { installServices, type Services } from '../services/registry.js';

export interface ComposeOptions {
  /** The open database (openDatabase); closed by stopService, or by the start that failed. */
  database: Database;
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
  const secretKey = loadSecretKey(cfg.secretKey, cfg.dataDir);
  const instance = instanceIdentity({ host: cfg.host, port: cfg.port });
  // The egress proxy (and, with SANDBOX_DRIVER=kubernetes, the pod driver and its warm pool).
  const sandboxes = await startSandboxes(cfg, ownerIdOf(instance));
  // With BullMQ, a worker process also starts its own sessions' turns directly (faster first
  // frame); routine schedules are BullMQ job schedulers unless ROUTINE_SCHEDULER=inprocess
  // (tests that drive the ticker's clock).
  const redis = redisUrl ? openRedis(redisUrl) : null;
  let services: Services;
  try {
    services = {
      config: cfg,
      database: opts.database,
      secretKey,
      instance,
      resolver: systemResolver,
      gatewayHandler: handleGatewayRequest,
      listenUrl: opts.listenUrl,
      blobStore: configuredBlobStore(cfg.dataDir), // BLOB_STORE=local (DATA_DIR/blobs) or s3
      sandboxEgress: sandboxes.egress,
      egressCa: sandboxes.egress.ca,
      sandboxDriver: sandboxes.driver,
      sandboxFilling: { syncResources, materializeSkills, syncMemoryBack: syncMemoryMountsBack },
      startTurnAtOnce: storeInputsAndStartTurn, // multiagent: a thread's message and its turn's start in one statement
      relayDelegation, // multiagent: a coordinator's delegation tools in the CLI engines' MCP relay
      redis,
      pubsub: redis ? redisPubSub(redis.shared, redis.dedicated()) : memoryPubSub(),
      turnQueue: redis ? bullQueue(runSession, redis.dedicated(), cfg.turnWorker ? redis.dedicated() : null, cfg.queuePrefix) : inProcessQueue(runSession),
      localRunner: redis && cfg.turnWorker ? runSession : null,
      turnGate: openTurnGate(),
      warmSandboxes: createWarmSandboxes(spareLedger(cfg.dataDir)),
      routineScheduler:
        redis && settings.routineScheduler() !== 'inprocess'
          ? bullRoutineScheduler(redis.dedicated(), cfg.turnWorker ? redis.dedicated() : null, cfg.queuePrefix)
          : inProcessRoutineScheduler(),
      ...opts.replace,
    };
  } catch (err) {
    // A part that could not be built: what was opened for it is closed again.
    await redis?.close();
    await sandboxes.stop();
    throw err;
  }
  const composition = installServices(services);
  return {
    services,
    async stop() {
      await services.warmSandboxes.close();
      await stopEngineServers();
      await sandboxes.stop();
      composition.end();
    },
  };
}
