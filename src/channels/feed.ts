// Following a universe's channel events (the SSE mirror and the channelEvents subscription):
// listen first, then read the feed after the resume point, then read again on every notice.
// Sequence numbers make replay and live hand-over gap- and duplicate-free; the iterator is the
// shared replay-then-follow one (src/events/iterators.ts), whose return() frees a quiet stream at once.
import { pubsub } from '../events/pubsub.js';
import { followIterator, type FollowState } from '../events/iterators.js';
import { channelEventsAfter, feedChannel, type StoredChannelEvent } from './events.js';

export function followChannelEvents(universeId: string, afterSeq: number): AsyncIterableIterator<StoredChannelEvent> {
  let lastSeq = afterSeq;
  let dirty = true; // read once at the start
  const state: FollowState<StoredChannelEvent> = { queue: [], wake: null, closed: false };
  const unsubscribe = pubsub().subscribe(feedChannel(universeId), () => {
    dirty = true;
    state.wake?.();
  });
  return followIterator(state, {
    ready: unsubscribe,
    refill: () => {
      if (!dirty) return false;
      dirty = false;
      return channelEventsAfter(universeId, lastSeq).then((page) => {
        for (const e of page) {
          state.queue.push(e);
          lastSeq = e.seq;
        }
        if (page.length === 500) dirty = true;
      });
    },
    onClose: async () => (await unsubscribe)(),
  });
}
