// Event commits of many sessions gathered into few statements (commitEvents, store.ts). A commit
// waits at most for the end of the current event-loop turn, or, under load, for one of the
// statements in flight: what arrived meanwhile goes out together, in ONE statement for all its
// sessions (store-many.ts). A lone commit takes the one-session statement, so a quiet service
// stores each event as before and a stream's first chunk is not held. Per session, commits are
// stored in the order they were asked for (a session with a statement in flight waits for it);
// each caller's promise settles when its events are committed, as with a statement of its own.
import type { NewEvent } from './types.js';
import type { StoredBatch } from './types.js';
import { storeEventsOfSessions, type SessionEvents } from './store-many.js';
import { AppError } from '../errors.js';
import { logger } from '../logger.js';

interface Request {
  sessionId: string;
  events: NewEvent[];
  resolve: (batch: StoredBatch) => void;
  reject: (err: unknown) => void;
}

/** Statements in flight at once (the others' commits gather meanwhile). */
const MAX_IN_FLIGHT = 2;
/** Events per statement at most (a statement's size stays bounded under any load). */
const MAX_EVENTS = 2000;

export interface CommitQueue {
  store(sessionId: string, events: NewEvent[]): Promise<StoredBatch>;
}

/** `storeOne`: the one-session statement (a lone commit, and each session again when a batch fails). */
export function commitQueue(storeOne: (sessionId: string, events: NewEvent[]) => Promise<StoredBatch>): CommitQueue {
  let waiting: Request[] = [];
  const busy = new Set<string>(); // sessions with a statement in flight
  let inFlight = 0;
  let scheduled = false;

  const schedule = () => {
    if (scheduled || inFlight >= MAX_IN_FLIGHT || !waiting.length) return;
    scheduled = true;
    setImmediate(flush);
  };

  function flush(): void {
    scheduled = false;
    if (inFlight >= MAX_IN_FLIGHT) return;
    // Take what is ready, in arrival order: a session's requests stay behind one of its own in flight.
    const taken: Request[] = [];
    const left: Request[] = [];
    const held = new Set<string>();
    let events = 0;
    for (const r of waiting) {
      if (busy.has(r.sessionId) || held.has(r.sessionId) || (taken.length && events + r.events.length > MAX_EVENTS)) {
        held.add(r.sessionId);
        left.push(r);
        continue;
      }
      taken.push(r);
      events += r.events.length;
    }
    waiting = left;
    if (!taken.length) return;
    const sessions = new Set(taken.map((r) => r.sessionId));
    for (const id of sessions) busy.add(id);
    inFlight++;
    void run(taken).finally(() => {
      inFlight--;
      for (const id of sessions) busy.delete(id);
      schedule();
    });
    schedule();
  }

  async function run(taken: Request[]): Promise<void> {
    if (taken.length === 1) {
      const r = taken[0]!;
      await storeOne(r.sessionId, r.events).then(r.resolve, r.reject);
      return;
    }
    const groups = new Map<string, Request[]>();
    for (const r of taken) groups.set(r.sessionId, [...(groups.get(r.sessionId) ?? []), r]);
    let stored: Map<string, StoredBatch>;
    try {
      stored = await storeEventsOfSessions([...groups].map(([sessionId, rs]): SessionEvents => ({ sessionId, events: rs.flatMap((r) => r.events) })));
    } catch (err) {
      logger.warn({ err, sessions: groups.size }, 'a shared event statement failed; each session is stored alone');
      // One bad session (or a deadlock with a foreign transaction) must not fail the others:
      // each session alone, so that each caller gets its own answer.
      await Promise.all(
        [...groups.values()].map(async (rs) => {
          for (const r of rs) await storeOne(r.sessionId, r.events).then(r.resolve, r.reject);
        }),
      );
      return;
    }
    for (const [sessionId, rs] of groups) {
      const batch = stored.get(sessionId);
      if (!batch) {
        // Deleted meanwhile, as storeEvents answers it.
        for (const r of rs) r.reject(new AppError('not_found', 'session not found'));
        continue;
      }
      let at = 0;
      for (const [i, r] of rs.entries()) {
        const part = batch.stored.slice(at, at + r.events.length);
        at += r.events.length;
        r.resolve({ sessionId, stored: part, deliveries: i === 0 ? batch.deliveries : 0, turnCount: batch.turnCount });
      }
    }
  }

  return {
    store(sessionId, events) {
      return new Promise<StoredBatch>((resolve, reject) => {
        waiting.push({ sessionId, events, resolve, reject });
        schedule();
      });
    },
  };
}
