// What the edge records of every HTTP request: its request id (answered in `X-Request-Id`, kept
// for the request's logs and the turn it starts), its server span when tracing is on (the
// client's W3C `traceparent` as parent; named by route template), and the request counter and
// latency histogram by method, route template and status. The REST dispatcher names the route
// template it matched (`setRouteTemplate`); other paths are named by their mount.
import type http from 'node:http';
import { performance } from 'node:perf_hooks';
import { settings } from '../config.js';
import { httpDuration, httpRequests } from '../telemetry/metrics.js';
import { requestIdFrom } from '../telemetry/request-context.js';
import { incomingContext, SpanKind, withCarried, SpanStatusCode, tracer, tracingOn, withSpanActive } from '../telemetry/tracing.js';

const ROUTE = Symbol('routeTemplate');
type Templated = http.ServerResponse & { [ROUTE]?: string };

/** Names the route template a response answers (REST: `/v1` + the table's path). */
export function setRouteTemplate(res: http.ServerResponse, template: string): void {
  (res as Templated)[ROUTE] = template;
}

const MOUNTS = ['/graphql/stream', '/graphql', '/auth', '/gateway', '/healthz', '/readyz', '/metrics', '/v1/openapi.json'];

/** The template of a request the REST table did not name: its mount, `/v1/{unmatched}`, or `other`. */
function fallbackTemplate(url: string): string {
  for (const mount of MOUNTS) if (url === mount || url.startsWith(`${mount}/`) || url.startsWith(`${mount}?`)) return mount;
  if (url.startsWith('/v1')) return '/v1/{unmatched}';
  return 'other';
}

/**
 * A read (GET, HEAD) the client did not ask to trace (no sampled `traceparent`): no span, so the
 * hot reads keep their throughput with tracing on (OTEL_TRACE_READS=1 traces them all). Reads have
 * their metrics either way; every other request (sends, creates…) always has its span.
 */
function untracedRead(method: string, traceparent: string | string[] | undefined): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  return typeof traceparent !== 'string' || !traceparent.endsWith('-01');
}

/** Runs `handle` as the request's work: id, span and metrics around it. */
export function instrumentRequest(req: http.IncomingMessage, res: http.ServerResponse, handle: () => void): void {
  const requestId = requestIdFrom(req.headers['x-request-id']);
  res.setHeader('X-Request-Id', requestId);
  const started = performance.now();
  const method = req.method ?? 'GET';
  const url = req.url ?? ''; // as sent: the REST dispatcher strips its mount later
  if (!tracingOn() || (untracedRead(method, req.headers.traceparent) && !settings.otelTraceReads())) {
    res.once('close', () => {
      const labels = { method, route: (res as Templated)[ROUTE] ?? fallbackTemplate(url), status: String(res.statusCode) };
      httpRequests.inc(labels);
      httpDuration.observe(labels, (performance.now() - started) / 1000);
    });
    withCarried({ requestId }, handle); // the one context store in force (tracing's, when on)
    return;
  }
  const parent = incomingContext(req.headers);
  const span = tracer().startSpan(
    method,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'agent_service.request_id': requestId } },
    parent,
  );
  res.once('close', () => {
    const route = (res as Templated)[ROUTE] ?? fallbackTemplate(url);
    const status = res.statusCode;
    const labels = { method, route, status: String(status) };
    httpRequests.inc(labels);
    httpDuration.observe(labels, (performance.now() - started) / 1000);
    span.updateName(`${method} ${route}`);
    span.setAttributes({ 'http.route': route, 'http.response.status_code': status });
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  withSpanActive(parent, span, requestId, handle);
}
