// Batches this process stored and committed, handed to this process's live streams at once:
// the hub delivers them without waiting for the pub/sub round trip and without reading them
// back, when they continue what it already delivered (otherwise it reads the store as for a
// notice). Other processes still learn of them through pub/sub.
import type { StoredEvent } from './types.js';

type Listener = (sessionId: string, stored: StoredEvent[]) => void;

const listeners = new Set<Listener>();

/** The hub listens; returns the way to stop. */
export function onLocalBatch(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Called by the store after the commit, before the pub/sub notice. */
export function handOverLocalBatch(sessionId: string, stored: StoredEvent[]): void {
  for (const listener of listeners) listener(sessionId, stored);
}
