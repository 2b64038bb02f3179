// TLS termination for hosts that have header rules: the CONNECT tunnel is answered with a
// certificate for the host signed by the egress CA (which only sandboxes trust), each request
// inside it is forwarded to the real host over verified TLS with the session's headers set.
// The headers are looked up per request, so a rotated token applies from the next request,
// even on a kept-alive connection.
import { settings } from '../config.js';
import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';
import tls from 'node:tls';
import type net from 'node:net';
import { guardedLookup, outboundErrorMessage } from '../net/outbound-guard.js';
import { logger } from '../logger.js';
import { egressCa } from './ca.js';
import { hostKey } from './policy.js';
import { sessionPolicy } from './session-policy.js';
import { forwardableHeaders, injectHeaders } from './headers.js';

interface Target {
  hostname: string;
  port: number;
  sessionId: string;
}

const targets = new WeakMap<net.Socket, Target>();
let server: http.Server | undefined;
let upstreamCa: { file: string; ca: string[] } | undefined;

/** Trust for the real hosts: the system's roots, plus EGRESS_UPSTREAM_CA_FILE (a private CA, tests). */
function upstreamTrust(): string[] | undefined {
  const file = settings.egressUpstreamCaFile();
  if (!file) return undefined;
  // Read once per file: a process that starts servers one after another (a test worker) may name another.
  if (upstreamCa?.file !== file) upstreamCa = { file, ca: [...tls.rootCertificates, fs.readFileSync(file, 'utf8')] };
  return upstreamCa.ca;
}

function fail(res: http.ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'x-agent-service-error': code, connection: 'close' }).end(`${message}\n`);
}

async function forwardTls(req: http.IncomingMessage, res: http.ServerResponse, target: Target): Promise<void> {
  const host = hostKey(target.hostname, target.port, 'https');
  let injected: [string, string][];
  try {
    const policy = await sessionPolicy(target.sessionId);
    if (!policy.allows(host)) return fail(res, 403, 'egress_not_allowed', `${host} is not on this session's egress allow-list`);
    injected = policy.headersFor(host);
  } catch (err) {
    return fail(res, 403, 'egress_header_conflict', (err as Error).message);
  }
  const headers = injectHeaders(
    forwardableHeaders(req.rawHeaders).filter(([n]) => n.toLowerCase() !== 'host'),
    injected,
  );
  const authority = target.port === 443 ? target.hostname : `${target.hostname}:${target.port}`;
  const upstream = https.request({
    host: target.hostname,
    port: target.port,
    servername: /^[\d.]+$|:/.test(target.hostname) ? undefined : target.hostname,
    method: req.method,
    path: req.url,
    headers: [['Host', authority], ...headers].flat(),
    lookup: guardedLookup,
    ca: upstreamTrust(),
    setHost: false,
    timeout: 10_000,
  });
  upstream.on('timeout', () => upstream.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
  upstream.on('error', (err) => fail(res, 502, 'upstream_unreachable', `the destination cannot be reached: ${outboundErrorMessage(err)}`));
  upstream.on('response', (up) => {
    up.socket.setTimeout(600_000);
    res.writeHead(up.statusCode ?? 502, up.statusMessage, forwardableHeaders(up.rawHeaders).flat());
    up.pipe(res);
    up.on('error', () => res.destroy());
  });
  req.pipe(upstream);
}

function mitmServer(): http.Server {
  if (server) return server;
  server = http.createServer({ requestTimeout: 0 });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const target = targets.get(req.socket);
    if (!target) return fail(res, 500, 'internal_error', 'lost the tunnel target');
    void forwardTls(req, res, target).catch((err) => {
      logger.warn({ err }, 'egress TLS forward failed');
      fail(res, 502, 'upstream_unreachable', 'the destination cannot be reached');
    });
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  return server;
}

export function mitmTunnel(opts: { client: net.Socket; head: Buffer; hostname: string; port: number; injected: [string, string][]; sessionId: string }): void {
  const { cert, key } = egressCa().leaf(opts.hostname);
  opts.client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  if (opts.head.length) opts.client.unshift(opts.head);
  const secure = new tls.TLSSocket(opts.client, { isServer: true, cert, key, ALPNProtocols: ['http/1.1'] });
  secure.on('error', () => opts.client.destroy());
  targets.set(secure, { hostname: opts.hostname, port: opts.port, sessionId: opts.sessionId });
  mitmServer().emit('connection', secure);
}
