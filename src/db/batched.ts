// One statement for many concurrent callers (issue #29): the same read or write asked by many
// turns at once (their starts, streamed chunks and ends cluster under a burst) goes out as ONE
// statement over all their keys, since each statement costs a round trip and a wake-up of
// PostgreSQL on the same cores. A call waits at most for the end of the current event-loop turn,
// or, under load, for one of the statements in flight; what arrived meanwhile goes out together.
// A lone call is a statement over one key. The event commits (src/events/commit-queue.ts) use it
// with their own choice of what may go together.

/** Statements in flight at once (the other calls gather meanwhile). */
const MAX_IN_FLIGHT = 2;

interface Call<K, R> {
  key: K;
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
}

export interface BatchChoice<K> {
  /** Keys per statement at most (default 500), when `take` does not choose. */
  maxKeys?: number;
  /**
   * Which of the waiting keys (in arrival order) go in the next statement: true for each taken;
   * the others wait for a later one, in order. Called only when a statement may start.
   */
  take?: (waiting: K[]) => boolean[];
}

/**
 * `run` answers every key of a batch, in the keys' order (one statement). A failed statement
 * fails each of its callers with its error.
 */
export function batched<K, R>(run: (keys: K[]) => Promise<R[]>, choice: BatchChoice<K> = {}): (key: K) => Promise<R> {
  const maxKeys = choice.maxKeys ?? 500;
  let waiting: Call<K, R>[] = [];
  let inFlight = 0;
  let scheduled = false;

  const schedule = () => {
    if (scheduled || inFlight >= MAX_IN_FLIGHT || !waiting.length) return;
    scheduled = true;
    setImmediate(flush);
  };

  function flush(): void {
    scheduled = false;
    if (inFlight >= MAX_IN_FLIGHT || !waiting.length) return;
    let taken: Call<K, R>[];
    if (choice.take) {
      const mask = choice.take(waiting.map((c) => c.key));
      taken = waiting.filter((_, i) => mask[i]);
      waiting = waiting.filter((_, i) => !mask[i]);
    } else {
      taken = waiting.slice(0, maxKeys);
      waiting = waiting.slice(taken.length);
    }
    if (!taken.length) return; // all held back: a statement in flight ends, then they are asked again
    inFlight++;
    run(taken.map((c) => c.key))
      .then(
        (results) => taken.forEach((c, i) => c.resolve(results[i]!)),
        (err) => taken.forEach((c) => c.reject(err)),
      )
      .finally(() => {
        inFlight--;
        schedule();
      });
    schedule();
  }

  return (key) =>
    new Promise<R>((resolve, reject) => {
      waiting.push({ key, resolve, reject });
      schedule();
    });
}
