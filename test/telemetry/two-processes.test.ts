// A turn sent to an API-only process and run by a worker process (PostgreSQL + Redis, BullMQ) is
// ONE trace: the job carries the send's trace context and request id, so the worker's turn span
// is a child of the API process's request span, and the worker's log lines of that turn carry
// the request id the client sent.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startChildServer, api, type ChildServer } from '../helpers/child-server.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';

const DB = process.env.TEST_DATABASE_URL;
const REDIS = process.env.TEST_REDIS_URL;

let fake: FakeProvider;
let receiver: OtlpReceiver;
const children: ChildServer[] = [];
const schema = `otel_${randomBytes(5).toString('hex')}`;
beforeAll(async () => {
  fake = await startFakeProvider();
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await Promise.all(children.map((c) => c.kill('SIGTERM')));
  await fake?.close();
  await receiver?.close();
  if (DB) {
    const client = new pg.Client({ connectionString: DB });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
});

async function until<T>(read: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!DB || !REDIS)('a turn across two processes', () => {
  it('is one trace: the API process request span is the parent of the worker process turn span', async () => {
    const token = `ast_otel_${randomBytes(16).toString('hex')}`;
    const shared: Record<string, string> = {
      ADMIN_EMAIL: 'owner@example.test',
      ADMIN_PASSWORD: 'a long enough password',
      SECRET_KEY: randomBytes(32).toString('hex'),
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: fake.anthropicBaseUrl,
      RATE_LIMIT_PER_MINUTE: '100000',
      DATABASE_URL: `${DB}?schema=${schema}`,
      REDIS_URL: REDIS!,
      ADMIN_TOKEN: token,
      QUEUE_PREFIX: schema,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.base,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      LOG_FORMAT: 'json',
    };
    const apiOnly = await startChildServer({ ...shared, TURN_WORKER: '0', DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'otel-a-')) });
    children.push(apiOnly);
    const worker = await startChildServer({ ...shared, LOG_LEVEL: 'debug', DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'otel-b-')) });
    children.push(worker);

    const agent = (await api(apiOnly.base, token, 'POST', '/agents', {})).body.agent;
    const session = (await api(worker.base, token, 'POST', '/sessions', { agent: agent.id })).body.session;
    await until(
      async () => ((await api(worker.base, token, 'GET', `/sessions/${session.id}`)).body.session.status === 'idle' ? true : undefined),
      'idle session',
    );

    fake.enqueue({ kind: 'text', text: 'answered by the worker' });
    const traceId = randomBytes(16).toString('hex');
    const clientSpan = randomBytes(8).toString('hex');
    const requestId = `two-proc-${randomBytes(4).toString('hex')}`;
    const sent = await fetch(`${apiOnly.base}/sessions/${session.id}/events`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        traceparent: `00-${traceId}-${clientSpan}-01`,
        'x-request-id': requestId,
      },
      body: JSON.stringify({ events: [{ type: 'user.message', content: [{ type: 'text', text: 'hello' }] }] }),
    });
    expect(sent.status).toBe(202);
    expect(sent.headers.get('x-request-id')).toBe(requestId);

    const spans = await until(() => {
      const mine = receiver.spans.filter((x) => x.traceId === traceId);
      return mine.some((x) => x.name.startsWith('invoke_agent')) && mine.some((x) => x.name.startsWith('chat ')) ? mine : undefined;
    }, 'the trace of the turn');
    const request = spans.find((x) => x.name === 'POST /v1/sessions/{id}/events')!;
    const turn = spans.find((x) => x.name.startsWith('invoke_agent'))!;
    const chat = spans.find((x) => x.name.startsWith('chat '))!;
    expect(request.parentSpanId).toBe(clientSpan);
    expect(turn.parentSpanId).toBe(request.spanId);
    expect(chat.parentSpanId).toBe(turn.spanId);
    // Two processes: the request on the API-only one, the turn on the worker.
    expect(request.resource['service.instance.id']).toBeTruthy();
    expect(turn.resource['service.instance.id']).toBeTruthy();
    expect(turn.resource['service.instance.id']).not.toBe(request.resource['service.instance.id']);
    expect(chat.resource['service.instance.id']).toBe(turn.resource['service.instance.id']);

    // The worker's log lines of the turn carry the client's request id and the trace id.
    const lines = worker
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    const started = lines.find((l) => l.msg === 'turn started' && l.sessionId === session.id);
    expect(started).toMatchObject({ request_id: requestId, trace_id: traceId });
  }, 120_000);
});
