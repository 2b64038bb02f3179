// Outbound webhooks against a real local receiver: signed thin deliveries that an independent
// verifier (stripe's constructEvent) accepts, retries at 0 s, 5 s and 30 s with one delivery
// id, disabling after sustained failure and re-enabling, SSRF refusals, admin-only writes.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type ApiResponse } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitFor } from '../helpers/sessions.js';
import { prisma } from '../../src/db/client.js';
import { archiveAgent } from '../../src/agents/agents.js';
import type { Viewer } from '../../src/auth/viewer.js';

interface Received {
  at: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  path: string;
}

let s: TestServer;
let fake: FakeProvider;
let receiver: http.Server;
let receiverUrl: string;
const received: Received[] = [];
const failPaths = new Map<string, number>(); // path → how many more requests to fail
const stripe = new Stripe('sk_test_unused');

beforeAll(async () => {
  fake = await startFakeProvider();
  s = await startTestServer({ anthropicApiKey: 'sk', anthropicBaseUrl: fake.anthropicBaseUrl });
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ at: Date.now(), headers: req.headers, body, path: req.url ?? '' });
      const left = failPaths.get(req.url ?? '') ?? 0;
      if (left > 0) {
        failPaths.set(req.url ?? '', left - 1);
        res.writeHead(500).end('down');
      } else res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://localhost:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
  receiver?.closeAllConnections();
  receiver?.close();
});

const expectError = (res: ApiResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
};

