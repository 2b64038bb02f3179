// Live session streams. Each process keeps one topic per watched session: a notification
// "first-last" triggers ONE database read shared by every local subscriber (fan-out without N
// queries). A subscriber replays from the store first, a page at a time as its consumer reads,
// then follows live events; sequence numbers make the hand-over gap-free and duplicate-free, and
// a detected gap is re-read. A subscriber holds at most MAX_HELD events: one whose consumer
// falls further behind (a slow SSE client) reads the rest from the store as it reads, so its
// memory stays bounded however long its session runs (issue #29).
// Batches committed by this process are delivered at once, without the notice's round trip
// and read (onLocal); another process's notice carries its batch when small (no read either).
import { eventsAfter, sessionChannel, type StoredEvent } from './store.js';
import { pubsub } from './pubsub.js';
import { onLocalBatch } from './local-batches.js';
import { logger } from '../logger.js';
import { followIterator } from './iterators.js';

/** Events read from the store at a time, and held for one subscriber at most (live ones beyond are read again). */
const PAGE = 500;
const MAX_HELD = 2 * PAGE;

interface Subscriber {
  /** The last event queued for the consumer. */
  lastSeq: number;
  /** Its next events come from the store: a fresh stream's history, or a consumer MAX_HELD behind. */
  replaying: boolean;
  /** Live events that arrived while replaying, for the hand-over; dropped past MAX_HELD with the queue (the replay reads them). */
  pending: StoredEvent[];
  queue: StoredEvent[];
  wake: (() => void) | null;
  closed: boolean;
}

interface Topic {
  subscribers: Set<Subscriber>;
  lastFetched: number;
  chain: Promise<void>;
  unsubscribe: Promise<() => Promise<void>>;
}

const topics = new Map<string, Topic>();

function deliver(sub: Subscriber, events: StoredEvent[]): void {
  if (sub.closed) return;
  if (sub.replaying) {
    if (sub.queue.length + sub.pending.length + events.length > MAX_HELD) sub.pending = [];
    else for (const e of events) sub.pending.push(e);
    return;
  }
  for (const e of events) {
    if (e.seq <= sub.lastSeq) continue;
    if (sub.queue.length >= MAX_HELD) {
      sub.replaying = true; // the rest from the store, as the consumer reads
      break;
    }
    sub.queue.push(e);
    sub.lastSeq = e.seq;
  }
  sub.wake?.();
}

/** Reads the events up to `last` that the topic has not delivered yet, and delivers them. */
async function fetchUpTo(sessionId: string, topic: Topic, first: number, last: number): Promise<void> {
  if (last <= topic.lastFetched) return;
  // A fresh topic starts from the lowest point any subscriber still needs; after that every
  // fetch continues from the last one (sequence order is commit order, so nothing is skipped).
  // (A replaying subscriber reads what it misses itself.)
  const from = topic.lastFetched > 0 ? topic.lastFetched : Math.min(first - 1, ...[...topic.subscribers].filter((s) => !s.replaying).map((s) => s.lastSeq));
  const events = await eventsAfter(sessionId, from, Math.max(PAGE, last - from));
  if (!events.length) return;
  topic.lastFetched = events[events.length - 1]!.seq;
  for (const sub of topic.subscribers) deliver(sub, events);
}

function onNotice(sessionId: string, message: string): void {
  const topic = topics.get(sessionId);
  if (!topic) return;
  const nl = message.indexOf('\n');
  const [firstRaw, lastRaw] = (nl === -1 ? message : message.slice(0, nl)).split('-');
  const first = Number(firstRaw);
  const last = Number(lastRaw);
  // A notice of another process may carry its events (store.ts `notice`): delivered as a local
  // batch is, without a read; parsed only when still needed (this process's own notices are not).
  topic.chain = topic.chain
    .then(() => {
      if (last <= topic.lastFetched) return;
      const carried = nl !== -1 && continues(topic, first) ? parsedBatch(message.slice(nl + 1), first, last) : null;
      if (carried) return deliverBatch(topic, carried);
      return fetchUpTo(sessionId, topic, first, last);
    })
    .catch((err) => logger.warn({ err, sessionId }, 'live event fetch failed'));
}

/** A notice's batch when it is one (its range exactly, in order); null sends the reader to the store. */
function parsedBatch(text: string, first: number, last: number): StoredEvent[] | null {
  try {
    const batch = JSON.parse(text) as StoredEvent[];
    const ok = Array.isArray(batch) && batch.length === last - first + 1 && batch.every((e, i) => e?.seq === first + i && typeof e.event === 'object');
    return ok ? batch : null;
  } catch {
    return null;
  }
}

