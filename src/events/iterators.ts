// Async iterator helpers of the event streams: a mapping view, and the replay-then-follow
// iterator that session streams (hub.ts) and channel event streams (channels/feed.ts) share.

// A mapping/filtering view of an async iterator whose return() reaches the source at once
// (an async generator would wait for the source's pending next() first).
export function mapIterator<T, U>(source: AsyncIterator<T>, map: (value: T) => { value: U; last?: boolean } | null): AsyncIterableIterator<U> {
  let done = false;
  const it: AsyncIterableIterator<U> = {
    async next() {
      while (!done) {
        const r = await source.next();
        if (r.done) break;
        const mapped = map(r.value);
        if (!mapped) continue;
        if (mapped.last) {
          done = true;
          await source.return?.();
        }
        return { value: mapped.value, done: false };
      }
      done = true;
      return { value: undefined, done: true };
    },
    async return() {
      done = true;
      await source.return?.();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return it;
    },
  };
  return it;
}

/** What a replay-then-follow stream shares with its producer: the queue, the waiting consumer, the end. */
export interface FollowState<T> {
  queue: T[];
  /** Set while the consumer waits for more; the producer calls it after queueing. */
  wake: (() => void) | null;
  closed: boolean;
}

export interface FollowOptions {
  /** Awaited before the first read (listening before replaying: nothing published meanwhile is missed). */
  ready?: Promise<unknown>;
  /** A failure of the producer: the stream closes and `next()` throws it. */
  failure?: () => unknown;
  /** Reads more into the queue when it is empty; false when there was nothing to read. */
  refill?: () => Promise<boolean>;
  /** Frees what the stream holds (a topic, a pub/sub subscription); called once. */
  onClose: () => Promise<void>;
}

/**
 * The consumer side of a replay-then-follow stream (a session's events, a universe's channel
 * events): a hand-written iterator, not a generator, so `return()` ends a quiet stream at once
 * instead of waiting for its next item (a closed SSE connection frees its subscriber immediately).
 */
export function followIterator<T>(state: FollowState<T>, opts: FollowOptions): AsyncIterableIterator<T> {
  const close = async () => {
    if (state.closed) return;
    state.closed = true;
    state.wake?.();
    await opts.onClose();
  };
  const iterator: AsyncIterableIterator<T> = {
    async next() {
      if (opts.ready) await opts.ready;
      for (;;) {
        const failure = opts.failure?.();
        if (failure) {
          await close();
          throw failure;
        }
        if (state.closed) return { value: undefined, done: true };
        if (state.queue.length) return { value: state.queue.shift()!, done: false };
        if (opts.refill && (await opts.refill())) continue;
        await new Promise<void>((resolve) => (state.wake = resolve));
        state.wake = null;
      }
    },
    async return() {
      await close();
      return { value: undefined, done: true };
    },
    async throw(err?: unknown) {
      await close();
      throw err;
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
