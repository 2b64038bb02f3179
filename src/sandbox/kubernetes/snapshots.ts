// Workspace snapshots: pods are replaceable (warm pods cannot mount a session's volume, and a
// pod can die), so the workspace's durable copy is a tar of /workspace in the blob store (shared
// storage when several API processes run), taken when the sandbox has been quiet for a moment
// (after a turn's commands) and restored into the next pod of the session.
import { createHash } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { BlobStore } from '../../blobs/blob-store.js';

export interface SnapshotStore {
  /** Writes a snapshot from `fill`, which streams the tar into the given writable. */
  save(sessionId: string, fill: (out: PassThrough) => Promise<void>, maxBytes: number): Promise<void>;
  /** The last snapshot as a stream, or null when there is none. */
  open(sessionId: string): Promise<NodeJS.ReadableStream | null>;
  remove(sessionId: string): Promise<void>;
}

const keyOf = (sessionId: string) => `snap${createHash('sha256').update(sessionId).digest('hex').slice(0, 40)}`;

const notFound = (err: unknown) => {
  const e = err as { code?: string; name?: string; $metadata?: { httpStatusCode?: number } };
  return e.code === 'ENOENT' || e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
};

export function blobSnapshots(store: () => BlobStore): SnapshotStore {
  return {
    async save(sessionId, fill, maxBytes) {
      const stream = new PassThrough();
      const stored = store().putAt(keyOf(sessionId), stream, { maxBytes });
      const filled = fill(stream).catch((err) => {
        stream.destroy(err as Error);
        throw err;
      });
      await Promise.all([stored, filled]);
    },
    async open(sessionId) {
      const stream = store().get(keyOf(sessionId));
      // The first event tells whether it exists: data (or end) yes, a not-found error no.
      return new Promise((resolve, reject) => {
        const onError = (err: unknown) => (notFound(err) ? resolve(null) : reject(err));
        stream.once('error', onError);
        stream.once('readable', () => {
          stream.off('error', onError);
          resolve(stream);
        });
      });
    },
    async remove(sessionId) {
      await store()
        .delete(keyOf(sessionId))
        .catch((err) => {
          if (!notFound(err)) throw err;
        });
    },
  };
}
