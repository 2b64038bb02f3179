// Starts the whole service in this process: database (+ migrations), secrets key, owner
// bootstrap, pub/sub and turn queue (Redis when configured), recovery, HTTP. Returns a handle
// that stops it again (tests start several).
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { openDatabase } from './db/client.js';
import { initSecretKey } from './crypto/secret-box.js';
import { bootstrapOwner } from './auth/bootstrap.js';
import { createLimiter } from './ratelimit/limiter.js';
import { createApp, requestListener } from './http/app.js';
import { buildRestDispatch } from '../rest/router.js';
import { routes } from '../rest/routes/index.js';
import { buildOpenApi } from '../rest/openapi.js';
import { serverOptions, applyServerLimits } from './http/server-limits.js';
import { sharedRedis, newRedis } from './redis.js';
import { logger } from './logger.js';
import { setConfig, type Config } from './config.js';
import { memoryPubSub, redisPubSub, setPubSub } from './events/pubsub.js';
import { bullQueue, inProcessQueue, setTurnQueue, setLocalRunner, enqueueSessionRun, type TurnQueue } from './runtime/queue.js';
import { runSession, recoverStaleSessions, sessionsWithWaitingInputs, acceptTurns, recoverOwnTurns } from './runtime/runner.js';
import { configureInstance } from './runtime/instance.js';
import { stopService } from './shutdown.js';
import { setSandboxDriver, startSandboxes } from './runtime/sandboxes.js';
import { startDispatcher, reclaimOwnLeases } from './webhooks/dispatcher.js';
import { setBlobStore } from './files/blob-store.js';
import { configuredBlobStore } from './files/configured-blob-store.js';
import { startScheduler } from './routines/scheduler.js';
import { startBullRoutineScheduler } from './routines/bull-scheduler.js';
import { setRoutineScheduler } from './routines/scheduling.js';
import { startChannels } from './channels/runtime.js';

export interface RunningServer {
  url: string;
  server: http.Server;
  stop(): Promise<void>;
}

const RECOVERY_INTERVAL_MS = Number(process.env.RECOVERY_INTERVAL_MS || 15_000);

async function recover(): Promise<void> {
  const recovered = await recoverStaleSessions();
  if (recovered.length) logger.warn({ sessions: recovered }, 'recovered sessions whose runner stopped');
  for (const id of await sessionsWithWaitingInputs()) await enqueueSessionRun(id);
}

export async function startServer(cfg: Config, opts: { pgliteDir?: string } = {}): Promise<RunningServer> {
  setConfig(cfg);
  configureInstance({ host: cfg.host, port: cfg.port });
  acceptTurns();
  setSandboxDriver(undefined);
  initSecretKey(cfg.secretKey, cfg.dataDir);
  await openDatabase({ databaseUrl: cfg.databaseUrl, pgliteDir: opts.pgliteDir ?? path.join(cfg.dataDir, 'pglite') });
  await bootstrapOwner(cfg);
  setBlobStore(configuredBlobStore(cfg.dataDir)); // BLOB_STORE=local (DATA_DIR/blobs) or s3
  // The egress proxy (and, with SANDBOX_DRIVER=kubernetes, the pod driver and its warm pool).
  const sandboxes = await startSandboxes();

  const redis = cfg.redisUrl ? sharedRedis(cfg.redisUrl) : undefined;
  setPubSub(cfg.redisUrl ? redisPubSub(redis!, newRedis(cfg.redisUrl)) : memoryPubSub());
  const queue: TurnQueue = cfg.redisUrl
    ? bullQueue(runSession, newRedis(cfg.redisUrl), cfg.turnWorker ? newRedis(cfg.redisUrl) : null, cfg.queuePrefix)
    : inProcessQueue(runSession);
  setTurnQueue(queue);
  // With BullMQ, a worker process also starts its own sessions' turns directly (faster first frame).
  setLocalRunner(cfg.redisUrl && cfg.turnWorker ? runSession : null);
  await recover();
  const recovery = setInterval(() => void recover().catch((err) => logger.warn({ err }, 'recovery pass failed')), RECOVERY_INTERVAL_MS);
  recovery.unref();

  const dispatcher = startDispatcher();
  // Routine schedules: BullMQ job schedulers with Redis, the in-process ticker otherwise
  // (ROUTINE_SCHEDULER=inprocess forces the ticker, e.g. for tests that drive its clock).
  let scheduler: { stop(): Promise<void> };
  if (cfg.redisUrl && process.env.ROUTINE_SCHEDULER !== 'inprocess') {
    const bull = await startBullRoutineScheduler(newRedis(cfg.redisUrl), cfg.turnWorker ? newRedis(cfg.redisUrl) : null, cfg.queuePrefix);
    setRoutineScheduler(bull);
    scheduler = bull;
  } else {
    setRoutineScheduler(null);
    scheduler = startScheduler();
  }

  // The REST surface is composed here, where the route table meets the HTTP app: /v1 is
  // dispatched from the route table at the node:http level, the rest goes to Express.
  const limiter = createLimiter(cfg.rateLimitPerMinute, redis);
  const app = createApp({ limiter, openapi: buildOpenApi(routes) });
  const server = http.createServer(serverOptions(), requestListener(app, buildRestDispatch(routes, { app, limiter })));
  applyServerLimits(server); // timeouts and header limits: src/http/server-limits.ts
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(cfg.port, cfg.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `http://${host}:${addr.port}`;
  logger.info({ url, database: cfg.databaseUrl ? 'postgresql' : 'pglite', redis: !!cfg.redisUrl }, 'agent service listening');
  // Listening proves this instance's identity is ours alone: what its previous life held
  // (turns, webhook leases) is released now rather than after the heartbeat/lease timeout.
  const ownTurns = await recoverOwnTurns();
  const ownLeases = await reclaimOwnLeases();
  if (ownTurns.length || ownLeases) logger.warn({ sessions: ownTurns, webhookDeliveries: ownLeases }, 'released what the previous run of this instance held');
  if (ownTurns.length) await recover();
  const channels = startChannels(url); // the listen address is the default PUBLIC_URL
  return {
    url,
    server,
    stop: async () => {
      await channels.stop();
      await stopService({ server, timers: [recovery], scheduler, dispatcher, queue });
      await sandboxes.stop();
    },
  };
}
