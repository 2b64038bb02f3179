// Traces of a real turn, exported by the OpenTelemetry SDK over OTLP/HTTP to an in-process
// receiver: the send request's span (the client's traceparent as its parent) → the turn span →
// a span per model call (GenAI attributes, token counts equal to the metering's records) and per
// tool call; no message content or secret in any attribute; request ids answered and honoured.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { readySession, sendText, waitFor, waitForEvents } from '../helpers/sessions.js';
import { flushTracing } from '../../src/telemetry/tracing.js';
import { prisma } from '../../src/db/client.js';

let s: TestServer;
let fake: FakeProvider;
let receiver: OtlpReceiver;
beforeAll(async () => {
  fake = await startFakeProvider();
  receiver = await startOtlpReceiver();
  s = await startTestServer({
    anthropicApiKey: 'sk-ant-secret-test-key',
    anthropicBaseUrl: fake.anthropicBaseUrl,
    otelTracesEndpoint: receiver.url,
  });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
  await receiver?.close();
});

/** Flushes the SDK until the receiver holds spans of `traceId` matching `pred`. */
async function spansOf(traceId: string, pred: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  let spans: ReceivedSpan[] = [];
  await waitFor(
    async () => {
      await flushTracing();
      spans = receiver.spans.filter((x) => x.traceId === traceId);
      return pred(spans);
    },
    10_000,
    `spans of trace ${traceId}`,
  );
  return spans;
}

describe('the trace of a turn with a tool call', () => {
  it('is one tree: client parent → send request → turn → model calls and the tool call, with GenAI attributes and metered tokens', async () => {
    const { agent, session } = await readySession(s);
    fake.enqueue(
      { kind: 'tool_call', name: 'bash', input: { command: 'echo CONTENT-OF-TOOL' }, usage: { inputTokens: 120, outputTokens: 30, cacheReadTokens: 7 } },
      { kind: 'text', text: 'All done with SECRET-ANSWER-TEXT.', usage: { inputTokens: 200, outputTokens: 12, cacheWriteTokens: 5 } },
    );
    const traceId = randomBytes(16).toString('hex');
    const clientSpan = randomBytes(8).toString('hex');
    const sent = await sendText(s, session.id, 'please run SECRET-USER-TEXT', { traceparent: `00-${traceId}-${clientSpan}-01` });
    expect(sent.status).toBe(202);
    await waitForEvents(s, session.id, 'session.status_idle');

    const spans = await spansOf(
      traceId,
      (all) => all.filter((x) => x.name.startsWith('chat ')).length >= 2 && all.some((x) => x.name.startsWith('invoke_agent')),
    );
    const byName = (prefix: string) => spans.filter((x) => x.name.startsWith(prefix));

    const request = byName('POST /v1/sessions/{id}/events');
    expect(request).toHaveLength(1);
    expect(request[0]!.parentSpanId).toBe(clientSpan);
    expect(request[0]!.kind).toBe(2); // SERVER
    expect(request[0]!.attributes).toMatchObject({ 'http.route': '/v1/sessions/{id}/events', 'http.response.status_code': 202, 'http.request.method': 'POST' });
    expect(request[0]!.attributes['agent_service.request_id']).toBe(sent.headers.get('x-request-id'));

    const turn = byName('invoke_agent ');
    expect(turn).toHaveLength(1);
    expect(turn[0]!.name).toBe('invoke_agent hermes');
    expect(turn[0]!.parentSpanId).toBe(request[0]!.spanId);
    expect(turn[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'agent_service.session.id': session.id,
      'agent_service.agent.id': agent.id,
      'agent_service.engine': 'hermes',
      'agent_service.universe.id': expect.stringMatching(/^uni_/),
      'agent_service.turn': 1,
      'agent_service.stop_reason': 'end_turn',
    });

    const chats = byName('chat ').sort((a, b) => Number(a.startNs - b.startNs));
    expect(chats).toHaveLength(2);
    const usage = await prisma.modelUsage.findMany({ where: { sessionId: session.id }, orderBy: { createdAt: 'asc' } });
    expect(usage).toHaveLength(2);
    chats.forEach((chat, i) => {
      expect(chat.parentSpanId).toBe(turn[0]!.spanId);
      expect(chat.kind).toBe(3); // CLIENT
      expect(chat.name).toBe(`chat ${usage[i]!.model}`);
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': usage[i]!.model,
        'gen_ai.usage.input_tokens': usage[i]!.inputTokens,
        'gen_ai.usage.output_tokens': usage[i]!.outputTokens,
        'gen_ai.usage.cache_read.input_tokens': usage[i]!.cacheReadTokens,
        'gen_ai.usage.cache_creation.input_tokens': usage[i]!.cacheWriteTokens,
        'agent_service.cost.nano_usd': usage[i]!.costNanoUsd.toString(),
      });
    });
    expect(chats.map((c) => c.attributes['gen_ai.usage.input_tokens'])).toEqual([120, 200]);

    const tools = byName('execute_tool ');
    expect(tools).toHaveLength(1);
    expect(tools[0]!.name).toBe('execute_tool bash');
    expect(tools[0]!.parentSpanId).toBe(turn[0]!.spanId);
    expect(tools[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'bash',
      'agent_service.tool.kind': 'sandbox',
      'agent_service.tool.status': 'ok',
    });
    // The tool ran between the two model calls, inside the turn.
    expect(tools[0]!.startNs >= chats[0]!.endNs && tools[0]!.endNs <= chats[1]!.startNs).toBe(true);
    expect(turn[0]!.startNs <= chats[0]!.startNs && turn[0]!.endNs >= chats[1]!.endNs).toBe(true);

    // The resource names the service and this process.
    expect(turn[0]!.resource['service.name']).toBe('agent-service');
    expect(turn[0]!.resource['service.instance.id']).toBeTruthy();

    // No content and no secret in any attribute, by default.
    const everything = JSON.stringify(receiver.spans.map((x) => ({ n: x.name, a: x.attributes, r: x.resource })));
    for (const secret of ['SECRET-USER-TEXT', 'SECRET-ANSWER-TEXT', 'CONTENT-OF-TOOL', 'sk-ant-secret-test-key', s.adminToken])
      expect(everything).not.toContain(secret);
  });

  it('a session create has its sandbox provision span under the request span', async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const traceId = randomBytes(16).toString('hex');
    const created = await s.api('POST', '/sessions', {
      body: { agent: agent.id },
      headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    });
    expect(created.status).toBe(201);
    const spans = await spansOf(traceId, (all) => all.some((x) => x.name === 'sandbox.provision'));
    const provision = spans.find((x) => x.name === 'sandbox.provision')!;
    expect(provision.attributes).toMatchObject({ 'agent_service.session.id': created.body.session.id, 'agent_service.sandbox.driver': 'local' });
    const request = spans.find((x) => x.name === 'POST /v1/sessions')!;
    expect(request).toBeTruthy();
    // The provision runs under the request (directly, or under a span of it).
    const ids = new Set(spans.map((x) => x.spanId));
    expect(ids.has(provision.parentSpanId!)).toBe(true);
  });
});

