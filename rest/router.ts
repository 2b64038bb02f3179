// Builds the /v1 Express router from the route table: auth pre-check, input validation with the
// route's zod schemas, then the route's GraphQL document through the shared executor.
import express, { type Request, type Response, type NextFunction, type Router } from 'express';
import type { GraphQLError } from 'graphql';
import type { GraphQLData, RestRoute, StreamEvent } from './route.js';
import { envelopeFor, runRoute, toRestError } from './executor.js';
import { AppError } from '../src/errors.js';
import { describeIssues } from '../src/validation.js';
import { sendError } from '../src/http/error-envelope.js';
import { claimKey, requestHash, storeAnswer } from './idempotency.js';
import { logger } from '../src/logger.js';
import { STREAM_SHUTDOWN_FRAME, trackStream } from '../src/http/open-streams.js';
import type { Context } from '../src/graphql/context.js';

/** `/agents/{id}` → `/agents/:id` */
export function expressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

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

/** Serves a feed as server-sent events: `id:`, `event:`, `data:` frames and pings. */
async function serveStream(iterator: AsyncIterator<StreamEvent>, req: Request, res: Response) {
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
  res.on('close', trackStream(() => {
    if (!closed) res.write(STREAM_SHUTDOWN_FRAME);
    stop();
  }));
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done || closed) break;
      const event = next.value;
      res.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${serialized(event)}\n\n`);
    }
  } finally {
    stop();
    res.end();
  }
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

export const STREAM_PING_MS = Number(process.env.STREAM_PING_MS || 15_000);

function handlerFor(route: RestRoute) {
  return async (req: Request, res: Response) => {
    let idemKey: string | null = null;
    try {
      const env = envelopeFor(req, res);
      const ctx = await env.contextFactory();
      checkAccess(route, ctx);
      if (route.raw) return await route.raw(req, res, ctx);
      const query = validate(route.query, req.query, 'query');
      const body = route.body ? validate(route.body, req.body ?? {}, 'body') : undefined;
      const params = Object.fromEntries(Object.entries(req.params).map(([k, v]) => [k, String(v)]));

      const header = req.get('idempotency-key');
      if (route.idempotent && header) {
        if (header.length > 255) throw new AppError('invalid_request', 'Idempotency-Key is longer than 255 characters');
        const who = ctx.viewer?.tokenId ?? ctx.viewer?.user.id ?? 'anonymous';
        idemKey = `${who}:${ctx.viewer?.universe.id}:${route.method} ${req.path}:${header}`;
        const replay = await claimKey(idemKey, requestHash(route.method, req.path, req.body));
        if (replay) {
          idemKey = null;
          res.set('Idempotent-Replayed', 'true').status(replay.status).json(replay.body);
          return;
        }
      }

      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
      // The body was validated here, once: the resolver takes this value instead of parsing again.
      if (route.body) ctx.validated = { schema: route.body, value: body };
      if (route.feed) return await serveStream(await route.feed(ctx, { params, query, body, headers }), req, res);
      const variables = route.variables ? route.variables({ params, query, body, headers }) : {};
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
      res.status(status).json(payload);
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
  };
}

export function buildRestRouter(routes: RestRoute[], extra?: (router: Router) => void): Router {
  const router = express.Router({ caseSensitive: true, strict: false });
  extra?.(router);
  const methodsByPath = new Map<string, Set<string>>();
  for (const route of routes) {
    const p = expressPath(route.path);
    router[route.method.toLowerCase() as 'get'](p, handlerFor(route));
    if (!methodsByPath.has(p)) methodsByPath.set(p, new Set());
    methodsByPath.get(p)!.add(route.method);
  }
  // A known path with a wrong method answers 405 with Allow; anything else 404.
  for (const [p, methods] of methodsByPath) {
    router.all(p, (_req: Request, res: Response) => {
      res.set('Allow', [...methods].join(', '));
      sendError(res, 405, 'method_not_allowed', `method not allowed; use ${[...methods].join(', ')}`);
    });
  }
  router.use((req: Request, res: Response, _next: NextFunction) => {
    sendError(res, 404, 'not_found', `no route for ${req.method} ${req.baseUrl}${req.path}`);
  });
  return router;
}
