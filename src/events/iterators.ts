// Async iterator helpers of the event streams: a mapping view, and the replay-then-follow
// iterator that session streams (hub.ts) and channel event streams (channels/feed.ts) share.

// Both iterators answer `next()` with a promise settled from what is at hand (a queued event is
// one resolved promise, not an async function's frames and awaits): a stream's every frame goes
// through them, so their promises are a share of a busy process's work (issue #29).

const DONE: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true });

// A mapping/filtering view of an async iterator whose return() reaches the source at once
// (an async generator would wait for the source's pending next() first).
export function mapIterator<T, U>(source: AsyncIterator<T>, map: (value: T) => { value: U; last?: boolean } | null): AsyncIterableIterator<U> {
  let done = false;
  const step = (r: IteratorResult<T>): IteratorResult<U> | Promise<IteratorResult<U>> => {
    if (done || r.done) {
      done = true;
      return DONE;
    }
    const mapped = map(r.value);
    if (!mapped) return source.next().then(step);
    if (!mapped.last) return { value: mapped.value, done: false };
    done = true;
    const value = { value: mapped.value, done: false } as const;
    return Promise.resolve(source.return?.()).then(() => value);
  };
  const it: AsyncIterableIterator<U> = {
    next() {
      return done ? Promise.resolve(DONE) : source.next().then(step);
    },
    async return() {
      done = true;
      await source.return?.();
      return DONE;
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
  /**
   * Reads more into the queue when it is empty: false, synchronously, when there is nothing to
   * read (the consumer then waits for a wake; answered later, a wake given meanwhile would be
   * lost), else a promise of the read.
   */
  refill?: () => Promise<unknown> | false;
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
  let ready = opts.ready;
  const next = (): Promise<IteratorResult<T>> => {
    if (ready) {
      const first = ready;
      ready = undefined;
      return first.then(next);
    }
    const failure = opts.failure?.();
    if (failure)
      return close().then(() => {
        throw failure;
      });
    if (state.closed) return Promise.resolve(DONE);
    if (state.queue.length) return Promise.resolve({ value: state.queue.shift()!, done: false });
    const wait = () =>
      new Promise<void>((resolve) => (state.wake = resolve)).then(() => {
        state.wake = null;
        return next();
      });
    const reading = opts.refill?.();
    return reading ? reading.then(next) : wait();
  };
  const iterator: AsyncIterableIterator<T> = {
    next,
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