/** Whether a batch starting at `first` continues exactly what every subscriber of the topic has. */
function continues(topic: Topic, first: number): boolean {
  return topic.lastFetched > 0 ? topic.lastFetched === first - 1 : [...topic.subscribers].every((s) => s.replaying || s.lastSeq === first - 1);
}

function deliverBatch(topic: Topic, stored: StoredEvent[]): void {
  topic.lastFetched = stored[stored.length - 1]!.seq;
  for (const sub of topic.subscribers) deliver(sub, stored);
}

/**
 * A batch this process just committed (src/events/local-batches.ts): delivered as it is when it
 * continues exactly what every subscriber has (the topic's last delivered event, or for a fresh
 * topic every subscriber's last replayed one); otherwise read from the store like a notice.
 * Its pub/sub notice, when it arrives, finds the range delivered and reads nothing.
 */
function onLocal(sessionId: string, stored: StoredEvent[]): void {
  const topic = topics.get(sessionId);
  if (!topic || !stored.length) return;
  const first = stored[0]!.seq;
  const last = stored[stored.length - 1]!.seq;
  topic.chain = topic.chain
    .then(() => {
      if (last <= topic.lastFetched) return;
      if (!continues(topic, first)) return fetchUpTo(sessionId, topic, first, last);
      deliverBatch(topic, stored);
    })
    .catch((err) => logger.warn({ err, sessionId }, 'live event fetch failed'));
}
onLocalBatch(onLocal);

function topicFor(sessionId: string): Topic {
  let topic = topics.get(sessionId);
  if (!topic) {
    topic = {
      subscribers: new Set(),
      lastFetched: 0,
      chain: Promise.resolve(),
      unsubscribe: pubsub().subscribe(sessionChannel(sessionId), (m) => onNotice(sessionId, m)),
    };
    topics.set(sessionId, topic);
  }
  return topic;
}

async function release(sessionId: string, sub: Subscriber): Promise<void> {
  const topic = topics.get(sessionId);
  if (!topic) return;
  topic.subscribers.delete(sub);
  if (topic.subscribers.size === 0) {
    topics.delete(sessionId);
    await (await topic.unsubscribe)();
  }
}

/**
 * Every event of the session after `afterSeq`, then live ones, in order (the shared
 * replay-then-follow iterator: `return()` frees the subscriber at once). The store is read a page
 * at a time as the consumer takes events.
 */
export function followSession(sessionId: string, afterSeq: number): AsyncIterableIterator<StoredEvent> {
  const sub: Subscriber = { lastSeq: afterSeq, replaying: true, pending: [], queue: [], wake: null, closed: false };
  const topic = topicFor(sessionId);
  topic.subscribers.add(sub);
  let failure: unknown = null;

  const refill = () => (sub.replaying ? readPage() : false);
  const readPage = async (): Promise<void> => {
    try {
      const page = await eventsAfter(sessionId, sub.lastSeq, PAGE);
      if (sub.closed) return;
      for (const e of page) {
        sub.queue.push(e);
        sub.lastSeq = e.seq;
      }
      // Caught up: the live events held meanwhile follow, unless they start past what was read
      // (held ones were dropped, or a batch was committed after the read began and before one
      // delivered here: seq order is commit order, so the next read has it).
      const held = sub.pending;
      if (page.length < PAGE && (!held.length || held[0]!.seq <= sub.lastSeq + 1)) {
        sub.replaying = false;
        sub.pending = [];
        deliver(sub, held);
      }
    } catch (err) {
      failure = err;
    }
  };

  return followIterator(sub, { ready: topic.unsubscribe, failure: () => failure, refill, onClose: () => release(sessionId, sub) });
}

/** For tests: the most events any subscriber of the session holds for its consumer in this process. */
export function heldEvents(sessionId: string): number {
  const topic = topics.get(sessionId);
  return topic ? Math.max(0, ...[...topic.subscribers].map((s) => s.queue.length + s.pending.length)) : 0;
}

/** For tests and metrics: how many sessions this process is watching. */
export function watchedSessions(): number {
  return topics.size;
}

/**
 * Resolves once the notices already published have reached local subscribers (shutdown: the
 * last events of drained turns go out before the streams close). Bounded by `timeoutMs`.
 */
export async function hubSettled(timeoutMs = 1000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  // A notice published just now may still be on its way through pub/sub (a Redis round trip).
  await new Promise((r) => setTimeout(r, Math.min(100, timeoutMs)));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled([...topics.values()].map((t) => t.chain)),
    new Promise((r) => (timer = setTimeout(r, Math.max(0, deadline - Date.now())))),
  ]);
  clearTimeout(timer);
}
