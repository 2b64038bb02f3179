// Serves the routes a caller without a token reaches by signing the exact bytes it sends (the
// platforms' inbound endpoint, `RestRoute.signed`). The dispatcher (rest/router.ts) looks them up
// in the route table after the origin guard and before the per-token rate limit and the input
// hygiene: a platform carries no token, must not spend anyone's rate limit, and its signature
// covers the body as sent (any media type, so no JSON parsing or 415 here). The route reads those
// bytes and answers JSON, or text where the platform expects text.
import type http from 'node:http';
import querystring from 'node:querystring';
import express from 'express';
import { AppError } from '../src/errors.js';
import { sendError, sendJson } from '../src/wire/error-envelope.js';
import { logger } from '../src/logger.js';
import type { RestRoute, SignedRequest } from './route.js';

type Signed = NonNullable<RestRoute['signed']>;
type BodyReader = (req: http.IncomingMessage, res: http.ServerResponse, next: (err?: unknown) => void) => void;

/** The body's bytes, whatever its media type (inflated as Express's raw parser does), up to `limit`. */
function readBody(read: BodyReader, req: http.IncomingMessage, res: http.ServerResponse): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    read(req, res, (err) => {
      if (err) return reject(err);
      const body = (req as { body?: unknown }).body;
      resolve(Buffer.isBuffer(body) ? body : Buffer.alloc(0));
    }),
  );
}

/** The query string's values as Express's default parser reads them (repeated names: ignored). */
function queryOf(url: string): Record<string, string> {
  const q = url.indexOf('?');
  if (q === -1) return {};
  const hash = url.indexOf('#', q);
  const parsed = querystring.parse(url.slice(q + 1, hash === -1 ? undefined : hash));
  const query: Record<string, string> = {};
  for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') query[k] = v;
  return query;
}

function headersOf(req: http.IncomingMessage): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v[0] : v;
  return headers;
}

/** Serves one matched signed route: its bytes in, its answer out (errors in the envelope). */
export function signedRouteServer(): (route: RestRoute, params: Record<string, string>, req: http.IncomingMessage, res: http.ServerResponse) => Promise<void> {
  const readers = new Map<number, BodyReader>();
  const readerFor = (limit: number) => readers.get(limit) ?? readers.set(limit, express.raw({ type: () => true, limit }) as BodyReader).get(limit)!;

  return async (route, params, req, res) => {
    const signed = route.signed as Signed;
    let body: Buffer;
    try {
      body = await readBody(readerFor(signed.bodyLimit), req, res);
    } catch (err) {
      if ((err as { type?: string }).type === 'entity.too.large')
        return sendError(res, 413, 'payload_too_large', `request body over ${signed.bodyLimit} bytes`);
      return sendError(res, 400, 'invalid_request', 'unreadable request body');
    }
    const request: SignedRequest = { method: req.method ?? 'GET', params, headers: headersOf(req), query: queryOf(req.url ?? ''), body };
    try {
      const answer = await signed.handle(request);
      if (typeof answer.body !== 'string') return sendJson(res, answer.status, answer.body ?? {});
      res.statusCode = answer.status;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.setHeader('Content-Length', Buffer.byteLength(answer.body));
      res.end(answer.body);
    } catch (err) {
      if (err instanceof AppError) return sendError(res, err.status, err.code, err.message);
      logger.error({ err, route: route.operationId }, 'signed route failed');
      sendError(res, 500, 'internal_error', 'Unexpected error.');
    }
  };
}
