// GET /metrics: Prometheus text read by an independent parser after a known workload (REST reads,
// a 404, a turn with a tool call on the fake provider, rate-limit refusals), the METRICS_TOKEN
// bearer enforced, the endpoint absent without it, an `instance` label on every series.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents } from '../helpers/sessions.js';
import { allSeries, parseMetrics, seriesValue } from '../helpers/prometheus.js';
import { config } from '../../src/config.js';
import { overrideServices } from '../../src/services/registry.js';
import { prisma } from '../../src/db/client.js';

const TOKEN = 'metrics-token-for-tests';
const LIMIT = 300;
let s: TestServer;
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
  s = await startTestServer({ anthropicApiKey: 'sk-ant-test', anthropicBaseUrl: fake.anthropicBaseUrl, metricsToken: TOKEN, rateLimitPerMinute: LIMIT });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});

const scrape = async (token: string | null = TOKEN) => fetch(`${s.url}/metrics`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });

describe('GET /metrics', () => {
  it('asks for the METRICS_TOKEN bearer', async () => {
    const none = await scrape(null);
    expect(none.status).toBe(401);
    expect((await none.json()).error.code).toBe('invalid_token');
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    expect((await scrape('wrong')).status).toBe(401);
    // An API token is not the metrics token.
    expect((await scrape(s.adminToken)).status).toBe(401);
    const ok = await scrape();
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toContain('text/plain');
  });

  it('counts a known workload: requests by route template, a turn, its model tokens and tool call', async () => {
    // The counters are the process's: what another file's servers counted in this worker is subtracted.
    const before = parseMetrics(await (await scrape()).text());
    const { agent, session } = await readySession(s);
    for (let i = 0; i < 3; i++) expect((await s.api('GET', `/agents/${agent.id}`)).status).toBe(200);
    expect((await s.api('GET', '/agents/agent_01aaaaaaaaaaaaaaaaaaaaaaaa')).status).toBe(404);
    fake.enqueue(
      { kind: 'tool_call', name: 'bash', input: { command: 'true' }, usage: { inputTokens: 50, outputTokens: 10 } },
      { kind: 'text', text: 'done', usage: { inputTokens: 70, outputTokens: 4 } },
    );
    await sendText(s, session.id, 'go');
    await waitForEvents(s, session.id, 'session.status_idle');
    const model = (await prisma.modelUsage.findFirstOrThrow({ where: { sessionId: session.id } })).model;

    const res = await scrape();
    const text = await res.text();
    const m = parseMetrics(text);
    const grew = (name: string, labels?: Record<string, string>) => seriesValue(m, name, labels) - seriesValue(before, name, labels);

    // Requests by method, route template (not the id) and status, with latency histograms.
    expect(grew('agent_service_http_requests_total', { method: 'GET', route: '/v1/agents/{id}', status: '200' })).toBe(3);
    expect(grew('agent_service_http_requests_total', { method: 'GET', route: '/v1/agents/{id}', status: '404' })).toBe(1);
    expect(grew('agent_service_http_requests_total', { method: 'POST', route: '/v1/sessions/{id}/events', status: '202' })).toBe(1);
    expect(text).not.toContain(agent.id);
    expect(m.get('agent_service_http_request_duration_seconds')?.type).toBe('HISTOGRAM');
    expect(grew('agent_service_http_request_duration_seconds', { route: '/v1/agents/{id}', status: '200' })).toBe(3);

    // The turn, its model calls and tokens, its tool call.
    expect(grew('agent_service_turns_started_total', { engine: 'hermes' })).toBe(1);
    expect(grew('agent_service_turns_finished_total', { engine: 'hermes', stop_reason: 'end_turn' })).toBe(1);
    expect(grew('agent_service_turn_duration_seconds', { engine: 'hermes' })).toBe(1);
    expect(grew('agent_service_turn_first_frame_seconds', { engine: 'hermes' })).toBe(1);
    expect(grew('agent_service_model_calls_total', { provider: 'anthropic', model, result: 'ok' })).toBe(2);
    expect(grew('agent_service_model_tokens_total', { model, kind: 'input' })).toBe(120);
    expect(grew('agent_service_model_tokens_total', { model, kind: 'output' })).toBe(14);
    const cost = (await prisma.modelUsage.findMany({ where: { sessionId: session.id } })).reduce((sum, u) => sum + Number(u.costNanoUsd), 0) / 1e9;
    expect(grew('agent_service_model_cost_usd_total', { model })).toBeCloseTo(cost, 9);
    expect(grew('agent_service_tool_calls_total', { kind: 'sandbox', status: 'ok' })).toBe(1);
    expect(grew('agent_service_tool_call_duration_seconds', { kind: 'sandbox' })).toBe(1);
    expect(seriesValue(m, 'agent_service_sandbox_provisions_total', { driver: 'local', result: 'ok' })).toBeGreaterThanOrEqual(1);

    // Gauges read at scrape time, and the process's own metrics.
    for (const name of [
      'agent_service_sse_streams_open',
      'agent_service_turn_queue_jobs',
      'agent_service_sandboxes',
      'agent_service_warm_sandboxes',
      'agent_service_turn_queue_wait_seconds',
      'nodejs_eventloop_lag_seconds',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
    ])
      expect(m.has(name), name).toBe(true);
    expect(seriesValue(m, 'agent_service_sandboxes', { state: 'ready' })).toBeGreaterThanOrEqual(1);
    expect(seriesValue(m, 'agent_service_turn_queue_wait_seconds')).toBeGreaterThanOrEqual(1);

    // Every series names this process.
    const instance = m.get('agent_service_turns_started_total')!.metrics[0]!.labels!.instance;
    expect(instance).toBeTruthy();
    const series = allSeries(m);
    expect(series.length).toBeGreaterThan(50);
    for (const one of series) expect(one.labels.instance, one.name).toBe(instance);
  });

  it('counts open SSE streams', async () => {
    const { session } = await readySession(s);
    const ctl = new AbortController();
    const stream = await fetch(`${s.base}/sessions/${session.id}/events/stream`, { headers: { authorization: `Bearer ${s.adminToken}` }, signal: ctl.signal });
    expect(stream.status).toBe(200);
    await stream.body!.getReader().read(); // the opening comment
    expect(seriesValue(parseMetrics(await (await scrape()).text()), 'agent_service_sse_streams_open')).toBe(1);
    ctl.abort();
  });
});

