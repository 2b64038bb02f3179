// The process's Prometheus metrics (prom-client): one registry, the service's metrics defined
// here, the process's default metrics (event loop lag, memory, CPU, handles) and an `instance`
// label on every series (set at start-up from the composed instance identity). Gauges whose
// value lives in a higher layer (open SSE streams, queue depth, spare sandboxes) are defined in
// the module that holds the value, on this registry, with a `collect` that reads it at scrape.
// `GET /metrics` (src/http/app.ts) answers `metricsText()`. Names: docs/operations.md.
import client from 'prom-client';

export const registry = new client.Registry();

let defaultsOn = false;
/** Starts the process's default metrics (once per process) and labels every series with `instance`. */
export function startMetrics(instance: string): void {
  registry.setDefaultLabels({ instance });
  if (defaultsOn) return;
  defaultsOn = true;
  client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
}

/** The exposition text and its content type. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LONG_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

export const httpRequests = new client.Counter({
  name: 'agent_service_http_requests_total',
  help: 'HTTP requests answered, by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});
export const httpDuration = new client.Histogram({
  name: 'agent_service_http_request_duration_seconds',
  help: 'Time from a request to the end of its answer (streams: until they close), by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: SECONDS,
  registers: [registry],
});
export const rateLimitRefusals = new client.Counter({
  name: 'agent_service_rate_limit_refusals_total',
  help: 'Requests refused with 429 by the per-token rate limit',
  registers: [registry],
});
export const turnsStarted = new client.Counter({
  name: 'agent_service_turns_started_total',
  help: 'Turns started, by engine',
  labelNames: ['engine'] as const,
  registers: [registry],
});
export const turnsFinished = new client.Counter({
  name: 'agent_service_turns_finished_total',
  help: 'Turns finished, by engine and stop reason',
  labelNames: ['engine', 'stop_reason'] as const,
  registers: [registry],
});
export const turnDuration = new client.Histogram({
  name: 'agent_service_turn_duration_seconds',
  help: 'Duration of a turn (engine run), by engine',
  labelNames: ['engine'] as const,
  buckets: LONG_SECONDS,
  registers: [registry],
});
export const firstFrameDuration = new client.Histogram({
  name: 'agent_service_turn_first_frame_seconds',
  help: "Time from a turn's start to the first event its engine emits, by engine",
  labelNames: ['engine'] as const,
  buckets: SECONDS,
  registers: [registry],
});
export const modelCalls = new client.Counter({
  name: 'agent_service_model_calls_total',
  help: 'Metered model calls, by provider, model and result (ok, error, budget)',
  labelNames: ['provider', 'model', 'result'] as const,
  registers: [registry],
});
export const modelTokens = new client.Counter({
  name: 'agent_service_model_tokens_total',
  help: 'Model tokens metered, by provider, model and kind (input, output, cache_read, cache_write)',
  labelNames: ['provider', 'model', 'kind'] as const,
  registers: [registry],
});
export const modelCost = new client.Counter({
  name: 'agent_service_model_cost_usd_total',
  help: 'Model cost metered at list price in US dollars, by provider and model',
  labelNames: ['provider', 'model'] as const,
  registers: [registry],
});
export const toolCalls = new client.Counter({
  name: 'agent_service_tool_calls_total',
  help: 'Tool calls run by the service, by kind (sandbox, mcp, capability) and status',
  labelNames: ['kind', 'status'] as const,
  registers: [registry],
});
export const toolDuration = new client.Histogram({
  name: 'agent_service_tool_call_duration_seconds',
  help: 'Duration of a tool call, by kind',
  labelNames: ['kind'] as const,
  buckets: LONG_SECONDS,
  registers: [registry],
});
export const queueWait = new client.Histogram({
  name: 'agent_service_turn_queue_wait_seconds',
  help: 'Time a turn job waited in the queue before a worker took it',
  buckets: SECONDS,
  registers: [registry],
});
export const sandboxProvisions = new client.Counter({
  name: 'agent_service_sandbox_provisions_total',
  help: 'Sandbox provisions, by driver and result',
  labelNames: ['driver', 'result'] as const,
  registers: [registry],
});
export const webhookDeliveries = new client.Counter({
  name: 'agent_service_webhook_deliveries_total',
  help: 'Webhook delivery attempts, by result (succeeded, retrying, failed)',
  labelNames: ['result'] as const,
  registers: [registry],
});
export const routineFires = new client.Counter({
  name: 'agent_service_routine_fires_total',
  help: 'Routine fires, by trigger and result',
  labelNames: ['trigger', 'result'] as const,
  registers: [registry],
});
export const spansDropped = new client.Counter({
  name: 'agent_service_trace_spans_dropped_total',
  help: 'Finished spans dropped because the export queue was full (exporter down or slow)',
  registers: [registry],
});
export const spansExported = new client.Counter({
  name: 'agent_service_trace_spans_exported_total',
  help: 'Spans handed to the OTLP exporter, by result',
  labelNames: ['result'] as const,
  registers: [registry],
});

/** A gauge read at scrape time from `read` (0 when it throws: the part is not composed). */
export function scrapedGauge(name: string, help: string, read: () => number | Promise<number>): client.Gauge {
  return new client.Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      try {
        this.set(await read());
      } catch {
        this.set(0);
      }
    },
  });
}

/** A gauge with labels, set at scrape time from `read` (nothing when it throws). */
export function scrapedLabelledGauge<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  read: () => Promise<{ labels: Record<L, string>; value: number }[]> | { labels: Record<L, string>; value: number }[],
): client.Gauge<L> {
  return new client.Gauge<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        for (const row of await read()) this.set(row.labels as Partial<Record<L, string | number>>, row.value);
      } catch {
        // not composed: no series
      }
    },
  });
}
