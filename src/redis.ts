// Redis connections (ioredis) when REDIS_URL is set, opened by the composition (the `redis`
// part, null without Redis) and closed with it. BullMQ workers and subscribers need dedicated
// connections with maxRetriesPerRequest: null; commands, the rate limiters and publishing share one.
import { Redis } from 'ioredis';
import { service } from './services/registry.js';

export interface RedisConnections {
  /** For commands, the rate limiters and publishing. */
  readonly shared: Redis;
  /** A new dedicated connection (a subscriber or a blocking worker cannot share), closed with the rest. */
  dedicated(): Redis;
  close(): Promise<void>;
}

declare module './services/registry.js' {
  interface Services {
    redis: RedisConnections | null;
  }
}

export function openRedis(url: string): RedisConnections {
  // Auto-pipelining: the commands of one event-loop tick (rate-limit counts of concurrent
  // requests, publishes) leave in one write.
  const shared = new Redis(url, { maxRetriesPerRequest: 3, enableOfflineQueue: true, lazyConnect: false, enableAutoPipelining: true });
  const all: Redis[] = [shared];
  let closing: Promise<void> | undefined;
  return {
    shared,
    dedicated() {
      const r = new Redis(url, { maxRetriesPerRequest: null });
      all.push(r);
      return r;
    },
    close: () =>
      (closing ??= Promise.all(
        all.map((r) =>
          r.quit().then(
            () => undefined,
            () => r.disconnect(),
          ),
        ),
      ).then(() => undefined)),
  };
}

/** The composed Redis connections; null without Redis. */
export function redis(): RedisConnections | null {
  return service('redis');
}

export async function redisReady(): Promise<boolean> {
  const connections = redis();
  if (!connections) return true;
  try {
    return (await connections.shared.ping()) === 'PONG';
  } catch {
    return false;
  }
}
