// The server-sent-event streams this process has open, so that a shutdown can end them
// politely: a last comment and a short `retry:` (EventSource clients come back within a
// second), then the end of the response. Clients resume with Last-Event-ID on whichever
// process answers next; the store replays what they missed.
import { scrapedGauge } from '../telemetry/metrics.js';
const streams = new Set<() => void>();

scrapedGauge('agent_service_sse_streams_open', 'Server-sent event streams this process has open (REST session and channel streams)', () => streams.size);

export const STREAM_SHUTDOWN_FRAME = ': server shutting down; reconnect with Last-Event-ID\nretry: 1000\n\n';

/**
 * A stream whose client stopped reading (more than STREAM_BUFFER_BYTES waiting in this process,
 * nothing taken for STREAM_SLOW_CUT_MS) is closed with this frame: the client reads it once it
 * reads again, or the connection is cut (STREAM_SLOW_CUT_MS later); either way it resumes with
 * Last-Event-ID and loses nothing.
 */
export const STREAM_SLOW_FRAME = ': the client reads too slowly; reconnect with Last-Event-ID\nretry: 1000\n\n';

/** Registers a stream's closer (it writes the frame and ends the stream); returns the unregister. */
export function trackStream(close: () => void): () => void {
  streams.add(close);
  return () => void streams.delete(close);
}

/** Ends every open stream; returns how many there were. */
export function closeAllStreams(): number {
  const all = [...streams];
  streams.clear();
  for (const close of all) close();
  return all.length;
}

export function openStreamCount(): number {
  return streams.size;
}