describe('endpoints', () => {
  it('create returns the secret once; list and detail never do', async () => {
    const res = await s.api('POST', '/webhooks', { body: { url: `${receiverUrl}/crud`, events: ['session.status_idle', 'routine_run.failed'] } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^whep_/),
      url: `${receiverUrl}/crud`,
      events: ['session.status_idle', 'routine_run.failed'],
      status: 'active',
      failure_count: 0,
      created_at: expect.any(String),
      secret: expect.stringMatching(/^whsec_/),
    });
    const detail = await s.api('GET', `/webhooks/${res.body.id}`);
    expect(detail.body).not.toHaveProperty('secret');
    expect(JSON.stringify((await s.api('GET', '/webhooks')).body)).not.toContain(res.body.secret);
    const patched = await s.api('PATCH', `/webhooks/${res.body.id}`, { body: { events: ['agent.created'] } });
    expect(patched.body.events).toEqual(['agent.created']);
    expect((await s.api('DELETE', `/webhooks/${res.body.id}`)).body).toEqual({ ok: true });
    expectError(await s.api('GET', `/webhooks/${res.body.id}`), 404, 'not_found');
  });

  it('validates url and events; refuses private, link-local and plain-http public targets', async () => {
    const ok = { events: ['agent.created'] };
    for (const url of [
      'http://example.com/hook',
      'https://10.0.0.5/hook',
      'https://192.168.1.1/x',
      'https://169.254.169.254/latest',
      'https://[fd00::1]/x',
      'ftp://example.com/x',
      'not a url',
      `https://user:pw@example.com/x`,
    ]) {
      expectError(await s.api('POST', '/webhooks', { body: { ...ok, url } }), 400, 'invalid_request');
    }
    expectError(
      await s.api('POST', '/webhooks', { body: { url: 'https://example.com/' + 'a'.repeat(2048), events: ['agent.created'] } }),
      400,
      'invalid_request',
    );
    expectError(await s.api('POST', '/webhooks', { body: { url: 'https://example.com/x', events: [] } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/webhooks', { body: { url: 'https://example.com/x', events: ['no.such.event'] } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/webhooks', { body: { url: 'https://example.com/x', events: Array(33).fill('agent.created') } }), 400, 'invalid_request');
    expect(
      (await s.api('POST', '/webhooks', { body: { url: 'https://example.com/hooks', events: ['session.status_idle', 'routine_run.failed'] } })).status,
    ).toBe(201);
  });

  it('writes need admin scope', async () => {
    const write = await s.mintToken('write');
    expectError(await s.api('POST', '/webhooks', { token: write, body: { url: `${receiverUrl}/x`, events: ['agent.created'] } }), 403, 'insufficient_scope');
    expect((await s.api('GET', '/webhooks', { token: write })).status).toBe(200);
  });
});

describe('delivery', () => {
  it('a thin, signed delivery that stripe.webhooks.constructEvent accepts', async () => {
    const created = (await s.api('POST', '/webhooks', { body: { url: `${receiverUrl}/signed`, events: ['session.status_idle', 'agent.created'] } })).body;
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    await waitFor(async () => received.some((r) => r.path === '/signed'));
    const got = received.find((r) => r.path === '/signed')!;
    const body = JSON.parse(got.body);
    expect(body).toEqual({ id: expect.stringMatching(/^evt_/), type: 'agent.created', created_at: expect.any(String), data: { type: 'agent', id: agent.id } });
    expect(got.headers['x-service-event']).toBe('agent.created');
    expect(got.headers['x-service-delivery']).toMatch(/^whdl_/);
    const ts = got.headers['x-service-timestamp'] as string;
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(10);
    const sig = got.headers['x-service-signature'] as string;
    expect(sig).toMatch(/^v1=[0-9a-f]{64}$/);
    const verified = stripe.webhooks.constructEvent(got.body, `t=${ts},${sig}`, created.secret);
    expect(verified.id).toBe(body.id);
    expect(() => stripe.webhooks.constructEvent(got.body, `t=${ts},${sig}`, 'whsec_wrong')).toThrow();

    // Session events: a turn's idle reaches the endpoint, data naming the session.
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'text', text: 'hi' });
    await sendText(s, session.id, 'hello');
    await waitFor(async () => received.some((r) => r.path === '/signed' && JSON.parse(r.body).type === 'session.status_idle'));
    const idle = JSON.parse(received.find((r) => r.path === '/signed' && JSON.parse(r.body).type === 'session.status_idle')!.body);
    expect(idle.data).toEqual({ type: 'session', id: session.id });
    const history = (await s.api('GET', `/sessions/${session.id}/events`)).body.events;
    expect(history.map((e: any) => e.id)).toContain(idle.id);
  });

  it('an agent change and its webhook event commit together: a failing outbox write undoes the change', async () => {
    await s.api('POST', '/webhooks', { body: { url: `${receiverUrl}/atomic`, events: ['agent.archived'] } });
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const row = await prisma.agent.findUniqueOrThrow({ where: { id: agent.id }, include: { universe: { include: { owner: true } } } });
    const viewer: Viewer = {
      user: row.universe.owner,
      auth: 'token',
      scopes: ['read', 'write', 'admin'],
      tokenId: null,
      tokenUniverseId: null,
      universe: row.universe,
    };
    // The outbox refuses every row for a moment: the archive it would announce must not stay.
    await prisma.$executeRawUnsafe(`CREATE FUNCTION refuse_delivery() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'outbox down'; END $$`);
    await prisma.$executeRawUnsafe(`CREATE TRIGGER refuse_delivery BEFORE INSERT ON "WebhookDelivery" FOR EACH ROW EXECUTE FUNCTION refuse_delivery()`);
    try {
      await expect(archiveAgent(viewer, agent.id)).rejects.toThrow(/outbox down/);
    } finally {
      await prisma.$executeRawUnsafe(`DROP TRIGGER refuse_delivery ON "WebhookDelivery"`);
      await prisma.$executeRawUnsafe(`DROP FUNCTION refuse_delivery()`);
    }
    expect((await s.api('GET', `/agents/${agent.id}`)).body.agent).toMatchObject({ archived: false, version: 1 });
    expect(received.some((r) => r.path === '/atomic')).toBe(false);
    // With the outbox back, the change and its delivery go through together.
    await s.api('POST', `/agents/${agent.id}/archive`);
    await waitFor(async () => received.some((r) => r.path === '/atomic'));
    expect(JSON.parse(received.find((r) => r.path === '/atomic')!.body)).toMatchObject({ type: 'agent.archived', data: { type: 'agent', id: agent.id } });
  });

  it('retries at 0 s, 5 s and 30 s with the same delivery id; sustained failure disables; PATCH re-enables with the same secret', async () => {
    // Endpoint A: fails twice, then succeeds on the third attempt.
    const a = (await s.api('POST', '/webhooks', { body: { url: `${receiverUrl}/flaky`, events: ['agent.archived'] } })).body;
    failPaths.set('/flaky', 2);
    // Endpoint B: always fails; 7 events × 3 attempts = 21 consecutive failures.
    const b = (await s.api('POST', '/webhooks', { body: { url: `${receiverUrl}/dead`, events: ['agent.updated'] } })).body;
    failPaths.set('/dead', 1_000);
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const archivedOne = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const start = Date.now();
    await s.api('POST', `/agents/${archivedOne.id}/archive`);
    for (let i = 0; i < 7; i++) await s.api('PATCH', `/agents/${agent.id}`, { body: { metadata: { n: i } } });

    await waitFor(async () => received.filter((r) => r.path === '/flaky').length >= 3, 40_000, 'three attempts');
    const attempts = received.filter((r) => r.path === '/flaky');
    expect(new Set(attempts.map((r) => r.headers['x-service-delivery'])).size).toBe(1);
    const offsets = attempts.map((r) => (r.at - start) / 1000);
    expect(offsets[0]).toBeLessThan(1.5);
    expect(offsets[1]).toBeGreaterThanOrEqual(4.5);
    expect(offsets[1]).toBeLessThan(7);
    expect(offsets[2]).toBeGreaterThanOrEqual(29.5);
    expect(offsets[2]).toBeLessThan(33);
    // The receiver answered the third attempt; the dispatcher records it right after.
    await waitFor(async () => (await s.api('GET', `/webhooks/${a.id}`)).body.failure_count === 0, 5000, 'success recorded');
    expect((await s.api('GET', `/webhooks/${a.id}`)).body).toMatchObject({ status: 'active', failure_count: 0 });
    const deliveries = await s.gql<any>(
      `query($id: String!) { webhookEndpoint(id: $id) { deliveries(first: 5) { edges { node { status attempts lastStatusCode } } } } }`,
      { id: a.id },
    );
    expect(deliveries.body.data.webhookEndpoint.deliveries.edges[0].node).toEqual({ status: 'succeeded', attempts: 3, lastStatusCode: 204 });

    await waitFor(async () => (await s.api('GET', `/webhooks/${b.id}`)).body.status === 'disabled', 10_000, 'endpoint disabled');
    const bNow = (await s.api('GET', `/webhooks/${b.id}`)).body;
    expect(bNow.failure_count).toBeGreaterThanOrEqual(20);
    // Disabled: new events are not delivered to it.
    const before = received.filter((r) => r.path === '/dead').length;
    await s.api('PATCH', `/agents/${agent.id}`, { body: { metadata: { n: 99 } } });
    await new Promise((r) => setTimeout(r, 1500));
    expect(received.filter((r) => r.path === '/dead').length).toBe(before);
    // Re-enable: deliveries resume, signed with the original secret.
    failPaths.set('/dead', 0);
    const re = await s.api('PATCH', `/webhooks/${b.id}`, { body: { status: 'active' } });
    expect(re.body).toMatchObject({ status: 'active', failure_count: 0 });
    await s.api('PATCH', `/agents/${agent.id}`, { body: { metadata: { n: 100 } } });
    await waitFor(async () => received.filter((r) => r.path === '/dead').length > before, 10_000, 'delivery after re-enable');
    const last = received.filter((r) => r.path === '/dead').at(-1)!;
    expect(() =>
      stripe.webhooks.constructEvent(last.body, `t=${last.headers['x-service-timestamp']},${last.headers['x-service-signature']}`, b.secret),
    ).not.toThrow();
  }, 60_000);
});
