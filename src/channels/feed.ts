// Following a universe's channel events (the SSE mirror and the channelEvents subscription):
// listen first, then read the feed after the resume point, then read again on every notice.
// Sequence numbers make replay and live hand-over gap- and duplicate-free. A hand-written
// iterator so return() frees a quiet stream at once.
import { pubsub } from '../events/pubsub.js';
import { channelEventsAfter, feedChannel, type StoredChannelEvent } from './events.js';

export function followChannelEvents(universeId: string, afterSeq: number): AsyncIterableIterator<StoredChannelEvent> {
  let lastSeq = afterSeq;
  let closed = false;
  let dirty = true; // read once at the start
  let wake: (() => void) | null = null;
  const queue: StoredChannelEvent[] = [];
  const unsubscribe = pubsub().subscribe(feedChannel(universeId), () => {
    dirty = true;
    wake?.();
  });

  const close = async () => {
    if (closed) return;
    closed = true;
    wake?.();
    await (await unsubscribe)();
  };

  const iterator: AsyncIterableIterator<StoredChannelEvent> = {
    async next() {
      await unsubscribe; // listening before reading: nothing published meanwhile is missed
      for (;;) {
        if (closed) return { value: undefined, done: true };
        const item = queue.shift();
        if (item) return { value: item, done: false };
        if (dirty) {
          dirty = false;
          const page = await channelEventsAfter(universeId, lastSeq);
          for (const e of page) {
            queue.push(e);
            lastSeq = e.seq;
          }
          if (page.length === 500) dirty = true;
          continue;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
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
