// Redis connections (ioredis) when REDIS_URL is set. BullMQ workers need
// maxRetriesPerRequest: null; a client for commands and the rate limiter can share one.
import { Redis } from 'ioredis';

let shared: Redis | undefined;
const extra: Redis[] = [];

export function redisConfigured(url = process.env.REDIS_URL): boolean {
  return !!url;
}

export function sharedRedis(url: string): Redis {
  // Auto-pipelining: the commands of one event-loop tick (rate-limit counts of concurrent
  // requests, publishes) leave in one write.
  shared ??= new Redis(url, { maxRetriesPerRequest: 3, enableOfflineQueue: true, lazyConnect: false, enableAutoPipelining: true });
  return shared;
}

/** A dedicated connection (subscribers and blocking workers cannot share). */
export function newRedis(url: string): Redis {
  const r = new Redis(url, { maxRetriesPerRequest: null });
  extra.push(r);
  return r;
}

export async function redisReady(): Promise<boolean> {
  if (!shared) return true;
  try {
    return (await shared.ping()) === 'PONG';
  } catch {
    return false;
  }
}

export async function closeRedis(): Promise<void> {
  await Promise.all([shared, ...extra].filter(Boolean).map((r) => r!.quit().catch(() => r!.disconnect())));
  shared = undefined;
  extra.length = 0;
}
