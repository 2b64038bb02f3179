// `/gateway/…` on the sandbox's egress endpoint (127.0.0.1:3128 inside the sandbox) belongs to
// the model gateway. Its handler (src/gateway/http-endpoint.ts, handleGatewayRequest) is a
// composed service, so the egress proxy does not import the gateway:
//
//   handler(req, res, ctx: { sessionId: string | null; path: string }): void | Promise<void>
//
// `sessionId` is set when the transport identifies the session (its Unix socket); `path` is
// the part after `/gateway` (`/anthropic/v1/messages`). The handler authenticates the
// AGENT_SERVICE_TOKEN the CLI sends as its API key.
import type http from 'node:http';
import { logger } from '../logger.js';
import { service } from '../services/registry.js';

export type GatewayHandler = (req: http.IncomingMessage, res: http.ServerResponse, ctx: { sessionId: string | null; path: string }) => void | Promise<void>;

declare module '../services/registry.js' {
  interface Services {
    gatewayHandler: GatewayHandler;
  }
}

export async function handleGateway(req: http.IncomingMessage, res: http.ServerResponse, sessionId: string | null): Promise<void> {
  const path = (req.url ?? '').slice('/gateway'.length) || '/';
  try {
    await service('gatewayHandler')(req, res, { sessionId, path });
  } catch (err) {
    logger.error({ err, path }, 'model gateway request failed');
    if (!res.headersSent) {
      const body = JSON.stringify({ error: { code: 'internal_error', message: 'the model gateway failed' } });
      res.writeHead(500, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    } else res.destroy();
  }
}
