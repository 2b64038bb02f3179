// OpenTelemetry traces. Started only when an OTLP traces endpoint is configured
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, read in src/config.ts);
// otherwise no SDK is loaded into the tracer provider and every helper here returns at the first
// branch (`tracingOn()` false). The SDK: a Node tracer provider (AsyncLocalStorage context, W3C
// trace context propagation), a batch processor behind a bounded count (a span that would
// overflow the export queue is dropped and counted, agent_service_trace_spans_dropped_total, so a
// slow or absent collector never holds a turn back), and the OTLP/HTTP exporter, which reads the
// other standard OTEL_EXPORTER_OTLP_* variables (headers, timeout) itself; the resource reads
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. Span names and attributes: docs/operations.md.
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { settings } from '../config.js';
import { currentRequestId, REQUEST_ID_KEY, withRequestId } from './request-context.js';
import { spansDropped, spansExported } from './metrics.js';

export { SpanKind, SpanStatusCode, type Attributes, type Span };

let provider: NodeTracerProvider | null = null;
let on = false;
let starts = 0;

/** Whether spans are recorded in this process (an OTLP endpoint is configured). */
export function tracingOn(): boolean {
  return on;
}

/** Whether spans may carry message and tool content (OTEL_CAPTURE_CONTENT=1). */
export function captureContent(): boolean {
  return on && settings.otelCaptureContent();
}

/** Counts what the exporter took and gives the bounded processor its room back. */
class CountingExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly done: (count: number) => void,
  ) {}
  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      spansExported.inc({ result: result.code === ExportResultCode.SUCCESS ? 'success' : 'failure' }, spans.length);
      this.done(spans.length);
      resultCallback(result);
    });
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/**
 * The batch processor behind a count of the spans it holds (queued or being exported): at
 * `max`, a finished span is dropped here and counted, instead of silently inside the SDK.
 */
class BoundedProcessor implements SpanProcessor {
  private held = 0;
  readonly inner: BatchSpanProcessor;
  constructor(
    exporter: SpanExporter,
    private readonly max: number,
  ) {
    this.inner = new BatchSpanProcessor(new CountingExporter(exporter, (n) => (this.held = Math.max(0, this.held - n))), { maxQueueSize: max });
  }
  onStart(span: Parameters<SpanProcessor['onStart']>[0], parent: Context): void {
    this.inner.onStart(span, parent);
  }
  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.held >= this.max) {
      spansDropped.inc();
      return;
    }
    this.held++;
    this.inner.onEnd(span);
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

export interface TracingOptions {
  /** The OTLP/HTTP traces URL (config's otelTracesEndpoint). */
  url: string;
  /** service.instance.id of the resource (the composed instance identity). */
  instance: string;
  /** Spans held for export at most (default OTEL_BSP_MAX_QUEUE_SIZE or 2048). */
  maxQueueSize?: number;
}

/**
 * Starts the SDK (once per process; a second server in the same process shares it, counted so
 * the last stop ends it). Registers the global tracer provider, context manager and propagator.
 */
export function startTracing(opts: TracingOptions): void {
  starts++;
  if (provider) return;
  const resource = resourceFromAttributes({ 'service.name': 'agent-service', 'service.instance.id': opts.instance }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BoundedProcessor(new OTLPTraceExporter({ url: opts.url }), opts.maxQueueSize ?? settings.otelMaxQueueSize())],
  });
  provider.register();
  on = true;
}

/** Sends what is queued now (tests, shutdown). */
export async function flushTracing(): Promise<void> {
  await provider?.forceFlush().catch(() => undefined);
}

/** Flushes and stops the SDK when the last server that started it stops. */
export async function stopTracing(): Promise<void> {
  if (starts === 0) return;
  starts--;
  if (starts > 0 || !provider) return;
  const stopping = provider;
  provider = null;
  on = false;
  await stopping.shutdown().catch(() => undefined);
  trace.disable();
  context.disable();
  propagation.disable();
}

export const tracer = () => trace.getTracer('agent-service');

/** The span of the work in progress (undefined when tracing is off or no span is active). */
export function activeSpan(): Span | undefined {
  return on ? trace.getActiveSpan() : undefined;
}

/**
 * Runs `fn` inside a new active span (a child of the current one) and ends it after, marking it
 * an error when `fn` throws. With tracing off, `fn` runs alone (given no span).
 */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span | undefined) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  if (!on) return fn(undefined);
  return tracer().startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Marks a span failed with the error's message (no stack, no content). */
export function failSpan(span: Span | undefined, err: unknown): void {
  if (!span) return;
  const message = err instanceof Error ? err.message : String(err);
  span.setStatus({ code: SpanStatusCode.ERROR, message: message.slice(0, 300) });
  span.setAttribute('error.type', err instanceof Error ? err.name : 'error');
}

/** The trace id of the work in progress, for log lines (undefined when tracing is off). */
export function currentTraceId(): string | undefined {
  if (!on) return undefined;
  const ctx = trace.getActiveSpan()?.spanContext();
  return ctx && trace.isSpanContextValid(ctx) ? ctx.traceId : undefined;
}

/** What a queued job carries to the process that runs it: the request id and the trace context. */
export interface Carried {
  requestId?: string;
  traceparent?: string;
  tracestate?: string;
}

/** The current request id and trace context, to put into a job's data (undefined when there is none). */
export function carried(): Carried | undefined {
  const requestId = currentRequestId();
  const out: Carried = {};
  if (requestId) out.requestId = requestId;
  if (on) propagation.inject(context.active(), out);
  return Object.keys(out).length ? out : undefined;
}

/** Runs `fn` in the request id and trace context a job carried (as if still inside the request). */
export function withCarried<T>(from: Carried | undefined, fn: () => T): T {
  if (!from) return fn();
  if (on) {
    const carriedContext = from.traceparent ? propagation.extract(ROOT_CONTEXT, from) : ROOT_CONTEXT;
    return context.with(from.requestId ? carriedContext.setValue(REQUEST_ID_KEY, from.requestId) : carriedContext, fn);
  }
  return from.requestId ? withRequestId(from.requestId, fn) : fn();
}

/** The context a server span of an incoming request starts from (the client's `traceparent`). */
export function incomingContext(headers: Record<string, string | string[] | undefined>): Context {
  return propagation.extract(ROOT_CONTEXT, headers);
}

/** Runs `fn` with `span` active (in `parent`) and `requestId` as the request id (in the same context). */
export function withSpanActive<T>(parent: Context, span: Span, requestId: string, fn: () => T): T {
  return context.with(trace.setSpan(parent, span).setValue(REQUEST_ID_KEY, requestId), fn);
}

// A CLI engine's model calls reach the gateway as HTTP requests from its sandbox, without a
// `traceparent` (the CLIs send none): the running turn's context, kept here by session, parents
// their spans so a CLI turn's model calls sit in its trace like hermes' do.
const turnContexts = new Map<string, Context>();

/** Runs `fn` as session `sessionId`'s turn: its model calls through the HTTP gateway join this context. */
export async function asSessionTurn<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
  if (!on) return fn();
  turnContexts.set(sessionId, context.active());
  try {
    return await fn();
  } finally {
    turnContexts.delete(sessionId);
  }
}

/** Runs `fn` in session `sessionId`'s running turn's context when this process runs it (else as is). */
export function inSessionTurn<T>(sessionId: string, fn: () => T): T {
  const turn = on ? turnContexts.get(sessionId) : undefined;
  return turn ? context.with(turn, fn) : fn();
}
