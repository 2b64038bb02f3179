// The live feed of one session's events: replay after an event id, then follow; the history-only
// types are left out, and the feed ends after session.deleted. GraphQL's `sessionEvents`
// subscription and the REST SSE stream both read it (the stream serialises each event once for
// all its subscribers instead of executing GraphQL per subscriber).
import type { Viewer } from '../auth/viewer.js';
import { AppError } from '../errors.js';
import { followSession } from '../events/hub.js';
import { mapIterator } from '../events/iterators.js';
import { seqOf } from '../events/store.js';
import { HISTORY_ONLY_TYPES, type SessionEvent } from '../events/types.js';
import { resolveSession } from './sessions.js';

export async function sessionEventFeed(viewer: Viewer, sessionRef: string, after: string | null): Promise<AsyncIterableIterator<SessionEvent>> {
  const session = await resolveSession(viewer, sessionRef);
  let afterSeq = 0;
  if (after) {
    const seq = await seqOf(session.id, after);
    if (seq === null) throw new AppError('invalid_request', 'unknown event id in `after`');
    afterSeq = seq;
  }
  return mapIterator(followSession(session.id, afterSeq), ({ event }) =>
    HISTORY_ONLY_TYPES.has(event.type) ? null : { value: event, last: event.type === 'session.deleted' },
  );
}
