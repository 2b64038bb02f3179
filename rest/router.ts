// The /v1 dispatcher, at the node:http level: the route table compiled into one matcher, and per
// request the same steps Express's middleware chain ran before (origin guard, rate limit, input
// hygiene, route, auth and scope, input validation, idempotency, the route's GraphQL document
// through the shared executor) without walking that chain, and JSON answers written directly
// (no per-request ETag hash). Signed routes (a platform's inbound call: no token, its exact bytes)
// are served from the same table ahead of the rate limit (signed-route.ts). A GET or HEAD with a
// token and a plain URL (the hot reads) stays on node:http's own request and response; every other
// request, and raw routes (uploads, downloads, pages), get Express's prototypes as Express gives
// them, so they keep its API.
import { settings } from '../src/config.js';
import type http from 'node:http';
import { performance } from 'node:perf_hooks';
import type express from 'express';
import type { Request, Response } from 'express';
import type { GraphQLError } from 'graphql';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { GraphQLData, RestRoute, StreamEvent } from './route.js';
import { compileRoutes, ParamDecodeError, type MatchResult } from './route-matcher.js';
import { signedRouteServer } from './signed-route.js';
import { envelopeFor, runRoute, toRestError } from './executor.js';
import { AppError } from '../src/errors.js';
import { describeIssues } from '../src/validation.js';
import { sendError, sendJson, sendMiddlewareError } from '../src/wire/error-envelope.js';
import { originGuard } from '../src/http/origin-guard.js';
import { inputHygiene, pathParamProblem, refusedInput } from '../src/http/input-hygiene.js';
import { consumeRateLimit, limitKey, rateCounter } from '../src/ratelimit/limiter.js';
import { bearerOf } from '../src/auth/viewer.js';
import { hashToken } from '../src/auth/tokens.js';
import { idempotencyKey } from './idempotency.js';
import { claimKey, requestHash, storeAnswer } from '../src/http/idempotency-store.js';
import { logger } from '../src/logger.js';
import { STREAM_SHUTDOWN_FRAME, STREAM_SLOW_FRAME, trackStream } from '../src/http/open-streams.js';
import { parseQuery, plainUrl } from '../src/http/plain-url.js';
import { setRouteTemplate } from '../src/http/request-telemetry.js';
import type { Context } from '../src/graphql/context.js';

function checkAccess(route: RestRoute, ctx: Context): void {
  if (route.scope === null) return;
  if (!ctx.viewer) throw new AppError('invalid_token', 'missing, unknown, revoked or expired token');
  if (!ctx.viewer.scopes.includes(route.scope)) throw new AppError('insufficient_scope', `this operation needs the ${route.scope} scope`);
}

function validate<T>(schema: import('zod').ZodType<T> | undefined, value: unknown, what: string): T {
  if (!schema) return value as T;
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new AppError('invalid_request', describeIssues(parsed.error.issues, what));
  }
  return parsed.data;
}

export const STREAM_PING_MS = settings.streamPingMs();

/**
 * Serves a feed as server-sent events: `id:`, `event:`, `data:` frames and pings. Backpressure:
 * what the client has not taken collects in the response's buffer; past STREAM_BUFFER_BYTES the
 * stream writes nothing more until the client takes it (a replay reads the store only as it is
 * written out; live events wait in this stream's own queue, never in another's). A client that
 * keeps taking bytes is waited for, however large a frame; one that takes nothing for
 * STREAM_SLOW_CUT_MS gets a reconnect hint (STREAM_SLOW_FRAME), the connection cut if that is not
 * read either: memory per stream stays bounded, and the client resumes with Last-Event-ID.
 */
