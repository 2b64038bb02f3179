// A collector that never answers: turns run as without tracing (the export happens off the turn's
// path, in batches), the spans that would overflow the bounded export queue are dropped and
// counted in agent_service_trace_spans_dropped_total, and the process still stops.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { readySession, sendText, waitFor, waitForEvents } from '../helpers/sessions.js';
import { parseMetrics, seriesValue } from '../helpers/prometheus.js';

let s: TestServer;
let fake: FakeProvider;
let receiver: OtlpReceiver;
const saved = { ...process.env };
beforeAll(async () => {
  // A queue of 4 spans, batches sent at once, and the exporter's own timeout short enough for the stop.
  process.env.OTEL_BSP_MAX_QUEUE_SIZE = '4';
  process.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE = '4';
  process.env.OTEL_BSP_SCHEDULE_DELAY = '10';
  process.env.OTEL_EXPORTER_OTLP_TIMEOUT = '2000';
  fake = await startFakeProvider();
  receiver = await startOtlpReceiver();
  receiver.mode = 'hang';
  s = await startTestServer({ anthropicApiKey: 'sk-ant-test', anthropicBaseUrl: fake.anthropicBaseUrl, otelTracesEndpoint: receiver.url, metricsToken: 'm' });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
  await receiver?.close();
  for (const key of ['OTEL_BSP_MAX_QUEUE_SIZE', 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 'OTEL_BSP_SCHEDULE_DELAY', 'OTEL_EXPORTER_OTLP_TIMEOUT']) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
});

const metrics = async () => parseMetrics(await (await fetch(`${s.url}/metrics`, { headers: { authorization: 'Bearer m' } })).text());

describe('an OTLP collector that hangs', () => {
  it('turns still run to the end, one after another; overflowing spans are dropped and counted', async () => {
    // The counters are the process's: another file's turns in this worker count too.
    const before = await metrics();
    const { session } = await readySession(s);
    await waitFor(async () => receiver.requests > 0, 5_000, 'an export attempt');
    for (let turn = 1; turn <= 3; turn++) {
      fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: 'true' } }, { kind: 'text', text: `turn ${turn} done` });
      await sendText(s, session.id, `turn ${turn}`);
      const events = await waitForEvents(s, session.id, 'session.status_idle', turn);
      expect(events.filter((e) => e.type === 'agent.tool_result').at(-1).part.status).toBe('ok');
      expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });
    }
    const m = await metrics();
    const finished = (x: typeof m) => seriesValue(x, 'agent_service_turns_finished_total', { stop_reason: 'end_turn' });
    expect(finished(m) - finished(before)).toBe(3);
    // Far more than 4 spans were made (3 turns × request, turn, 2 model calls, tool call): the rest were dropped.
    const dropped = (x: typeof m) => seriesValue(x, 'agent_service_trace_spans_dropped_total');
    expect(dropped(m) - dropped(before)).toBeGreaterThanOrEqual(10);
    expect(receiver.spans).toHaveLength(0);
  });
});
