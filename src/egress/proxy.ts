// The sandboxes' only way out: an HTTP(S) forward proxy run by the service. Connections arrive
// from a session's Unix socket (local driver: the socket says which session) or over TCP
// (Kubernetes pods: `Proxy-Authorization: Basic session:<AGENT_SERVICE_TOKEN>` says it).
//
// - `GET http://host/path` (absolute-form): forwarded with the session's header rules applied.
// - `CONNECT host:443`: a tunnel; for a host with header rules the TLS is terminated with the
//   egress CA (mitm.ts) so the headers can be added, otherwise the bytes pass untouched.
// - `/gateway/…` (origin-form, sent straight to 127.0.0.1:3128): the model gateway's handler.
// Every destination passes the session's allow-list and the outbound guard (no internal
// addresses, the checked address is the one connected to).
import http from 'node:http';
import net from 'node:net';
import { addressRefusal, guardedLookup, OutboundRefusedError, outboundErrorMessage } from '../net/outbound-guard.js';
import { verifySessionCredential } from '../gateway/session-credentials.js';
import { logger } from '../logger.js';
import { hostKey, EgressHeaderConflictError, type EgressPolicy } from './policy.js';
import { sessionPolicy } from './session-policy.js';
import { loadEgressSettings } from './settings.js';
import { handleGateway } from './gateway-route.js';
import { mitmTunnel } from './mitm.js';
import { forwardableHeaders, injectHeaders } from './headers.js';

const CONNECT_TIMEOUT_MS = 10_000;
const IDLE_TIMEOUT_MS = 10 * 60_000;

/** A refusal the proxy answers itself: status, machine code, human message. */
class ProxyRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface EgressProxy {
  /** Serves one connection; `sessionId` when the transport already identifies the session. */
  accept(socket: net.Socket, sessionId: string | null): void;
  /** Ends every connection (shutdown). */
  close(): void;
}

/** The session of a `Basic session:<token>` Proxy-Authorization header, or null. */
async function proxyCredentialSession(header: string | undefined): Promise<string | null> {
  if (!header?.startsWith('Basic ')) return null;
  const decoded = Buffer.from(header.slice(6), 'base64').toString();
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : verifySessionCredential(decoded.slice(colon + 1));
}

/** Which session a proxied request belongs to; refuses when neither transport nor credential says. */
async function sessionOf(bound: string | null, req: http.IncomingMessage): Promise<string> {
  const header = req.headers['proxy-authorization'];
  if (header === undefined) {
    if (bound) return bound;
    throw new ProxyRefusal(407, 'proxy_auth_required', 'the egress proxy needs Proxy-Authorization: Basic session:<AGENT_SERVICE_TOKEN>');
  }
  const sessionId = await proxyCredentialSession(header);
  if (!sessionId) throw new ProxyRefusal(407, 'proxy_auth_required', 'the session credential is invalid, expired or revoked');
  if (bound && sessionId !== bound) throw new ProxyRefusal(403, 'forbidden', 'the credential belongs to another session');
  return sessionId;
}

async function policyFor(sessionId: string, host: string): Promise<EgressPolicy> {
  let policy: EgressPolicy;
  try {
    policy = await sessionPolicy(sessionId);
  } catch (err) {
    if (err instanceof EgressHeaderConflictError) throw new ProxyRefusal(403, 'egress_header_conflict', err.message);
    throw err;
  }
  if (!policy.allows(host)) throw new ProxyRefusal(403, 'egress_not_allowed', `${host} is not on this session's egress allow-list`);
  return policy;
}

/** IP literals skip `lookup`, so they are checked here; names are checked by guardedLookup at connect. */
function checkLiteral(hostname: string): void {
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(bare)) {
    const why = addressRefusal(bare);
    if (why) throw new ProxyRefusal(403, 'egress_refused', `refused destination: ${why}`);
  }
}

export function connectGuarded(hostname: string, port: number): net.Socket {
  checkLiteral(hostname);
  const socket = net.connect({ host: hostname.replace(/^\[|\]$/g, ''), port, lookup: guardedLookup });
  socket.setTimeout(CONNECT_TIMEOUT_MS, () => socket.destroy(Object.assign(new Error('connect timeout'), { code: 'ETIMEDOUT' })));
  socket.once('connect', () => socket.setTimeout(IDLE_TIMEOUT_MS));
  return socket;
}

function refusalOf(err: unknown): ProxyRefusal {
  if (err instanceof ProxyRefusal) return err;
  if (err instanceof OutboundRefusedError) return new ProxyRefusal(403, 'egress_refused', `refused destination: ${err.message}`);
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ETIMEDOUT') return new ProxyRefusal(504, 'upstream_timeout', 'the destination did not answer in time');
  return new ProxyRefusal(502, 'upstream_unreachable', `the destination cannot be reached: ${outboundErrorMessage(err)}`);
}

