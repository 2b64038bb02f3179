// The Express application: health, /auth, /graphql (Yoga), /v1 (REST over the same GraphQL core).
import express, { type Request, type Response, type NextFunction } from 'express';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { yoga } from '../graphql/yoga.js';
import { rateLimitMiddleware } from '../ratelimit/limiter.js';
import { authRouter } from './auth-routes.js';
import { webRouter } from './web-routes.js';
import { originGuard } from './origin-guard.js';
import { graphqlSseHandler } from './graphql-sse.js';
import { sendError } from './error-envelope.js';
import { channelInboundRouter } from '../channels/inbound-http.js';
import { gatewayMiddleware } from '../gateway/http-endpoint.js';
import { inputHygiene, jsonBody, graphqlInputHygiene, type EdgeRoute } from './input-hygiene.js';
import { databaseReady } from '../db/client.js';
import { redisReady } from '../redis.js';
import { logger } from '../logger.js';

export const BODY_LIMIT = '1mb';

export interface AppOptions {
  limiter: RateLimiterAbstract;
  /** The REST surface, composed at start-up from the route table (rest/). */
  rest: {
    routes: EdgeRoute[];
    router: express.Router;
    openapi: Record<string, unknown>;
  };
}

export function createApp(opts: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  const { routes, router, openapi } = opts.rest;
  const limit = rateLimitMiddleware(opts.limiter);

  app.get('/healthz', (_req, res) => void res.json({ ok: true }));
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
  app.use('/graphql', limit, graphqlInputHygiene(), (req, res) => yoga(req, res, { req, res }));

  // The model gateway for sandboxed CLIs (session credential, provider wire formats, raw bodies).
  app.use('/gateway', gatewayMiddleware);
  app.get('/v1/openapi.json', (_req, res) => void res.json(openapi));
  // Platforms sign the exact bytes they send and carry no token: their inbound endpoint reads
  // its own raw body, ahead of /v1's parsing and per-token rate limit.
  app.use('/v1/channels/inbound', channelInboundRouter());
  // Query, path ids and JSON bodies are checked once at the edge (src/http/input-hygiene.ts).
  app.use('/v1', limit, inputHygiene(routes), router);

  app.use((req: Request, res: Response) => sendError(res, 404, 'not_found', `no route for ${req.method} ${req.path}`));

  // Body parser and other middleware errors, in the envelope.
  app.use((err: Error & { type?: string; status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    if (err.type === 'entity.parse.failed') return sendError(res, 400, 'invalid_request', 'malformed JSON body');
    if (err.type === 'entity.too.large') return sendError(res, 413, 'payload_too_large', `request body over ${BODY_LIMIT}`);
    if (err.type === 'encoding.unsupported' || err.type === 'charset.unsupported') return sendError(res, 415, 'unsupported_media_type', err.message);
    if (err.status && err.status >= 400 && err.status < 500) return sendError(res, err.status, 'invalid_request', err.message);
    logger.error({ err }, 'unhandled error');
    sendError(res, 500, 'internal_error', 'Unexpected error.');
  });
  return app;
}
