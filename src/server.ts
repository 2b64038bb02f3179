// Starts the whole service in this process: database (+ migrations), secrets key, owner
// bootstrap, rate limiter, HTTP. Returns a handle that stops it again (tests start several).
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { openDatabase, closeDatabase } from './db/client.js';
import { initSecretKey } from './crypto/secret-box.js';
import { bootstrapOwner } from './auth/bootstrap.js';
import { createLimiter } from './ratelimit/limiter.js';
import { createApp } from './http/app.js';
import { sharedRedis, closeRedis } from './redis.js';
import { logger } from './logger.js';
import type { Config } from './config.js';
import { setConfig } from './config.js';

export interface RunningServer {
  url: string;
  server: http.Server;
  stop(): Promise<void>;
}

export async function startServer(cfg: Config, opts: { pgliteDir?: string } = {}): Promise<RunningServer> {
  setConfig(cfg);
  initSecretKey(cfg.secretKey, cfg.dataDir);
  await openDatabase({ databaseUrl: cfg.databaseUrl, pgliteDir: opts.pgliteDir ?? path.join(cfg.dataDir, 'pglite') });
  await bootstrapOwner(cfg);
  const redis = cfg.redisUrl ? sharedRedis(cfg.redisUrl) : undefined;
  const app = createApp({ limiter: createLimiter(cfg.rateLimitPerMinute, redis) });
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(cfg.port, cfg.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `http://${host}:${addr.port}`;
  logger.info({ url, database: cfg.databaseUrl ? 'postgresql' : 'pglite', redis: !!cfg.redisUrl }, 'agent service listening');
  return {
    url,
    server,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await closeRedis();
      await closeDatabase();
    },
  };
}