function answer(res: http.ServerResponse, refusal: ProxyRefusal): void {
  if (res.headersSent) return void res.destroy();
  const headers: http.OutgoingHttpHeaders = { 'content-type': 'text/plain; charset=utf-8', 'x-agent-service-error': refusal.code, connection: 'close' };
  if (refusal.status === 407) headers['proxy-authenticate'] = 'Basic realm="agent-service egress"';
  res.writeHead(refusal.status, headers).end(`${refusal.message}\n`);
}

function answerRaw(socket: net.Socket, refusal: ProxyRefusal): void {
  const extra = refusal.status === 407 ? 'Proxy-Authenticate: Basic realm="agent-service egress"\r\n' : '';
  const body = `${refusal.message}\n`;
  socket.end(
    `HTTP/1.1 ${refusal.status} ${http.STATUS_CODES[refusal.status] ?? 'Error'}\r\nContent-Type: text/plain; charset=utf-8\r\nX-Agent-Service-Error: ${refusal.code}\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Forwards one absolute-form `http://` request. */
async function forward(req: http.IncomingMessage, res: http.ServerResponse, sessionId: string): Promise<void> {
  let target: URL;
  try {
    target = new URL(req.url ?? '');
  } catch {
    throw new ProxyRefusal(400, 'invalid_request', 'send absolute-form requests (GET http://host/path) or CONNECT host:port');
  }
  if (target.protocol !== 'http:') throw new ProxyRefusal(400, 'invalid_request', `${target.protocol} is not proxied in absolute form; use CONNECT for https`);
  const host = hostKey(target.hostname, target.port, 'http');
  const policy = await policyFor(sessionId, host);
  const headers = injectHeaders(
    forwardableHeaders(req.rawHeaders).filter(([n]) => n.toLowerCase() !== 'host'),
    policy.headersFor(host),
  );
  checkLiteral(target.hostname);
  await new Promise<void>((resolve, reject) => {
    const upstream = http.request({
      host: target.hostname.replace(/^\[|\]$/g, ''),
      port: Number(target.port) || 80,
      method: req.method,
      path: `${target.pathname}${target.search}`,
      headers: [['Host', target.host], ...headers].flat(),
      lookup: guardedLookup,
      timeout: CONNECT_TIMEOUT_MS,
      setHost: false,
    });
    upstream.on('timeout', () => upstream.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    upstream.on('error', (err) => (res.headersSent ? res.destroy() : reject(err)));
    upstream.on('response', (up) => {
      up.socket.setTimeout(IDLE_TIMEOUT_MS);
      res.writeHead(up.statusCode ?? 502, up.statusMessage, forwardableHeaders(up.rawHeaders).flat());
      up.pipe(res);
      up.on('end', () => resolve());
      up.on('error', () => res.destroy());
    });
    req.pipe(upstream);
  });
  logger.debug({ sessionId, method: req.method, host }, 'egress request forwarded');
}

export function createEgressProxy(): EgressProxy {
  const bound = new WeakMap<net.Socket, string>();
  const server = http.createServer({ requestTimeout: 0, headersTimeout: 30_000, keepAliveTimeout: 30_000 });

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const transportSession = bound.get(req.socket) ?? null;
    if (req.url?.startsWith('/gateway/') || req.url === '/gateway') {
      void handleGateway(req, res, transportSession);
      return;
    }
    void (async () => {
      try {
        await forward(req, res, await sessionOf(transportSession, req));
      } catch (err) {
        const refusal = refusalOf(err);
        if (refusal.status >= 500) logger.info({ err, url: req.url }, 'egress request failed');
        answer(res, refusal);
      }
    })();
  });

  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    client.on('error', () => undefined);
    void (async () => {
      const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(req.url ?? '');
      if (!m) return answerRaw(client, new ProxyRefusal(400, 'invalid_request', 'CONNECT needs host:port'));
      const hostname = m[1]!;
      const port = Number(m[2]);
      let policy: EgressPolicy;
      let sessionId: string;
      const host = hostKey(hostname, port, 'https');
      try {
        sessionId = await sessionOf(bound.get(req.socket) ?? null, req);
        policy = await policyFor(sessionId, host);
        checkLiteral(hostname);
      } catch (err) {
        return answerRaw(client, refusalOf(err));
      }
      const injected = policy.headersFor(host);
      if (injected.length && loadEgressSettings().mitm) {
        mitmTunnel({ client, head, hostname: hostname.replace(/^\[|\]$/g, ''), port, injected, sessionId });
        return;
      }
      const upstream = connectGuarded(hostname, port);
      upstream.once('error', (err) => answerRaw(client, refusalOf(err)));
      upstream.once('connect', () => {
        upstream.removeAllListeners('error');
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
        logger.debug({ sessionId, host }, 'egress tunnel opened');
      });
    })();
  });

  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });

  const sockets = new Set<net.Socket>();
  return {
    accept(socket, sessionId) {
      if (sessionId) bound.set(socket, sessionId);
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      server.emit('connection', socket);
    },
    close() {
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
  };
}
