// Event commits of many sessions gathered into few statements (commitEvents, store.ts), with the
// policy of every shared statement (src/db/batched.ts): a commit waits at most for the end of the
// current event-loop turn, or, under load, for one of the statements in flight; what arrived
// meanwhile goes out together, in ONE statement for all its sessions (store-many.ts). A lone
// commit takes the one-session statement, so a quiet service stores each event as before and a
// stream's first chunk is not held. Per session, commits are stored in the order they were asked
// for (a session with a statement in flight waits for it); each caller's promise settles when its
// events are committed, as with a statement of its own.
import type { NewEvent } from './types.js';
import type { StoredBatch } from './types.js';
import { storeEventsOfSessions, type SessionEvents } from './store-many.js';
import { AppError } from '../errors.js';
import { logger } from '../logger.js';
import { batched } from '../db/batched.js';

interface Request {
  sessionId: string;
  events: NewEvent[];
}

/** Each commit's own answer: its part of the session's batch, or its own error. */
type Answer = { batch: StoredBatch } | { error: unknown };

/** Events per statement at most (a statement's size stays bounded under any load). */
const MAX_EVENTS = 2000;

export interface CommitQueue {
  store(sessionId: string, events: NewEvent[]): Promise<StoredBatch>;
}

/** `storeOne`: the one-session statement (a lone commit, and each session again when a batch fails). */
export function commitQueue(storeOne: (sessionId: string, events: NewEvent[]) => Promise<StoredBatch>): CommitQueue {
  const busy = new Set<string>(); // sessions with a statement in flight

  // What is ready, in arrival order: a session's requests stay behind one of its own in flight
  // (and behind an earlier one held back), and a statement's events stay under MAX_EVENTS.
  function take(waiting: Request[]): boolean[] {
    const held = new Set<string>();
    let events = 0;
    let taken = 0;
    const mask = waiting.map((r) => {
      if (busy.has(r.sessionId) || held.has(r.sessionId) || (taken && events + r.events.length > MAX_EVENTS)) {
        held.add(r.sessionId);
        return false;
      }
      taken++;
      events += r.events.length;
      return true;
    });
    waiting.forEach((r, i) => mask[i] && busy.add(r.sessionId));
    return mask;
  }

  const alone = (r: Request): Promise<Answer> =>
    storeOne(r.sessionId, r.events).then(
      (batch) => ({ batch }),
      (error: unknown) => ({ error }),
    );

  async function run(taken: Request[]): Promise<Answer[]> {
    try {
      if (taken.length === 1) return [await alone(taken[0]!)];
      return await storeShared(taken);
    } finally {
      for (const r of taken) busy.delete(r.sessionId);
    }
  }

  async function storeShared(taken: Request[]): Promise<Answer[]> {
    const groups = new Map<string, number[]>(); // session → its requests' places, in order
    taken.forEach((r, i) => groups.set(r.sessionId, [...(groups.get(r.sessionId) ?? []), i]));
    let stored: Map<string, StoredBatch>;
    try {
      stored = await storeEventsOfSessions([...groups].map(([sessionId, at]): SessionEvents => ({ sessionId, events: at.flatMap((i) => taken[i]!.events) })));
    } catch (err) {
      logger.warn({ err, sessions: groups.size }, 'a shared event statement failed; each session is stored alone');
      // One bad session (or a deadlock with a foreign transaction) must not fail the others:
      // each session alone, so that each caller gets its own answer.
      const answers: Answer[] = new Array(taken.length);
      await Promise.all(
        [...groups.values()].map(async (at) => {
          for (const i of at) answers[i] = await alone(taken[i]!);
        }),
      );
      return answers;
    }
    const answers: Answer[] = new Array(taken.length);
    for (const [sessionId, at] of groups) {
      const batch = stored.get(sessionId);
      let from = 0;
      for (const [n, i] of at.entries()) {
        // Deleted meanwhile, as storeEvents answers it.
        if (!batch) {
          answers[i] = { error: new AppError('not_found', 'session not found') };
          continue;
        }
        const part = batch.stored.slice(from, from + taken[i]!.events.length);
        from += taken[i]!.events.length;
        answers[i] = { batch: { sessionId, stored: part, deliveries: n === 0 ? batch.deliveries : 0, turnCount: batch.turnCount } };
      }
    }
    return answers;
  }

  const commit = batched(run, { take });
  return {
    async store(sessionId, events) {
      const answer = await commit({ sessionId, events });
      if ('error' in answer) throw answer.error;
      return answer.batch;
    },
  };
}