describe('reads', () => {
  it('a GET has a span when the client sends a sampled traceparent, none otherwise (hot reads stay untraced)', async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const asked = randomBytes(16).toString('hex');
    const notSampled = randomBytes(16).toString('hex');
    await s.api('GET', `/agents/${agent.id}`, { headers: { traceparent: `00-${asked}-${randomBytes(8).toString('hex')}-01` } });
    await s.api('GET', `/agents/${agent.id}`, { headers: { traceparent: `00-${notSampled}-${randomBytes(8).toString('hex')}-00` } });
    const spans = await spansOf(asked, (all) => all.some((x) => x.name === 'GET /v1/agents/{id}'));
    expect(spans.find((x) => x.name === 'GET /v1/agents/{id}')!.attributes['http.response.status_code']).toBe(200);
    await flushTracing();
    expect(receiver.spans.filter((x) => x.traceId === notSampled)).toHaveLength(0);
    const before = receiver.spans.filter((x) => x.name === 'GET /v1/agents/{id}').length;
    await s.api('GET', `/agents/${agent.id}`);
    await flushTracing();
    // The plain GET (no traceparent) made no span: only the asked one was added.
    expect(receiver.spans.filter((x) => x.name === 'GET /v1/agents/{id}').length - before).toBe(0);
  });
});

describe('request ids', () => {
  it('every answer carries X-Request-Id: a sane incoming one is kept, others are replaced', async () => {
    const own = await s.api('GET', '/agents', { headers: { 'x-request-id': 'client-id-123' } });
    expect(own.headers.get('x-request-id')).toBe('client-id-123');
    const generated = await s.api('GET', '/agents');
    expect(generated.headers.get('x-request-id')).toMatch(/^req_[0-9a-f-]{36}$/);
    const hostile = await s.api('GET', '/agents', { headers: { 'x-request-id': 'a b\tc<script>' } });
    expect(hostile.headers.get('x-request-id')).toMatch(/^req_/);
    const tooLong = await s.api('GET', '/agents', { headers: { 'x-request-id': 'x'.repeat(129) } });
    expect(tooLong.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('error envelopes carry it too (404, 401, 405), and so do non-REST answers', async () => {
    const missing = await s.api('GET', '/agents/agent_01aaaaaaaaaaaaaaaaaaaaaaaa', { headers: { 'x-request-id': 'quote-me' } });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
    expect(missing.headers.get('x-request-id')).toBe('quote-me');
    const unauth = await s.api('GET', '/agents', { token: null });
    expect(unauth.status).toBe(401);
    expect(unauth.headers.get('x-request-id')).toMatch(/^req_/);
    const health = await fetch(`${s.url}/healthz`, { headers: { 'x-request-id': 'probe-1' } });
    expect(health.headers.get('x-request-id')).toBe('probe-1');
    const gql = await fetch(`${s.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
    expect(gql.headers.get('x-request-id')).toMatch(/^req_/);
  });
});
