// Pub/sub of small notifications (ids, never whole rows): in-process by default, Redis when
// REDIS_URL is set so every API process hears every other one.
import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { service } from '../services/registry.js';

export type Listener = (message: string) => void;

export interface PubSub {
  /** Whether other processes hear what this one publishes (Redis), or only this process (in memory). */
  readonly crossProcess: boolean;
  publish(channel: string, message: string): Promise<void>;
  /**
   * A notice (`head`) and what may travel with it (`body()`, on a line of its own; '' for none):
   * the body is made and sent only while another process may hear the channel (issue #29: a
   * process that alone follows its sessions no longer serialises each batch, sends it to Redis
   * and reads it back). A listener that joins meanwhile gets the head alone once, then bodies.
   */
  notify(channel: string, head: string, body: () => string): Promise<void>;
  /** Returns an unsubscribe function. */
  subscribe(channel: string, listener: Listener): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export function memoryPubSub(): PubSub {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    crossProcess: false,
    async publish(channel, message) {
      emitter.emit(channel, message);
    },
    async notify(channel, head) {
      emitter.emit(channel, head); // one process: nobody else to carry anything to
    },
    async subscribe(channel, listener) {
      emitter.on(channel, listener);
      return async () => void emitter.off(channel, listener);
    },
    async close() {
      emitter.removeAllListeners();
    },
  };
}

/** One publisher and one subscriber connection per process; channels are refcounted locally. */
export function redisPubSub(publisher: Redis, subscriber: Redis, prefix = 'as:'): PubSub {
  const local = new EventEmitter();
  local.setMaxListeners(0);
  const counts = new Map<string, number>();
  // Channels whose last notice reached no other process (PUBLISH answers how many subscribers
  // heard it; this process's own subscription is one of them). Bounded: forgetting is safe.
  const alone = new Set<string>();
  const ALONE_MAX = 10_000;
  subscriber.on('message', (channel: string, message: string) => local.emit(channel.slice(prefix.length), message));
  return {
    crossProcess: true,
    async publish(channel, message) {
      await publisher.publish(prefix + channel, message);
    },
    async notify(channel, head, body) {
      const carried = alone.has(channel) ? '' : body();
      const heard = await publisher.publish(prefix + channel, carried ? `${head}\n${carried}` : head);
      if (heard > (counts.has(channel) ? 1 : 0)) alone.delete(channel);
      else {
        if (alone.size >= ALONE_MAX) alone.clear();
        alone.add(channel);
      }
    },
    async subscribe(channel, listener) {
      local.on(channel, listener);
      const n = (counts.get(channel) ?? 0) + 1;
      counts.set(channel, n);
      if (n === 1) await subscriber.subscribe(prefix + channel);
      return async () => {
        local.off(channel, listener);
        const left = (counts.get(channel) ?? 1) - 1;
        if (left <= 0) {
          counts.delete(channel);
          await subscriber.unsubscribe(prefix + channel).catch(() => undefined);
        } else counts.set(channel, left);
      };
    },
    async close() {
      local.removeAllListeners();
    },
  };
}

declare module '../services/registry.js' {
  interface Services {
    /** Redis pub/sub with REDIS_URL, in-memory otherwise (and in a test process without a server). */
    pubsub: PubSub;
  }
}

export function pubsub(): PubSub {
  return service('pubsub');
}
