// `POST|GET /v1/channels/inbound/{app_id}`: what a platform calls. Mounted ahead of the /v1
// body parsing because the signature covers the exact bytes; no bearer token (the platform's
// own signature scheme authenticates it) and no per-token rate limit. A bad or missing
// signature answers 401 invalid_token and records nothing.
import express, { type Request, type Response, type Router } from 'express';
import { logger } from '../logger.js';
import { sendError } from '../wire/error-envelope.js';
import { inboundApp } from './apps.js';
import { applyNotice } from './connections.js';
import { adapterFor } from './platforms/index.js';
import { recordInbound } from './inbound.js';
import type { InboundRequest } from './platforms/types.js';

export const INBOUND_BODY_LIMIT = 1024 * 1024;

function inboundRequest(req: Request): InboundRequest {
  const headers: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = Array.isArray(v) ? v[0] : v;
  const query: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.query)) if (typeof v === 'string') query[k] = v;
  return { method: req.method === 'GET' ? 'GET' : 'POST', headers, query, rawBody: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0) };
}

export async function handlePlatformInbound(req: Request, res: Response): Promise<void> {
  const appId = String(req.params.app_id ?? '');
  const found = /^chapp_[0-9a-z]{26}$/.test(appId) ? await inboundApp(appId) : null;
  const adapter = found ? adapterFor(found.row.platform) : null;
  if (!found || !adapter) return sendError(res, 404, 'not_found', 'channel app not found');
  const { row: app, record } = found;
  const request = inboundRequest(req);
  if (!adapter.verify(record, request)) return sendError(res, 401, 'invalid_token', `the request does not carry a valid ${app.platform} signature`);
  let result;
  try {
    result = adapter.parse(record, request);
  } catch {
    return sendError(res, 400, 'invalid_request', `the ${app.platform} payload could not be read`);
  }
  for (const notice of result.notices) await applyNotice(app, notice);
  await recordInbound(app.universeId, { appId: app.id }, result.messages);
  if (typeof result.body === 'string') res.status(result.status).type('text/plain').send(result.body);
  else res.status(result.status).json(result.body ?? {});
}

export function channelInboundRouter(): Router {
  const router = express.Router();
  router.use(express.raw({ type: () => true, limit: INBOUND_BODY_LIMIT }));
  const handle = (req: Request, res: Response) => {
    handlePlatformInbound(req, res).catch((err) => {
      logger.error({ err }, 'platform inbound failed');
      sendError(res, 500, 'internal_error', 'Unexpected error.');
    });
  };
  router.post('/:app_id', handle);
  router.get('/:app_id', handle);
  router.all('/:app_id', (_req, res) => {
    res.set('Allow', 'GET, POST');
    sendError(res, 405, 'method_not_allowed', 'method not allowed; use POST (GET for verification handshakes)');
  });
  router.use((err: Error & { type?: string }, _req: Request, res: Response, _next: express.NextFunction) => {
    if (err.type === 'entity.too.large') return sendError(res, 413, 'payload_too_large', `request body over ${INBOUND_BODY_LIMIT} bytes`);
    sendError(res, 400, 'invalid_request', 'unreadable request body');
  });
  return router;
}
