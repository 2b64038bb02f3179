// Stopping the service in an order that loses nothing: stop accepting connections, let turns
// finish (or interrupt them so each ends with its final message and session.status_idle),
// let their last events reach open streams, end the streams with a reconnect hint, let
// in-flight requests and webhook attempts finish (or requeue them), and close the shared
// clients and the database pool last, when nothing can use them any more.
//
// SHUTDOWN_DRAIN_MS (default 5000): how long running turns may take to finish on their own
// before they are interrupted; about 3 s more are allowed for interrupted turns to record their
// end, and a few for requests and webhook attempts. Orchestrators should allow about
// SHUTDOWN_DRAIN_MS + 8 s between SIGTERM and SIGKILL (docker stop -t, terminationGracePeriodSeconds).
import { settings } from './config.js';
import type http from 'node:http';
import { logger } from './logger.js';
import { drainTurns } from './runtime/runner.js';
import type { TurnQueue } from './runtime/queue.js';
import { provisioningSettled } from './sessions/provisioning.js';
import { hubSettled } from './events/hub.js';
import { closeAllStreams } from './http/open-streams.js';
import type { PubSub } from './events/pubsub.js';
import type { RedisConnections } from './redis.js';
import type { Database } from './db/client.js';
import { closeGuardedDispatcher } from './net/outbound-guard.js';
import { closeMcpConnections } from './tools/mcp/servers.js';
import type { Dispatcher } from './webhooks/dispatcher.js';

export const drainMs = () => settings.shutdownDrainMs();
const INTERRUPT_GRACE_MS = 3000;
const REQUEST_GRACE_MS = 2000;
const WEBHOOK_GRACE_MS = 2000;

export interface ServiceParts {
  server: http.Server;
  timers: NodeJS.Timeout[];
  scheduler: { stop(): Promise<void> };
  dispatcher: Dispatcher;
  queue: TurnQueue;
  /** This server's own connections (another server's composition may be in force meanwhile). */
  pubsub: PubSub;
  redis: RedisConnections | null;
  database: Database;
}

const within = <T>(p: Promise<T>, ms: number) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    void p.then(
      () => (clearTimeout(timer), resolve()),
      () => (clearTimeout(timer), resolve()),
    );
  });

export async function stopService(parts: ServiceParts): Promise<void> {
  const { server, dispatcher, queue } = parts;
  const started = Date.now();
  for (const t of parts.timers) clearInterval(t);
  // 1. No new connections (idle keep-alive connections close too); requests under way go on.
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();

  // 2. No new routine fires or turns (a stopped scheduler's sync does nothing; the runner
  // refuses new turns once it drains); running turns finish or are interrupted.
  await parts.scheduler.stop();
  const left = await drainTurns(drainMs(), INTERRUPT_GRACE_MS);
  if (left.length) logger.warn({ sessions: left }, 'turns still running at shutdown; this instance recovers them when it restarts');

  // 3. The last events reach their streams, then every stream ends with a reconnect hint.
  await hubSettled(1000);
  const streams = closeAllStreams();

  // 4. Requests under way get a moment; then every connection goes (GraphQL streams too).
  await within(closed, REQUEST_GRACE_MS);
  server.closeAllConnections();
  await closed;

  // 5. Background work, then the shared clients; the pool last.
  await dispatcher.stop(WEBHOOK_GRACE_MS);
  await provisioningSettled();
  await within(queue.close(), 5000);
  await closeMcpConnections();
  await closeGuardedDispatcher();
  await parts.pubsub.close();
  await parts.redis?.close();
  await parts.database.close();
  logger.info({ ms: Date.now() - started, streams, turnsLeftRunning: left.length }, 'stopped');
}
