// The HTTP entry: `/v1` goes to the REST dispatcher composed from the route table (at the
// node:http level, without Express's middleware chain: it is the hot path), everything else to
// the Express application: health, /auth, /graphql (Yoga), the web pages, the gateway and the
// OpenAPI document.
import type http from 'node:http';
import express, { type Request, type Response, type NextFunction } from 'express';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { yoga } from '../graphql/yoga.js';
import { rateLimitMiddleware } from '../ratelimit/limiter.js';
import { authRouter } from './auth-routes.js';
import { webRouter } from './web-routes.js';
import { originGuard } from './origin-guard.js';
import { graphqlSseHandler } from './graphql-sse.js';
import { sendError, sendJson, sendMiddlewareError } from '../wire/error-envelope.js';
import { gatewayMiddleware } from '../gateway/http-endpoint.js';
import { jsonBody, graphqlInputHygiene } from './input-hygiene.js';
import { graphqlIdempotency } from './graphql-idempotency.js';
import { databaseReady } from '../db/client.js';
import { redisReady } from '../redis.js';
import { config } from '../config.js';
import { bearerOf } from '../auth/viewer.js';
import { timingSafeEqual } from 'node:crypto';
import { metricsText } from '../telemetry/metrics.js';
import { instrumentRequest } from './request-telemetry.js';

export { BODY_LIMIT } from '../wire/error-envelope.js';

export interface AppOptions {
  limiter: RateLimiterAbstract;
  /** The REST surface's OpenAPI document, composed at start-up from the route table (rest/). */
  openapi: Record<string, unknown>;
}

/** Serves one `/v1` request (the REST dispatcher; rest/router.ts). */
export type RestDispatch = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** The request path without query or fragment (as Express's parseurl reads it). */
function pathnameOf(url: string): string {
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 0x3f /* ? */ || c === 0x23 /* # */) return url.slice(0, i);
  }
  return url;
}

// What Express keeps under /v1: the OpenAPI document (every method: GET and HEAD read it, others
// answer 405 as every other /v1 path does). Case-insensitive, with an optional trailing slash, as
// Express matches its mounts. (The platforms' inbound endpoint is a signed route of the table.)
const OPENAPI_PATH = /^\/v1\/openapi\.json\/?$/i;

/** Whether a request goes to the REST dispatcher: its path is `/v1` or under it (any case). */
export function isRestRequest(method: string | undefined, url: string): boolean {
  if (url.charCodeAt(0) !== 0x2f || (url.charCodeAt(1) | 0x20) !== 0x76 /* v */ || url.charCodeAt(2) !== 0x31 /* 1 */) return false;
  const path = pathnameOf(url);
  if (path.length > 3 && path.charCodeAt(3) !== 0x2f) return false;
  return !OPENAPI_PATH.test(path);
}

/**
 * The server's request listener: `/v1` to the REST dispatcher, the rest to Express; every request
 * gets its request id, span and metrics first (src/http/request-telemetry.ts).
 */
export function requestListener(app: express.Express, rest: RestDispatch): http.RequestListener {
  return (req, res) => instrumentRequest(req, res, () => (isRestRequest(req.method, req.url ?? '') ? rest(req, res) : app(req, res)));
}

/** Whether `header` carries exactly the bearer `token` (compared in constant time). */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(bearerOf(header) ?? '');
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/**
 * `GET /metrics`: the Prometheus text of this process (src/telemetry/metrics.ts), for a scraper
 * holding METRICS_TOKEN as its bearer; without METRICS_TOKEN the endpoint does not exist (404).
 */
async function serveMetrics(req: Request, res: Response): Promise<void> {
  const token = config().metricsToken;
  if (!token) return sendError(res, 404, 'not_found', 'metrics are off: set METRICS_TOKEN to serve GET /metrics');
  if (!bearerMatches(req.headers.authorization, token)) {
    res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
    return sendError(res, 401, 'invalid_token', 'GET /metrics needs the METRICS_TOKEN bearer token');
  }
  const { contentType, body } = await metricsText();
  res.status(200).setHeader('content-type', contentType).setHeader('cache-control', 'no-store').end(body);
}

export function createApp(opts: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  const { openapi } = opts;
  const limit = rateLimitMiddleware(opts.limiter);

  app.get('/healthz', (_req, res) => void res.json({ ok: true }));
  app.get('/metrics', (req, res, next) => void serveMetrics(req, res).catch(next));
  app.get('/readyz', async (_req, res) => {
    const [db, redis] = await Promise.all([databaseReady(), redisReady()]);
    res.status(db && redis ? 200 : 503).json({ ok: db && redis, database: db, redis });
  });

  // Cookie-authenticated changes only from our own pages (CSRF); the dashboard, GraphiQL, assets.
  app.use(originGuard);
  app.use(webRouter());

  app.use('/auth', limit, jsonBody(16 * 1024, { forms: true }), authRouter());

  const sse = graphqlSseHandler();
  app.use('/graphql/stream', limit, jsonBody(), (req, res) => sse(req, res));
  app.use('/graphql', limit, graphqlInputHygiene(), graphqlIdempotency(), (req, res) => yoga(req, res, { req, res }));

  // The model gateway for sandboxed CLIs (session credential, provider wire formats, raw bodies).
  app.use('/gateway', gatewayMiddleware);
  app.get('/v1/openapi.json', (_req, res) => sendJson(res, 200, openapi));
  app.all('/v1/openapi.json', (_req, res) => {
    res.setHeader('Allow', 'GET');
    sendError(res, 405, 'method_not_allowed', 'method not allowed; use GET');
  });
  // Every other /v1 request is served by the REST dispatcher (requestListener).

  app.use((req: Request, res: Response) => sendError(res, 404, 'not_found', `no route for ${req.method} ${req.path}`));

  // Body parser and other middleware errors, in the envelope.
  app.use((err: Error & { type?: string; status?: number }, _req: Request, res: Response, _next: NextFunction) => sendMiddlewareError(err, res));
  return app;
}
