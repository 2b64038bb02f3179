// Starts the whole service in this process: database (+ migrations), then the process's
// services composed once with it (src/composition/compose.ts: config, database, secret key,
// instance identity, sandboxes, blob store, Redis when configured, pub/sub, turn queue, routine
// scheduler…), owner bootstrap, recovery,
// HTTP. Returns a handle that stops it again (tests start one per process at a time; each start
// composes anew and replaces the previous composition, each stop ends its own).
import http from 'node:http';
import path from 'node:path';
import { openDatabase } from './db/client.js';
import { bootstrapOwner } from './auth/bootstrap.js';
import { createLimiter } from './ratelimit/limiter.js';
import { createApp, requestListener } from './http/app.js';
import { buildRestDispatch } from '../rest/router.js';
import { routes } from '../rest/routes/index.js';
import { buildOpenApi } from '../rest/openapi.js';
import { serverOptions, applyServerLimits } from './http/server-limits.js';
import { checkPortFree, PortUnavailableError } from './http/port-check.js';
import { logger } from './logger.js';
import { settings, type Config } from './config.js';
import { enqueueSessionRun } from './runtime/queue.js';
import { recoverStaleSessions, sessionsWithWaitingInputs, recoverOwnTurns } from './runtime/runner.js';
import { stopService } from './shutdown.js';
import { startMetrics } from './telemetry/metrics.js';
import { startTracing, stopTracing } from './telemetry/tracing.js';
import { startDispatcher, reclaimOwnLeases } from './webhooks/dispatcher.js';
import { startChannels } from './channels/runtime.js';
import { composeServices } from './composition/compose.js';
import { sharedStateWarnings } from './deployment-warnings.js';
import type { Services } from './services/registry.js';

export interface RunningServer {
  url: string;
  server: http.Server;
  stop(): Promise<void>;
}

async function recover(): Promise<void> {
  const recovered = await recoverStaleSessions();
  if (recovered.length) logger.warn({ sessions: recovered }, 'recovered sessions whose runner stopped');
  for (const id of await sessionsWithWaitingInputs()) await enqueueSessionRun(id);
}

/** The address a listening server answers on (null before it listens and after it closed). */
function listenUrlOf(server: http.Server | undefined): string | null {
  const addr = server?.address();
  if (!addr || typeof addr === 'string') return null;
  return `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
}

export interface StartOptions {
  pgliteDir?: string;
  /** The image a new PGlite database starts from (tests: one migrated database copied per server). */
  pgliteImage?: Blob;
  /** Parts composed instead of the real ones (tests: a DNS resolver), see composeServices. */
  services?: Partial<Services>;
}

export async function startServer(cfg: Config, opts: StartOptions = {}): Promise<RunningServer> {
  // A taken port fails the start before it opens, migrates or creates anything.
  await checkPortFree(cfg.port, cfg.host);
  const database = await openDatabase({
    databaseUrl: cfg.databaseUrl,
    pgliteDir: opts.pgliteDir ?? path.join(cfg.dataDir, 'pglite'),
    pgliteImage: opts.pgliteImage,
  });
  let listening: http.Server | undefined; // the listen address is a composed service (the default PUBLIC_URL)
  let composed: Awaited<ReturnType<typeof composeServices>>;
  try {
    composed = await composeServices(cfg, { database, listenUrl: () => listenUrlOf(listening), replace: opts.services });
  } catch (err) {
    await database.close().catch(() => undefined);
    throw err;
  }
  const { turnQueue: queue, routineScheduler: scheduler, redis, pubsub } = composed.services;
  // Metrics always (labelled with this instance); traces only with an OTLP endpoint configured.
  startMetrics(composed.services.instance.instance);
  const traced = !!cfg.otelTracesEndpoint;
  if (cfg.otelTracesEndpoint) startTracing({ url: cfg.otelTracesEndpoint, instance: composed.services.instance.instance });
  // A start that fails part-way (the port taken, the database gone) leaves nothing behind: no
  // timers, workers, clients, pool or composition; the error goes to the caller.
  let recovery: NodeJS.Timeout | undefined;
  let dispatcher: ReturnType<typeof startDispatcher> | undefined;
  let server: http.Server | undefined;
  try {
    await bootstrapOwner(cfg);

    queue.start();
    await recover();
    // Spares of a process that was killed (-9) on this host: nobody's session, removed once.
    void composed.services.warmSandboxes.removeOrphans().then(
      (ids) => ids.length && logger.info({ sessions: ids }, 'removed spare sandboxes left by a stopped process'),
      (err) => logger.warn({ err }, 'could not read the spares left by stopped processes'),
    );
    recovery = setInterval(() => void recover().catch((err) => logger.warn({ err }, 'recovery pass failed')), settings.recoveryIntervalMs());
    recovery.unref();

    dispatcher = startDispatcher();
    await scheduler.start();

    // The REST surface is composed here, where the route table meets the HTTP app: /v1 is
    // dispatched from the route table at the node:http level, the rest goes to Express.
    const limiter = createLimiter(cfg.rateLimitPerMinute, redis?.shared);
    const app = createApp({ limiter, openapi: buildOpenApi(routes) });
    const created = http.createServer(serverOptions(), requestListener(app, buildRestDispatch(routes, { app, limiter })));
    server = listening = created;
    applyServerLimits(created); // timeouts and header limits: src/http/server-limits.ts
    await new Promise<void>((resolve, reject) => {
      created.once('error', (err: NodeJS.ErrnoException) =>
        reject(err.code === 'EADDRINUSE' || err.code === 'EACCES' ? new PortUnavailableError(err.code, cfg.host, cfg.port) : err),
      );
      created.listen(cfg.port, cfg.host, () => resolve());
    });
  } catch (err) {
    clearInterval(recovery);
    const quietly = (p: Promise<unknown> | undefined) => p?.catch(() => undefined);
    server?.close();
    await quietly(scheduler.stop());
    await quietly(dispatcher?.stop(0));
    await quietly(queue.close());
    await quietly(pubsub.close());
    await quietly(redis?.close());
    await quietly(database.close());
    await quietly(composed.stop());
    if (traced) await quietly(stopTracing());
    throw err;
  }
  const parts = { server, timers: [recovery], scheduler, dispatcher, queue, pubsub, redis, database };
  const url = listenUrlOf(server)!;
  logger.info({ url, database: cfg.databaseUrl ? 'postgresql' : 'pglite', redis: !!cfg.redisUrl }, 'agent service listening');
  for (const warning of sharedStateWarnings({
    databaseUrl: cfg.databaseUrl,
    redisUrl: cfg.redisUrl,
    blobStore: settings.blobStore(),
    sandboxDriver: cfg.sandboxDriver,
  }))
    logger.warn(warning);
  // Listening proves this instance's identity is ours alone: what its previous life held
  // (turns, webhook leases) is released now rather than after the heartbeat/lease timeout.
  const ownTurns = await recoverOwnTurns();
  const ownLeases = await reclaimOwnLeases();
  if (ownTurns.length || ownLeases) logger.warn({ sessions: ownTurns, webhookDeliveries: ownLeases }, 'released what the previous run of this instance held');
  if (ownTurns.length) await recover();
  const channels = startChannels();
  return {
    url,
    server,
    stop: async () => {
      await channels.stop();
      await stopService(parts);
      await composed.stop();
      if (traced) await stopTracing();
    },
  };
}