async function serveStream(iterator: AsyncIterator<StreamEvent>, req: Request, res: Response) {
  const bufferLimit = settings.streamBufferBytes();
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.write(': stream open\n\n');
  const ping = setInterval(() => res.write(': ping\n\n'), STREAM_PING_MS);
  let closed = false;
  const stop = () => {
    if (closed) return;
    closed = true;
    clearInterval(ping);
    void iterator.return?.();
  };
  req.on('close', stop);
  res.on('close', stop);
  // At shutdown: a last comment tells the client to reconnect (with Last-Event-ID), then the end.
  res.on(
    'close',
    trackStream(() => {
      if (!closed) res.write(STREAM_SHUTDOWN_FRAME);
      stop();
    }),
  );
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done || closed) break;
      if (res.writableLength > bufferLimit && !(await caughtUp(res, bufferLimit, settings.streamSlowCutMs()))) {
        slowClient(res);
        break;
      }
      const event = next.value;
      res.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${serialized(event)}\n\n`);
    }
  } finally {
    stop();
    res.end();
  }
}

/**
 * Whether the client takes the response's buffer down to `limit` (false: the connection closed, or
 * the client took nothing for `windowMs`). Progress is counted in what the socket hands the kernel:
 * a large frame leaves libuv's write queue piece by piece while the response's own count drops
 * only when a whole write ends, so a slow reader of a multi-megabyte event (a client on a poor
 * link, an image in a message) is not taken for one that stopped; it would be cut at that event
 * again on every reconnect.
 */
function caughtUp(res: Response, limit: number, windowMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    let length = res.writableLength;
    let queued = writeQueue(res);
    let progressAt = performance.now();
    const done = (ok: boolean) => {
      clearInterval(poll);
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    const poll = setInterval(
      () => {
        if (res.writableLength <= limit) return done(true);
        // Taken: a write ended (the response's count fell), or the write in flight moved on.
        const taken = res.writableLength < length || (res.writableLength === length && writeQueue(res) < queued);
        length = res.writableLength;
        queued = writeQueue(res);
        if (taken) progressAt = performance.now();
        else if (performance.now() - progressAt >= windowMs) done(false);
      },
      Math.max(10, Math.min(250, windowMs / 4)),
    );
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

/** Bytes of the write in flight that the kernel has not taken yet (libuv's write queue; 0 where it cannot be seen). */
function writeQueue(res: Response): number {
  const handle = (res.socket as unknown as { _handle?: { writeQueueSize?: unknown } } | null)?._handle;
  return typeof handle?.writeQueueSize === 'number' ? handle.writeQueueSize : 0;
}

/** A client that stopped reading: the hint after what it has not read yet, then the end; the connection is cut if that never drains. */
function slowClient(res: Response): void {
  logger.info({ buffered: res.writableLength }, 'closing an event stream whose client reads too slowly');
  res.write(STREAM_SLOW_FRAME);
  const cut = setTimeout(() => res.destroy(), settings.streamSlowCutMs());
  cut.unref();
  res.once('close', () => clearTimeout(cut));
  res.once('finish', () => clearTimeout(cut));
}

// Every subscriber of a session receives the same event object from the hub: serialise it once.
const serializedCache = new WeakMap<object, string>();
function serialized(payload: object): string {
  let text = serializedCache.get(payload);
  if (text === undefined) {
    text = JSON.stringify(payload);
    serializedCache.set(payload, text);
  }
  return text;
}

/**
 * One matched request: auth, validation, idempotency, then the document, the feed or the raw
 * handler. `bearerHash`: the bearer's SHA-256, computed once for the rate limit and the token.
 */
async function serveRoute(route: RestRoute, req: Request, res: Response, bearerHash: string | null): Promise<void> {
  let idemKey: string | null = null;
  try {
    const env = envelopeFor(req, res, bearerHash);
    const ctx = await env.contextFactory();
    checkAccess(route, ctx);
    // What the edge refused (a path id that cannot name anything, a query or body that cannot be
    // read): answered after the token and its scope (a missing token is 401 whatever else is wrong).
    const refused = refusedInput(req);
    if (refused) return sendError(res, refused.status, refused.code, refused.message);
    if (route.raw) return await route.raw(req, res, ctx);
    const url = plainUrl(req.url);
    // A route that declares query parameters refuses others; one that declares none ignores a query string.
    const query = validate(route.query, url ? parseQuery(url.query) : req.query, 'query');
    // No body at all reads as `{}`; a JSON `null` body is a body, and not an object (400).
    const body = route.body ? validate(route.body, req.body === undefined ? {} : req.body, 'body') : undefined;
    const params = req.params as Record<string, string>;

    const header = req.headers['idempotency-key'];
    if (route.idempotent && header) {
      const path = url?.path ?? req.path;
      idemKey = idempotencyKey(ctx, route.method, path, String(header));
      const replay = await claimKey(idemKey, requestHash(route.method, path, req.body));
      if (replay) {
        idemKey = null;
        res.setHeader('Idempotent-Replayed', 'true');
        return sendJson(res, replay.status, replay.body);
      }
    }

    // The headers as one value each, built only for a route that reads them.
    let headers: Record<string, string | undefined> | undefined;
    const input = {
      params,
      query,
      body,
      get headers() {
        return (headers ??= Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v])));
      },
    };
    // The body was validated here, once: the resolver takes this value instead of parsing again.
    if (route.body) ctx.validated = { schema: route.body, value: body };
    if (route.feed) return await serveStream(await route.feed(ctx, input), req, res);
    const variables = route.variables ? route.variables(input) : {};
    const result = await runRoute(env, ctx, route, variables);
    if (result.errors?.length) {
      const err = toRestError(result.errors[0] as GraphQLError);
      if (err.status >= 500 && err.code !== 'coming_soon') logger.error({ errors: result.errors, route: route.operationId }, 'REST route failed');
      if (idemKey) await storeAnswer(idemKey, { status: err.status, body: null });
      return sendError(res, err.status, err.code, err.message);
    }
    const status = route.status ?? 200;
    const payload = route.result!((result.data ?? {}) as GraphQLData);
    if (idemKey) await storeAnswer(idemKey, { status, body: payload });
    sendJson(res, status, payload);
  } catch (err) {
    if (idemKey) await storeAnswer(idemKey, { status: 500, body: null }).catch(() => undefined);
    if (err instanceof AppError) return sendError(res, err.status, err.code, err.message);
    const gql = err as GraphQLError;
    if (gql?.extensions?.code) {
      const e = toRestError(gql);
      return sendError(res, e.status, e.code, e.message);
    }
    logger.error({ err, route: route.operationId }, 'unexpected error in REST route');
    sendError(res, 500, 'internal_error', 'Unexpected error.');
  }
}

export interface RestDispatchOptions {
  /** The Express application whose request/response prototypes /v1 requests get. */
  app: express.Express;
  limiter: RateLimiterAbstract;
}

/**
 * The `/v1` dispatcher for the server's request listener (src/http/app.ts routes `/v1` here).
 * Steps, in Express's former order: origin guard → (a signed route answers here) → rate limit →
 * input hygiene → route.
 */
export function buildRestDispatch(routes: RestRoute[], opts: RestDispatchOptions): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const match = compileRoutes(routes);
  const hygiene = inputHygiene(routes);
  const { app } = opts;
  const counter = rateCounter(opts.limiter);
  // Signed routes (platforms' inbound calls) are looked up before the rate limit: see signed-route.ts.
  const matchSigned = compileRoutes(routes.filter((r) => r.signed));
  const serveSigned = signedRouteServer();

  /** Serves the request when its path is a signed route's (true), else leaves it to the steps. */
  const signed = (req: Request, res: Response): boolean => {
    let found: MatchResult;
    try {
      found = matchSigned(req.method, plainUrl(req.url)?.path ?? req.path);
    } catch (err) {
      if (!(err instanceof ParamDecodeError)) throw err;
      sendMiddlewareError(err, res);
      return true;
    }
    if (found.kind === 'not_found') return false;
    if (found.kind === 'method_not_allowed') {
      res.setHeader('Allow', found.allow);
      sendError(res, 405, 'method_not_allowed', `method not allowed; use ${found.allow}`);
      return true;
    }
    setRouteTemplate(res, `/v1${found.route.path}`);
    serveSigned(found.route, found.params, req, res).catch((err: Error) => sendMiddlewareError(err, res));
    return true;
  };

  const route = (req: Request, res: Response, bearerHash: string | null) => {
    const path = plainUrl(req.url)?.path ?? req.path;
    let found;
    try {
      found = match(req.method, path, pathParamProblem(req) !== undefined);
    } catch (err) {
      if (err instanceof ParamDecodeError) return sendMiddlewareError(err, res);
      throw err;
    }
    if (found.kind === 'route') {
      setRouteTemplate(res, `/v1${found.route.path}`);
      req.params = found.params;
      if (found.route.raw) withExpress(app, req, res); // uploads, downloads, pages use Express's API
      return void serveRoute(found.route, req, res, bearerHash).catch((err: Error) => sendMiddlewareError(err, res));
    }
    if (found.kind === 'method_not_allowed') {
      res.setHeader('Allow', found.allow);
      return sendError(res, 405, 'method_not_allowed', `method not allowed; use ${found.allow}`);
    }
    sendError(res, 404, 'not_found', `no route for ${req.method} ${req.baseUrl}${path}`);
  };

  return (nodeReq, nodeRes) => {
    const req = nodeReq as Request;
    const res = nodeRes as Response;
    stripMount(req);
    // One SHA-256 of the bearer per request: the rate-limit key and the token lookup share it.
    const bearer = bearerOf(req.headers.authorization);
    const bearerHash = bearer ? hashToken(bearer) : null;
    // A GET or HEAD with a token and a plain URL is served on the node:http objects (the steps
    // read only their own fields, plainUrl and the headers); everything else, and raw routes,
    // get Express's request/response prototypes first (body types, client address, origins).
    if (!(bearerHash && (req.method === 'GET' || req.method === 'HEAD') && plainUrl(req.url))) withExpress(app, req, res);
    let guarded = false;
    originGuard(req, res, () => (guarded = true));
    if (!guarded || signed(req, res)) return;
    consumeRateLimit(counter, limitKey(req, bearerHash), res).then(
      (ok) => {
        if (!ok) return;
        hygiene(req, res, (err?: unknown) => (err ? sendMiddlewareError(err as Error, res) : route(req, res, bearerHash)));
      },
      (err: Error) => sendMiddlewareError(err, res),
    );
  };
}

/** Strips the mount as Express's router does: `originalUrl` as sent, `baseUrl` `/v1` (as sent), `url` the rest. */
function stripMount(req: Request): void {
  const url = req.url;
  req.originalUrl = url;
  req.baseUrl = url.slice(0, 3);
  const rest = url.slice(3);
  req.url = rest.charCodeAt(0) === 0x2f ? rest : `/${rest}`;
}

/**
 * Gives a /v1 request Express's request/response API, as Express's own `app.handle` does (once).
 * Measured (bench/edge-swap.ts, the edge alone, 4 alternating rounds on a loaded 2-core machine):
 * a token-carrying GET costs ≈ 29 µs of server CPU on node:http's objects and ≈ 74–84 µs with
 * these prototypes (≈ 14,500 vs ≈ 5,800 req/s): so the hot GETs never get them. Every other
 * request keeps them because its steps and the raw routes read Express's API (req.ip and
 * req.protocol under 'trust proxy', req.is, req.accepts, res.redirect and res.send on the
 * connect page, uploads and downloads); those requests read a body or a stream and write the
 * database, where the swap's ≈ 50 µs is a small part.
 */
function withExpress(app: express.Express, req: Request, res: Response): void {
  if (Object.getPrototypeOf(req) === app.request) return;
  req.res = res;
  res.req = req;
  Object.setPrototypeOf(req, app.request);
  Object.setPrototypeOf(res, app.response);
  if (!res.locals) res.locals = Object.create(null);
}
