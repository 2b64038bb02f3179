// The HTTP server's own limits and timeouts, set deliberately in one place (docs/api.md: "Limits,
// timeouts and hostile input"). Long responses are never cut by them: SSE streams and downloads are bounded by
// the client, not by a server timeout. Receiving a request is what is bounded:
//  - headers must arrive within HEADERS_TIMEOUT_MS (slow-header clients hold no socket for long)
//  - the whole request, body included, within REQUEST_TIMEOUT_MS (a 32 MiB upload needs at
//    least ~110 KB/s)
//  - an idle keep-alive connection closes after KEEP_ALIVE_TIMEOUT_MS (above the usual 60 s of
//    load balancers, so they close first)
//  - request headers may total MAX_HEADER_BYTES
// Protocol errors Node answers itself (oversized or malformed headers, timeouts) get the spec's
// envelope too.
import { environment } from '../config.js';
import type http from 'node:http';
import type { Socket } from 'node:net';

export const HEADERS_TIMEOUT_MS = 20_000;
export const REQUEST_TIMEOUT_MS = 300_000;
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;
export const MAX_HEADER_BYTES = 16 * 1024;

/** The effective timeouts: the defaults above, or HTTP_HEADERS_TIMEOUT_MS / HTTP_REQUEST_TIMEOUT_MS. */
export function serverTimeouts(env: NodeJS.ProcessEnv = environment()): { headersMs: number; requestMs: number } {
  const num = (raw: string | undefined, fallback: number) => (raw && Number(raw) > 0 ? Number(raw) : fallback);
  const requestMs = num(env.HTTP_REQUEST_TIMEOUT_MS, REQUEST_TIMEOUT_MS);
  // Node refuses a headers timeout longer than the request timeout.
  return { headersMs: Math.min(num(env.HTTP_HEADERS_TIMEOUT_MS, HEADERS_TIMEOUT_MS), requestMs), requestMs };
}

/** Options for `http.createServer` (the ones that can only be given there). */
export function serverOptions(): http.ServerOptions {
  const { headersMs, requestMs } = serverTimeouts();
  return {
    maxHeaderSize: MAX_HEADER_BYTES,
    headersTimeout: headersMs,
    requestTimeout: requestMs,
    // how often Node checks the two timeouts: often enough to be within a quarter of the shorter
    connectionsCheckingInterval: Math.max(100, Math.min(5_000, Math.floor(headersMs / 4))),
  };
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 413: 'Payload Too Large', 431: 'Request Header Fields Too Large' };

function answerFor(err: NodeJS.ErrnoException): { status: number; code: string; message: string } {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'headers_too_large', message: `request headers over ${MAX_HEADER_BYTES} bytes` };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: 'request_timeout', message: 'the request did not arrive in time' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, code: 'payload_too_large', message: 'chunk extensions too large' };
    default:
      return { status: 400, code: 'invalid_request', message: 'malformed HTTP request' };
  }
}

/** A protocol-level error (before Express sees the request): answer in the envelope, then close. */
function onClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  const inFlight = Reflect.get(socket, '_httpMessage') as http.ServerResponse | null | undefined;
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const { status, code, message } = answerFor(err);
  const body = JSON.stringify({ error: { code, message } });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** Applies the limits that are settable after creation and answers protocol errors. */
export function applyServerLimits(server: http.Server): void {
  const { headersMs, requestMs } = serverTimeouts();
  server.headersTimeout = headersMs;
  server.requestTimeout = requestMs;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.timeout = 0; // no socket inactivity timeout: an SSE stream may be quiet between pings
  server.on('clientError', onClientError);
}
