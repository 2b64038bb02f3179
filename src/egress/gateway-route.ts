// `/gateway/…` on the sandbox's egress endpoint (127.0.0.1:3128 inside the sandbox) belongs to
// the model gateway. Its handler lives in src/gateway/http-endpoint.ts (the engines' work):
//
//   export function handleGatewayRequest(req: IncomingMessage, res: ServerResponse,
//     ctx: { sessionId: string | null; path: string }): void | Promise<void>
//
// `sessionId` is set when the transport identifies the session (its Unix socket); `path` is
// the part after `/gateway` (`/anthropic/v1/messages`). The handler authenticates the
// AGENT_SERVICE_TOKEN the CLI sends as its API key. Until that module exists the prefix
// answers 503 in the spec's error envelope.
import type http from 'node:http';
import { logger } from '../logger.js';

export type GatewayHandler = (req: http.IncomingMessage, res: http.ServerResponse, ctx: { sessionId: string | null; path: string }) => void | Promise<void>;

// A variable specifier: the module is optional, so neither tsc nor the bundler may require it.
const ENDPOINT_MODULE = '../gateway/http-endpoint.js';
let loaded: Promise<GatewayHandler | null> | undefined;

function loadHandler(): Promise<GatewayHandler | null> {
  loaded ??= import(ENDPOINT_MODULE).then(
    (mod: Record<string, unknown>) => (typeof mod.handleGatewayRequest === 'function' ? (mod.handleGatewayRequest as GatewayHandler) : null),
    (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ERR_MODULE_NOT_FOUND') logger.error({ err }, 'the model gateway endpoint failed to load');
      loaded = undefined; // it may land later (development): look again next time
      return null;
    },
  );
  return loaded;
}

/** Replaces the handler (tests). */
export function setGatewayHandler(handler: GatewayHandler | null): void {
  loaded = Promise.resolve(handler);
}

export async function handleGateway(req: http.IncomingMessage, res: http.ServerResponse, sessionId: string | null): Promise<void> {
  const handler = await loadHandler();
  const path = (req.url ?? '').slice('/gateway'.length) || '/';
  if (!handler) {
    const body = JSON.stringify({ error: { code: 'gateway_unavailable', message: 'the model gateway endpoint for sandboxes is not installed on this service yet (src/gateway/http-endpoint.ts)' } });
    res.writeHead(503, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    return;
  }
  try {
    await handler(req, res, { sessionId, path });
  } catch (err) {
    logger.error({ err, path }, 'model gateway request failed');
    if (!res.headersSent) {
      const body = JSON.stringify({ error: { code: 'internal_error', message: 'the model gateway failed' } });
      res.writeHead(500, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    } else res.destroy();
  }
}
