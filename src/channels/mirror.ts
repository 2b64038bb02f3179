// The channel event mirror (GET /channels/events/stream and the channelEvents subscription):
// the viewer's universe only; resumes after an event id (Last-Event-ID or ?after=), else
// starts with what happens next.
import type { Viewer } from '../auth/viewer.js';
import { AppError } from '../errors.js';
import { mapIterator } from '../events/iterators.js';
import { channelEventSeq, channelFeedHead } from './events.js';
import { followChannelEvents } from './feed.js';
import type { ChannelEventJson } from './contract.js';

export async function channelEventFeed(viewer: Viewer, after: string | null): Promise<AsyncIterableIterator<ChannelEventJson>> {
  const universeId = viewer.universe.id;
  let afterSeq: number;
  if (after) {
    const seq = await channelEventSeq(universeId, after);
    if (seq === null) throw new AppError('invalid_request', 'unknown event id to resume after');
    afterSeq = seq;
  } else {
    afterSeq = await channelFeedHead(universeId);
  }
  return mapIterator(followChannelEvents(universeId, afterSeq), ({ event }) => ({ value: event }));
}