describe('rate-limit refusals, and /metrics without METRICS_TOKEN', () => {
  it('without METRICS_TOKEN there is no /metrics', async () => {
    const cfg = config();
    overrideServices({ config: { ...cfg, metricsToken: undefined } });
    try {
      const off = await scrape();
      expect(off.status).toBe(404);
      expect((await off.json()).error.code).toBe('not_found');
    } finally {
      overrideServices({ config: cfg });
    }
  });

  it('refusals of the rate limit are counted', async () => {
    // A fresh token has the whole per-minute budget (LIMIT): the two requests past it are refused.
    const token = await s.mintToken('read');
    const before = seriesValue(parseMetrics(await (await scrape()).text()), 'agent_service_rate_limit_refusals_total');
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 2; i += 20) {
      const batch = Array.from({ length: Math.min(20, LIMIT + 2 - i) }, () => s.api('GET', '/agents?limit=1', { token }));
      statuses.push(...(await Promise.all(batch)).map((r) => r.status));
    }
    expect(statuses.filter((x) => x === 429)).toHaveLength(2);
    const after = parseMetrics(await (await scrape()).text());
    expect(seriesValue(after, 'agent_service_rate_limit_refusals_total') - before).toBe(2);
    // Refused before routing: counted under the unrouted /v1 template.
    expect(seriesValue(after, 'agent_service_http_requests_total', { route: '/v1/{unmatched}', status: '429' })).toBe(2);
  });
});
