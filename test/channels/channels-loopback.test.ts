// The loopback platform end to end over HTTP: the hosted connect page and its claim (303 to
// callback_url with connection_id, status and metadata), routing (thread binding → channel
// webhook with a signature stripe verifies; connection binding → session turn with the reply in
// the outbox; no binding → channel.unmapped_conversation), posting into threads with `done`,
// proactive deliveries, capabilities, binding rules, a refused turn, loopback attachments.
process.env.OUTBOUND_ALLOW ??= '127.0.0.0/8,::1';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, waitFor, history } from '../helpers/sessions.js';
import { expectError } from '../helpers/agents.js';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

let s: TestServer;
let fake: FakeProvider;
let receiver: http.Server;
let receiverUrl: string;
const received: Received[] = [];
const stripe = new Stripe('sk_test_unused');

beforeAll(async () => {
  fake = await startFakeProvider();
  s = await startTestServer({ anthropicApiKey: 'sk-ant', anthropicBaseUrl: fake.anthropicBaseUrl });
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
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
beforeEach(() => fake.reset());

const tokenOf = (conn: any) => new URL(conn.connect.url).pathname.split('/').pop()!;

async function connectedLoopback(body: Record<string, unknown> = {}) {
  const conn = (await s.api('POST', '/channels/connections', { body: { platform: 'loopback', ...body } })).body;
  const claim = await fetch(conn.connect.url, { method: 'POST', redirect: 'manual' });
  expect([200, 303]).toContain(claim.status);
  return (await s.api('GET', `/channels/connections/${conn.id}`)).body;
}

const play = (connId: string, body: Record<string, unknown>) => s.api('POST', `/channels/connections/${connId}/loopback/inbound`, { body });
const outbox = async (connId: string) => (await s.api('GET', `/channels/connections/${connId}/loopback/outbox`)).body.data as any[];
const deliveriesOf = (type: string) => received.map((r) => ({ ...r, event: JSON.parse(r.body) })).filter((r) => r.event.type === type);

describe('hosted connect page', () => {
  it('GET shows an HTML page with a claim button; POST claims it and redirects 303 to callback_url', async () => {
    const created = await s.api('POST', '/channels/connections', {
      body: { platform: 'loopback', label: 'Dev surface', metadata: { tenant: 't-1', n: 2 }, callback_url: 'https://app.example.com/done?from=agent' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const conn = created.body;
    expect(conn).toMatchObject({
      platform: 'loopback',
      status: 'PENDING',
      channel_id: null,
      bound_session: null,
      connect: { url: `${s.url}/v1/connect/${tokenOf(conn)}`, expires_at: expect.any(String) },
    });
    const page = await fetch(conn.connect.url, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('Dev surface');
    expect(html).toMatch(/<form method="post">/);
    expect(html).not.toMatch(/https?:\/\/(?!app\.example)[a-z]/i); // nothing loaded from elsewhere: works offline

    const claim = await fetch(conn.connect.url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(claim.status).toBe(303);
    const location = new URL(claim.headers.get('location')!);
    expect(location.origin + location.pathname).toBe('https://app.example.com/done');
    expect(location.searchParams.get('from')).toBe('agent');
    expect(location.searchParams.get('connection_id')).toBe(conn.id);
    expect(location.searchParams.get('status')).toBe('CONNECTED');
    expect(JSON.parse(location.searchParams.get('metadata')!)).toEqual({ tenant: 't-1', n: 2 });
    const now = (await s.api('GET', `/channels/connections/${conn.id}`)).body;
    expect(now).toMatchObject({ status: 'CONNECTED', channel_id: expect.stringMatching(/^loopback-/) });
    expect(now).not.toHaveProperty('connect');
    // Spent: the page and the claim answer 404 now.
    expectError(await s.api('GET', `/connect/${tokenOf(conn)}`, { token: null }), 404, 'not_found');
    expect((await fetch(conn.connect.url, { method: 'POST', redirect: 'manual' })).status).toBe(404);
  });

  it('callback_url only for link flows and only a valid URL; unknown tokens are 404', async () => {
    expectError(await s.api('POST', '/channels/connections', { body: { platform: 'loopback', callback_url: 'javascript:alert(1)' } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/channels/connections', { body: { platform: 'loopback', invite_user: 'U1' } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/channels/connections', { body: { platform: 'loopback', app: 'chapp_x' } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/channels/connections', { body: { platform: 'telegram' } }), 422, 'invalid_spec');
    expectError(await s.api('POST', '/channels/connections', { body: { platform: 'imessage' } }), 501, 'coming_soon');
    expectError(await s.api('POST', '/channels/connections', { body: { platform: 'loopback', label: 'x'.repeat(121) } }), 400, 'invalid_request');
    expectError(await s.api('GET', '/connect/not-a-real-token', { token: null }), 404, 'not_found');
  });
});

describe('routing', () => {
  it('a thread bound to a channel webhook gets message.received, signed so stripe verifies it; posting answers into the thread', async () => {
    const hook = await s.api('POST', '/channels/webhooks', { body: { url: `${receiverUrl}/route` } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    expect(hook.body).toEqual({
      id: expect.stringMatching(/^whep_/),
      url: `${receiverUrl}/route`,
      events: ['message.received'],
      status: 'active',
      secret: expect.stringMatching(/^whsec_/),
    });
    const conn = await connectedLoopback({ label: 'Helpdesk', metadata: { tenant: 'acme' } });
    const binding = await s.api('POST', '/channels/bindings', {
      body: { connection_id: conn.id, thread_id: 'T-1', destination: { webhook: hook.body.id }, route_key: 'support' },
    });
    expect(binding.status, JSON.stringify(binding.body)).toBe(201);
    expect(binding.body).toEqual({
      id: expect.stringMatching(/^chbind_/),
      connection_id: conn.id,
      thread_id: 'T-1',
      destination: { webhook: hook.body.id },
      is_default: false,
      status: 'active',
      route_key: 'support',
    });

    const played = await play(conn.id, { thread_id: 'T-1', text: 'my order is late', author: 'Grace', message_id: 'm-100' });
    expect(played.status).toBe(202);
    expect(played.body).toEqual({ message_id: 'm-100', thread_id: 'T-1', duplicate: false });
    await waitFor(async () => deliveriesOf('message.received').length > 0, 10_000, 'delivery');
    const got = deliveriesOf('message.received')[0]!;
    expect(got.event).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'message.received',
      createdAt: expect.any(String),
      data: expect.objectContaining({
        connection_id: conn.id,
        app_id: null,
        thread_id: 'T-1',
        message_id: 'm-100',
        text: 'my order is late',
        conversation: { id: 'T-1', is_dm: true, type: 'loopback', title: null },
        author: { id: 'Grace', name: 'Grace', username: null },
        metadata: { tenant: 'acme' },
        route_key: 'support',
      }),
    });
    expect(got.headers['x-service-event']).toBe('message.received');
    expect(got.headers['x-service-delivery']).toMatch(/^whdl_/);
    const ts = got.headers['x-service-timestamp'] as string;
    const sig = got.headers['x-service-signature'] as string;
    expect(stripe.webhooks.constructEvent(got.body, `t=${ts},${sig}`, hook.body.secret).id).toBe(got.event.id);
    expect(() => stripe.webhooks.constructEvent(got.body, `t=${ts},${sig}`, 'whsec_other')).toThrow();

    // A working marker went up for the message; the integrator answers and says done.
    await waitFor(async () => (await outbox(conn.id)).some((m) => m.kind === 'typing'), 5000, 'marker');
    const posted = await s.api('POST', `/channels/connections/${conn.id}/threads/T-1/messages`, {
      body: {
        parts: [
          { type: 'text', text: 'Sorry!' },
          { type: 'markdown', text: 'It ships **today**.' },
        ],
        display_name: 'Ops',
        done: true,
      },
    });
    expect(posted.status, JSON.stringify(posted.body)).toBe(200);
    expect(posted.body).toEqual({ connection_id: conn.id, thread_id: 'T-1', message_id: expect.stringMatching(/^lbmsg_/) });
    const box = await outbox(conn.id);
    const message = box.find((m) => m.kind === 'message')!;
    expect(message).toMatchObject({
      thread_id: 'T-1',
      text: 'Sorry!\n\nIt ships **today**.',
      display_name: 'Ops',
      reply_to: 'm-100',
      parts: [{ type: 'markdown', text: 'Sorry!\n\nIt ships **today**.' }],
    });
    expect(box.at(-1)).toMatchObject({ kind: 'typing_done', reply_to: 'm-100' });

    // The same message id again: accepted as a duplicate, delivered once.
    expect((await play(conn.id, { thread_id: 'T-1', text: 'my order is late', message_id: 'm-100' })).body.duplicate).toBe(true);
    await new Promise((r) => setTimeout(r, 700));
    expect(deliveriesOf('message.received').filter((d) => d.event.data.message_id === 'm-100')).toHaveLength(1);
  });

  it('no binding: channel.unmapped_conversation reaches subscribed endpoints and the mirror', async () => {
    const hook = (await s.api('POST', '/channels/webhooks', { body: { url: `${receiverUrl}/unmapped`, events: ['channel.unmapped_conversation'] } })).body;
    const conn = await connectedLoopback();
    await play(conn.id, { thread_id: 'lost', text: 'anyone?', message_id: 'u-1' });
    await waitFor(
      async () => received.some((r) => JSON.parse(r.body).type === 'channel.unmapped_conversation' && JSON.parse(r.body).data.connection_id === conn.id),
      10_000,
      'unmapped',
    );
    const event = deliveriesOf('channel.unmapped_conversation').find((d) => d.event.data.connection_id === conn.id)!;
    expect(event.event.data).toMatchObject({ thread_id: 'lost', message_id: 'u-1', text: 'anyone?' });
    expect(
      stripe.webhooks.constructEvent(event.body, `t=${event.headers['x-service-timestamp']},${event.headers['x-service-signature']}`, hook.secret).type,
    ).toBe('channel.unmapped_conversation');
    expect((await outbox(conn.id)).filter((m) => m.kind === 'message')).toHaveLength(0);
  });

  it('a connection bound to a session: each message is a turn, the answer lands in the outbox; a thread binding wins over it', async () => {
    const { session } = await readySession(s, {}, { title: 'Helpdesk session' });
    const conn = await connectedLoopback({ destination: { session: session.id } });
    expect(conn.bound_session).toEqual({ id: session.id, label: 'Helpdesk session' });
    fake.enqueue({ kind: 'text', text: 'Happy to help.' });
    await play(conn.id, { thread_id: 'A', text: 'hello agent', author: 'Lin' });
    await waitFor(async () => (await outbox(conn.id)).some((m) => m.kind === 'message'), 15_000, 'reply');
    const reply = (await outbox(conn.id)).find((m) => m.kind === 'message')!;
    expect(reply).toMatchObject({ thread_id: 'A', text: 'Happy to help.', reply_to: expect.any(String) });
    const kinds = (await outbox(conn.id)).map((m) => m.kind);
    expect(kinds.indexOf('typing')).toBeLessThan(kinds.indexOf('message'));
    expect((await history(s, session.id)).find((e) => e.type === 'user.message').content).toEqual([{ type: 'text', text: 'hello agent' }]);

    // Thread B goes to a webhook; the connection binding still takes every other thread.
    const hook = (await s.api('POST', '/channels/webhooks', { body: { url: `${receiverUrl}/b` } })).body;
    await s.api('POST', '/channels/bindings', { body: { connection_id: conn.id, thread_id: 'B', destination: { webhook: hook.id } } });
    await play(conn.id, { thread_id: 'B', text: 'to the webhook' });
    await waitFor(async () => deliveriesOf('message.received').some((d) => d.event.data.text === 'to the webhook'), 10_000, 'thread binding');
    expect((await history(s, session.id)).filter((e) => e.type === 'user.message')).toHaveLength(1);

    // PUT replaces the slot, DELETE clears it.
    const put = await s.api('PUT', `/channels/connections/${conn.id}/binding`, { body: { destination: { webhook: hook.id } } });
    expect(put.body).toMatchObject({ connection_id: conn.id, thread_id: null, destination: { webhook: hook.id }, is_default: true, status: 'active' });
    expect((await s.api('GET', `/channels/connections/${conn.id}`)).body.bound_session).toBeNull();
    expect((await s.api('DELETE', `/channels/connections/${conn.id}/binding`)).body).toEqual({ ok: true });
    expectError(await s.api('DELETE', `/channels/connections/${conn.id}/binding`), 404, 'not_found');
    const listed = (await s.api('GET', `/channels/bindings?connection_id=${conn.id}`)).body.data;
    expect(listed.map((b: any) => b.thread_id)).toEqual(['B']);
  });

  it('messages arriving during a turn queue: both reach the session in order, one answer per turn', async () => {
    const { session } = await readySession(s);
    const conn = await connectedLoopback({ destination: { session: session.id } });
    fake.enqueue({ kind: 'text', text: 'first answer', chunks: 4, delayMs: 150 }, { kind: 'text', text: 'second answer' });
    await play(conn.id, { thread_id: 'q', text: 'one' });
    await waitFor(async () => (await history(s, session.id)).some((e) => e.type === 'session.status_running'), 10_000, 'turn started');
    await play(conn.id, { thread_id: 'q', text: 'two' });
    await waitFor(async () => (await outbox(conn.id)).filter((m) => m.kind === 'message').length >= 2, 20_000, 'two answers');
    expect((await outbox(conn.id)).filter((m) => m.kind === 'message').map((m) => m.text)).toEqual(['first answer', 'second answer']);
    expect((await history(s, session.id)).filter((e) => e.type === 'user.message').map((e) => e.content[0].text)).toEqual(['one', 'two']);
  });

  it('a turn the session refuses emits turn.refused and tells the end user', async () => {
    const { session } = await readySession(s);
    const conn = await connectedLoopback({ destination: { session: session.id } });
    (await s.api('POST', '/channels/webhooks', { body: { url: `${receiverUrl}/refused`, events: ['turn.refused'] } })).body;
    await s.api('POST', `/sessions/${session.id}/archive`);
    await play(conn.id, { thread_id: 'r', text: 'are you there?' });
    await waitFor(async () => deliveriesOf('turn.refused').some((d) => d.event.data.connection_id === conn.id), 10_000, 'turn.refused');
    expect(deliveriesOf('turn.refused').find((d) => d.event.data.connection_id === conn.id)!.event.data).toMatchObject({
      session_id: session.id,
      thread_id: 'r',
      error: { code: 'session_archived' },
    });
    await waitFor(async () => (await outbox(conn.id)).some((m) => m.kind === 'message'), 5000, 'notice');
    expect((await outbox(conn.id)).find((m) => m.kind === 'message')!.text).toMatch(/closed/);
    // Binding to an archived session is refused up front.
    expectError(await s.api('PUT', `/channels/connections/${conn.id}/binding`, { body: { destination: { session: session.id } } }), 400, 'session_archived');
  });

  it('a loopback attachment reaches the webhook as a downloadable file', async () => {
    const hook = (await s.api('POST', '/channels/webhooks', { body: { url: `${receiverUrl}/files` } })).body;
    const conn = await connectedLoopback({ destination: { webhook: hook.id } });
    const csv = Buffer.from('a,b\n1,2\n');
    await play(conn.id, { thread_id: 'f', attachments: [{ name: 'data.csv', mime_type: 'text/csv', data: csv.toString('base64') }] });
    await waitFor(async () => deliveriesOf('message.received').some((d) => d.event.data.connection_id === conn.id), 10_000, 'file delivery');
    const data = deliveriesOf('message.received').find((d) => d.event.data.connection_id === conn.id)!.event.data;
    expect(data.text).toBe('');
    expect(data.attachments).toEqual([
      { file_id: expect.stringMatching(/^file_/), type: 'document', name: 'data.csv', mime_type: 'text/csv', size_bytes: csv.length },
    ]);
    const content = await s.fetch(`${s.base}/files/${data.attachments[0].file_id}/content`, { headers: { authorization: `Bearer ${s.adminToken}` } });
    expect(Buffer.from(await content.arrayBuffer()).equals(csv)).toBe(true);
    // It is not one of the universe's uploads (GET /files without scope_id lists only those).
    const uploads = await s.api('GET', '/files?limit=100');
    expect(uploads.status).toBe(200);
    expect(uploads.body.data.map((f: { id: string }) => f.id)).not.toContain(data.attachments[0].file_id);
    expect((await s.api('GET', `/files/${data.attachments[0].file_id}`)).status).toBe(200);
    expectError(await play(conn.id, { thread_id: 'f' }), 400, 'invalid_request');
  });
});

describe('posting, deliveries, capabilities, bindings', () => {
  it('a proactive delivery posts into the latest thread and binds it to the destination', async () => {
    const { session } = await readySession(s);
    const conn = await connectedLoopback();
    const res = await s.api('POST', `/channels/connections/${conn.id}/deliveries`, {
      body: { destination: { session: session.id }, parts: [{ type: 'text', text: 'Your report is ready.' }] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toEqual({ id: expect.stringMatching(/^chdlv_/), connection_id: conn.id, thread_id: 'default', status: 'queued' });
    await waitFor(async () => (await outbox(conn.id)).some((m) => m.text === 'Your report is ready.'), 5000, 'posted');
    const bindings = (await s.api('GET', `/channels/bindings?connection_id=${conn.id}`)).body.data;
    expect(bindings).toEqual([expect.objectContaining({ thread_id: 'default', destination: { session: session.id }, is_default: false })]);
    expectError(
      await s.api('POST', `/channels/connections/${conn.id}/deliveries`, {
        body: { destination: { session: session.id, webhook: 'whep_x' }, parts: [{ type: 'text', text: 'x' }] },
      }),
      400,
      'invalid_request',
    );
    expectError(
      await s.api('POST', `/channels/connections/${conn.id}/deliveries`, { body: { destination: { session: session.id }, parts: [] } }),
      400,
      'invalid_request',
    );
  });

  it('posting validates parts, display_name and raw payloads; a PENDING connection cannot post', async () => {
    const conn = await connectedLoopback();
    const post = (body: unknown) => s.api('POST', `/channels/connections/${conn.id}/threads/t/messages`, { body });
    expectError(await post({ parts: [] }), 400, 'invalid_request');
    expectError(await post({ parts: [{ type: 'text', text: 'x' }], display_name: 'n'.repeat(81) }), 400, 'invalid_request');
    expectError(await post({ parts: [{ type: 'raw', platform: 'loopback', payload: 'not json' }] }), 400, 'invalid_request');
    expectError(await post({ parts: [{ type: 'raw', platform: 'telegram', payload: '{"text":"x"}' }] }), 400, 'invalid_request');
    const raw = await post({ parts: [{ type: 'raw', platform: 'loopback', payload: '{"card":{"title":"Hi"}}' }] });
    expect(raw.status).toBe(200);
    expect((await outbox(conn.id)).at(-1)).toMatchObject({
      kind: 'message',
      parts: [{ type: 'raw', platform: 'loopback', payload: '{"card":{"title":"Hi"}}' }],
    });
    const pending = (await s.api('POST', '/channels/connections', { body: { platform: 'loopback' } })).body;
    expectError(
      await s.api('POST', `/channels/connections/${pending.id}/threads/t/messages`, { body: { parts: [{ type: 'text', text: 'x' }] } }),
      409,
      'conflict',
    );
    expectError(await play(pending.id, { thread_id: 't', text: 'x' }), 409, 'conflict');
  });

  it('capabilities per platform', async () => {
    const conn = await connectedLoopback();
    const caps = await s.api('GET', `/channels/connections/${conn.id}/capabilities`);
    expect(caps.body).toEqual({
      connection_id: conn.id,
      platform: 'loopback',
      capabilities: { threads: true, reactions: false, markers: true, proactive: true, markdown: true, modals: false, ephemeral: false, streaming: false },
    });
  });

  it('binding rules: exactly one destination, thread_id and route_key limits, one binding per thread, unknown ids 404', async () => {
    const conn = await connectedLoopback();
    const hook = (await s.api('POST', '/channels/webhooks', { body: { url: `${receiverUrl}/rules` } })).body;
    const bind = (body: Record<string, unknown>) =>
      s.api('POST', '/channels/bindings', { body: { connection_id: conn.id, thread_id: 'x', destination: { webhook: hook.id }, ...body } });
    expectError(await bind({ destination: {} }), 400, 'invalid_request');
    expectError(await bind({ destination: { webhook: hook.id, session: 'sess_x' } }), 400, 'invalid_request');
    expectError(await bind({ thread_id: undefined }), 400, 'invalid_request');
    expectError(await bind({ route_key: 'k'.repeat(61) }), 400, 'invalid_request');
    expectError(await bind({ destination: { webhook: 'whep_01jz0000000000000000000000' } }), 404, 'not_found');
    expectError(await bind({ destination: { session: 'sess_01jz0000000000000000000000' } }), 404, 'not_found');
    expectError(await bind({ connection_id: 'chconn_01jz0000000000000000000000' }), 404, 'not_found');
    const ok = await bind({});
    expect(ok.status).toBe(201);
    expect(ok.body.route_key).toBe('x');
    expectError(await bind({}), 409, 'conflict');
    expect((await s.api('DELETE', `/channels/bindings/${ok.body.id}`)).body).toEqual({ ok: true });
    expectError(await s.api('DELETE', `/channels/bindings/${ok.body.id}`), 404, 'not_found');
    // Deleting the endpoint removes the bindings routed to it.
    const again = (await bind({})).body;
    await s.api('DELETE', `/channels/webhooks/${hook.id}`);
    expect((await s.api('GET', '/channels/bindings')).body.data.map((b: any) => b.id)).not.toContain(again.id);
  });

  it('deleting a connection removes it and its bindings; a connected one emits channel.disconnected, a pending one does not', async () => {
    const { session } = await readySession(s);
    await s.api('POST', '/channels/webhooks', { body: { url: `${receiverUrl}/gone`, events: ['channel.disconnected'] } });
    const conn = await connectedLoopback({ destination: { session: session.id }, metadata: { tenant: 't-del' } });
    const pending = (await s.api('POST', '/channels/connections', { body: { platform: 'loopback' } })).body;
    expect((await s.api('DELETE', `/channels/connections/${pending.id}`)).body).toEqual({ ok: true });
    expect((await s.api('DELETE', `/channels/connections/${conn.id}`)).body).toEqual({ ok: true });
    await waitFor(async () => deliveriesOf('channel.disconnected').some((d) => d.event.data.connection_id === conn.id), 10_000, 'channel.disconnected');
    expect(deliveriesOf('channel.disconnected').find((d) => d.event.data.connection_id === conn.id)!.event.data).toMatchObject({
      platform: 'loopback',
      channel_id: conn.channel_id,
      metadata: { tenant: 't-del' },
    });
    expect(deliveriesOf('channel.disconnected').some((d) => d.event.data.connection_id === pending.id)).toBe(false);
    expectError(await s.api('GET', `/channels/connections/${conn.id}`), 404, 'not_found');
    expect((await s.api('GET', '/channels/bindings')).body.data.map((b: any) => b.connection_id)).not.toContain(conn.id);
  });
});

describe('inbound messages a stopped process left behind', () => {
  it('the sweep processes a received row and one whose processing lease ran out; a live lease is left alone', async () => {
    const { prisma } = await import('../../src/db/client.js');
    const universeId = (await prisma.universe.findFirstOrThrow()).id;
    const message = {
      kind: 'message',
      dedupeId: 'x',
      surfaceId: 'loopback',
      threadId: 'left-behind',
      messageId: 'm1',
      text: 'hello',
      conversation: { id: 'left-behind', is_dm: true, type: null, title: null },
      author: { id: 'u1', name: null, username: null },
      attachments: [],
    };
    // Rows as a process that stopped left them: its connection is gone meanwhile (so each is
    // recorded as ignored when processed).
    const row = (id: string, data: Record<string, unknown>) =>
      prisma.channelInbound.create({
        data: {
          id,
          universeId,
          connectionId: 'chconn_gone',
          dedupeKey: `gone:${id}`,
          payload: { appId: null, connectionId: 'chconn_gone', message: { ...message, dedupeId: id } },
          ...data,
        },
      });
    const now = Date.now();
    await row('chin_left_received', { createdAt: new Date(now - 60_000) });
    await row('chin_left_expired', { status: 'processing', lockedUntil: new Date(now - 1_000), createdAt: new Date(now - 60_000) });
    await row('chin_left_leased', { status: 'processing', lockedUntil: new Date(now + 600_000), createdAt: new Date(now - 60_000) });
    const rows = () => prisma.channelInbound.findMany({ where: { id: { startsWith: 'chin_left_' } }, orderBy: { id: 'asc' } });
    await waitFor(async () => (await rows()).filter((r) => r.status === 'ignored').length === 2, 15_000);
    const [expired, leased, received] = await rows();
    for (const done of [expired!, received!]) {
      expect(done.note).toBe('ignored: the connection is not connected');
      expect(done.lockedUntil).toBeNull();
      expect(Math.abs(done.processedAt!.getTime() - Date.now())).toBeLessThan(20_000); // stored as UTC
    }
    expect(leased!.status).toBe('processing');
    expect(leased!.processedAt).toBeNull();
  }, 30_000);
});
