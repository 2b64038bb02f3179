// Helpers for handlers that read the request stream themselves (multipart uploads): notice a
// client that went away, and discard what is left of a refused body without reading it forever.
import type { IncomingMessage } from 'node:http';

/** Bytes of a refused body read and thrown away before the connection is cut instead. */
export const DRAIN_LIMIT_BYTES = 8 * 1024 * 1024;

/**
 * Calls `onGone` once if the client disconnects (or the request stream errors) before the whole
 * body arrived. Returns a function that stops watching.
 */
export function onClientGone(req: IncomingMessage, onGone: (err: Error) => void): () => void {
  let done = false;
  const gone = (err?: Error) => {
    if (done || req.complete) return;
    done = true;
    onGone(err ?? new Error('the client closed the connection during the upload'));
  };
  const onError = (err: Error) => gone(err);
  const onAborted = () => gone();
  const onClose = () => gone();
  req.on('error', onError);
  req.on('aborted', onAborted);
  req.on('close', onClose);
  return () => {
    done = true;
    req.off('aborted', onAborted);
    req.off('close', onClose);
    // the 'error' listener stays: a late socket error must never be an unhandled 'error' event
  };
}

/**
 * Reads and discards the rest of a refused body so the client can read the answer on a kept
 * connection; past `limit` bytes the connection is closed instead (a client may not stream on
 * forever after being told no).
 */
export function drainRequest(req: IncomingMessage, limit = DRAIN_LIMIT_BYTES): void {
  if (req.complete || req.destroyed) return;
  let seen = 0;
  req.on('error', () => undefined);
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > limit) req.destroy();
  });
  req.resume();
}
