// One statement for many concurrent callers (issue #29): the same read or update asked by many
// turns at once (their starts and ends cluster under a burst) goes out as ONE statement over all
// their keys, since each statement costs a round trip and a wake-up of PostgreSQL on the same
// cores. The policy is the event commits' (src/events/commit-queue.ts): a call waits at most for
// the end of the current event-loop turn, or, under load, for one of the statements in flight;
// what arrived meanwhile goes out together. A lone call is a statement over one key.

/** Statements in flight at once (the other calls gather meanwhile). */
const MAX_IN_FLIGHT = 2;

interface Call<K, R> {
  key: K;
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
}

/**
 * `run` answers every key of a batch, in the keys' order (one statement). A failed statement
 * fails each of its callers with its error.
 */
export function batched<K, R>(run: (keys: K[]) => Promise<R[]>, maxKeys = 500): (key: K) => Promise<R> {
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
    const taken = waiting.slice(0, maxKeys);
    waiting = waiting.slice(taken.length);
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
