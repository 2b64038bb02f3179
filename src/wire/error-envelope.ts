// Every non-2xx body is `{error: {code, message}}`. JSON answers are written here, without
// Express's res.json: no per-request ETag hash (the API's answers are not revalidated).
import type { ServerResponse } from 'node:http';
import { logger } from '../logger.js';

export const BODY_LIMIT = '1mb';

/** A JSON answer: `application/json; charset=utf-8` and its length (HEAD: Node sends no body). */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body) ?? '';
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

export function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent) return;
  sendJson(res, status, { error: { code, message } });
}

/** Body parser and other middleware errors, in the envelope. */
export function sendMiddlewareError(err: Error & { type?: string; status?: number }, res: ServerResponse): void {
  if (err.type === 'entity.parse.failed') return sendError(res, 400, 'invalid_request', 'malformed JSON body');
  if (err.type === 'entity.too.large') return sendError(res, 413, 'payload_too_large', `request body over ${BODY_LIMIT}`);
  if (err.type === 'encoding.unsupported' || err.type === 'charset.unsupported') return sendError(res, 415, 'unsupported_media_type', err.message);
  if (err.status && err.status >= 400 && err.status < 500) return sendError(res, err.status, 'invalid_request', err.message);
  logger.error({ err }, 'unhandled error');
  sendError(res, 500, 'internal_error', 'Unexpected error.');
}
