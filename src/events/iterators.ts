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
