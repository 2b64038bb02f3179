// Channel webhook endpoints and the event mirror over HTTP: CRUD (secret once), deliveries on the
// shared outbox retried at 0 s, 5 s and 30 s with one X-Service-Delivery, disabled after about
// 20 consecutive failures and re-enabled by PATCH with the secret kept; the SSE mirror with the
// same payloads, resumed with Last-Event-ID and ?after=; universe isolation.
process.env.OUTBOUND_ALLOW ??= '127.0.0.0/8,::1';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor, collectSse, type SseFrame } from '../helpers/sessions.js';
import { expectError } from '../helpers/agents.js';

interface Received {
  at: number;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let s: TestServer;
let receiver: http.Server;
let receiverUrl: string;
const received: Received[] = [];
const failPaths = new Map<string, number>();
const stripe = new Stripe('sk_test_unused');

beforeAll(async () => {
  s = await startTestServer();
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const path = req.url ?? '';
      received.push({ at: Date.now(), path, headers: req.headers, body });
      const left = failPaths.get(path) ?? 0;
      if (left > 0) {
        failPaths.set(path, left - 1);
        res.writeHead(503).end('busy');
      } else res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://localhost:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await s?.stop();
  receiver?.closeAllConnections();
  receiver?.close();
});

async function connectedLoopback(token = s.adminToken) {
  const conn = (await s.api('POST', '/channels/connections', { token, body: { platform: 'loopback' } })).body;
  expect((await fetch(conn.connect.url, { method: 'POST' })).status).toBe(200);
  return conn;
}
const play = (connId: string, body: Record<string, unknown>, token = s.adminToken) =>
  s.api('POST', `/channels/connections/${connId}/loopback/inbound`, { token, body });
const at = (path: string) => received.filter((r) => r.path === path);

describe('endpoints', () => {
  it('create returns the secret once; list never does; PATCH url/events; DELETE', async () => {
    const created = await s.api('POST', '/channels/webhooks', { body: { url: `${receiverUrl}/crud`, events: ['channel.connected', 'turn.refused'] } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^whep_/),
      url: `${receiverUrl}/crud`,
      events: ['channel.connected', 'turn.refused'],
      status: 'active',
      secret: expect.stringMatching(/^whsec_/),
    });
    const list = await s.api('GET', '/channels/webhooks');
    expect(list.body.data).toContainEqual({ id: created.body.id, url: `${receiverUrl}/crud`, events: ['channel.connected', 'turn.refused'], status: 'active' });
    expect(JSON.stringify(list.body)).not.toContain(created.body.secret);
    // Channel endpoints are not outbound endpoints (and the other way round).
    expect((await s.api('GET', '/webhooks')).body.data.map((e: any) => e.id)).not.toContain(created.body.id);
    const patched = await s.api('PATCH', `/channels/webhooks/${created.body.id}`, { body: { url: `${receiverUrl}/crud2`, events: ['delivery.failed'] } });
    expect(patched.body).toEqual({ id: created.body.id, url: `${receiverUrl}/crud2`, events: ['delivery.failed'], status: 'active' });
    expect((await s.api('DELETE', `/channels/webhooks/${created.body.id}`)).body).toEqual({ ok: true });
    expectError(await s.api('PATCH', `/channels/webhooks/${created.body.id}`, { body: { status: 'active' } }), 404, 'not_found');
  });

  it('validates url (https, http for localhost only, no private addresses) and events', async () => {
    for (const url of [
      'http://example.com/hook',
      'https://10.0.0.5/x',
      'https://169.254.169.254/latest',
      'ftp://example.com/x',
      'not a url',
      'https://u:p@example.com/x',
    ]) {
      expectError(await s.api('POST', '/channels/webhooks', { body: { url } }), 400, 'invalid_request');
    }
    expectError(await s.api('POST', '/channels/webhooks', { body: { url: `${receiverUrl}/x`, events: [] } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/channels/webhooks', { body: { url: `${receiverUrl}/x`, events: ['agent.created'] } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/channels/webhooks', { body: { url: `${receiverUrl}/x`, status: 'active' } }), 400, 'invalid_request');
    const read = await s.mintToken('read');
    expectError(await s.api('POST', '/channels/webhooks', { token: read, body: { url: `${receiverUrl}/x` } }), 403, 'insufficient_scope');
  });
});

describe('delivery', () => {
  it('retries at 0 s, 5 s and 30 s with one delivery id; ~20 consecutive failures disable; PATCH re-enables with the same secret', async () => {
    const flaky = (await s.api('POST', '/channels/webhooks', { body: { url: `${receiverUrl}/flaky`, events: ['channel.connected'] } })).body;
    failPaths.set('/flaky', 2);
    const dead = (await s.api('POST', '/channels/webhooks', { body: { url: `${receiverUrl}/dead`, events: ['channel.unmapped_conversation'] } })).body;
    failPaths.set('/dead', 10_000);

    const conn = await connectedLoopback(); // one channel.connected → /flaky
    for (let i = 0; i < 7; i++) await play(conn.id, { thread_id: `t${i}`, text: `unmapped ${i}` }); // 7 × 3 attempts → /dead

    await waitFor(async () => at('/flaky').length >= 3, 40_000, 'three attempts');
    const attempts = at('/flaky');
    expect(new Set(attempts.map((r) => r.headers['x-service-delivery'])).size).toBe(1);
    // Measured from the event's own creation time (the schedule's origin).
    const created = Date.parse(JSON.parse(attempts[0]!.body).createdAt);
    const offsets = attempts.map((r) => (r.at - created) / 1000);
    expect(offsets[0]).toBeLessThan(2);
    expect(offsets[1]! - offsets[0]!).toBeGreaterThan(3.5);
    expect(offsets[1]! - offsets[0]!).toBeLessThan(7);
    expect(offsets[2]! - offsets[0]!).toBeGreaterThan(27.5);
    expect(offsets[2]! - offsets[0]!).toBeLessThan(33);
    const body = JSON.parse(attempts[2]!.body);
    expect(body).toMatchObject({ type: 'channel.connected', data: { connection_id: conn.id } });
    expect(
      stripe.webhooks.constructEvent(
        attempts[2]!.body,
        `t=${attempts[2]!.headers['x-service-timestamp']},${attempts[2]!.headers['x-service-signature']}`,
        flaky.secret,
      ).id,
    ).toBe(body.id);

    await waitFor(
      async () => (await s.api('GET', '/channels/webhooks')).body.data.find((e: any) => e.id === dead.id).status === 'disabled',
      10_000,
      'disabled',
    );
    expect(at('/dead').length).toBeGreaterThanOrEqual(20);
    // Disabled: new events do not reach it.
    const before = at('/dead').length;
    await play(conn.id, { thread_id: 'late', text: 'while disabled' });
    await new Promise((r) => setTimeout(r, 1500));
    expect(at('/dead').length).toBe(before);
    // Re-enabled: deliveries resume, signed with the secret it always had.
    failPaths.set('/dead', 0);
    const re = await s.api('PATCH', `/channels/webhooks/${dead.id}`, { body: { status: 'active' } });
    expect(re.body).toMatchObject({ id: dead.id, status: 'active' });
    await play(conn.id, { thread_id: 'back', text: 'after re-enable' });
    await waitFor(async () => at('/dead').length > before, 10_000, 'delivery after re-enable');
    const last = at('/dead').at(-1)!;
    expect(JSON.parse(last.body).data.text).toBe('after re-enable');
    expect(() =>
      stripe.webhooks.constructEvent(last.body, `t=${last.headers['x-service-timestamp']},${last.headers['x-service-signature']}`, dead.secret),
    ).not.toThrow();
  }, 60_000);
});

describe('event mirror', () => {
  it('streams the webhook payloads; a reconnect with Last-Event-ID (or ?after=) replays what was missed, in order, once', async () => {
    const conn = await connectedLoopback();
    const first = collectSse(`${s.base}/channels/events/stream`, s.adminToken, (f) => f.length >= 2);
    await new Promise((r) => setTimeout(r, 200));
    await play(conn.id, { thread_id: 'm', text: 'one', message_id: 'mirror-1' });
    await play(conn.id, { thread_id: 'm', text: 'two', message_id: 'mirror-2' });
    const frames = await first;
    expect(frames.map((f) => f.event)).toEqual(['channel.unmapped_conversation', 'channel.unmapped_conversation']);
    expect(frames.map((f) => f.data.data.text)).toEqual(['one', 'two']);
    for (const f of frames)
      expect(f.data).toEqual({ id: f.id, type: f.event, createdAt: expect.any(String), data: expect.objectContaining({ connection_id: conn.id }) });

    // Missed while disconnected: three, four.
    await play(conn.id, { thread_id: 'm', text: 'three', message_id: 'mirror-3' });
    await play(conn.id, { thread_id: 'm', text: 'four', message_id: 'mirror-4' });
    await waitFor(async () => true, 10);
    const resumed = await collectSse(`${s.base}/channels/events/stream`, s.adminToken, (f) => f.length >= 3, { headers: { 'last-event-id': frames[0]!.id! } });
    expect(resumed.map((f) => f.data.data.text)).toEqual(['two', 'three', 'four']);
    const viaQuery = await collectSse(`${s.base}/channels/events/stream?after=${resumed[1]!.id}`, s.adminToken, (f) => f.length >= 1);
    expect(viaQuery[0]!.data.data.text).toBe('four');
    expectError(await s.api('GET', '/channels/events/stream?after=evt_unknown'), 400, 'invalid_request');
  });
});

describe('universes', () => {
  it("another universe's token gets 404 for our channel resources and its stream sees none of our events", async () => {
    const slug = `chan-${Date.now().toString(36)}`;
    expect((await s.api('POST', '/universes', { body: { slug, name: 'Other' } })).status).toBe(201);
    const other = await s.mintToken('write', { universe: slug });
    const conn = await connectedLoopback();
    const hook = (await s.api('POST', '/channels/webhooks', { body: { url: `${receiverUrl}/mine` } })).body;
    for (const path of [
      `/channels/connections/${conn.id}`,
      `/channels/connections/${conn.id}/capabilities`,
      `/channels/connections/${conn.id}/loopback/outbox`,
    ]) {
      expectError(await s.api('GET', path, { token: other }), 404, 'not_found');
    }
    expectError(await s.api('PATCH', `/channels/webhooks/${hook.id}`, { token: other, body: { status: 'active' } }), 404, 'not_found');
    expectError(await play(conn.id, { thread_id: 'x', text: 'hi' }, other), 404, 'not_found');
    expectError(
      await s.api('POST', '/channels/bindings', { token: other, body: { connection_id: conn.id, thread_id: 'x', destination: { webhook: hook.id } } }),
      404,
      'not_found',
    );
    expect((await s.api('GET', '/channels/connections', { token: other })).body.data).toEqual([]);
    expect((await s.api('GET', '/channels/webhooks', { token: other })).body.data).toEqual([]);

    // Their stream: our event never shows; their own does.
    const theirs = await connectedLoopback(other);
    const seen: SseFrame[] = [];
    const stream = collectSse(`${s.base}/channels/events/stream`, other, (f) => {
      seen.splice(0, seen.length, ...f);
      return f.some((x) => x.data.data.connection_id === theirs.id);
    });
    const mine = collectSse(`${s.base}/channels/events/stream`, s.adminToken, (f) => f.length >= 1);
    await new Promise((r) => setTimeout(r, 200));
    await play(conn.id, { thread_id: 'secret', text: 'ours only' });
    const ourEvent = (await mine)[0]!;
    await new Promise((r) => setTimeout(r, 500));
    await play(theirs.id, { thread_id: 'x', text: 'theirs' }, other);
    const frames = await stream;
    expect(frames.map((f) => f.data.data.connection_id)).toEqual([theirs.id]);
    expect(JSON.stringify(frames)).not.toContain('ours only');
    // Resuming after one of our event ids in their universe is refused, not leaked.
    expectError(await s.api('GET', `/channels/events/stream?after=${ourEvent.id}`, { token: other }), 400, 'invalid_request');
  });
});
