// Events and their webhook deliveries are one transaction: a crash between the commit and the
// announcement (simulated by committing without announcing) loses no delivery, and an event
// transaction that rolls back leaves no delivery behind.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/sessions.js';
import { createAgent } from '../helpers/agents.js';
import { prisma } from '../../src/db/client.js';
import { storeEvents } from '../../src/events/store.js';

// The receiver listens on loopback: allowed for this test by the operator allow-list.
process.env.OUTBOUND_ALLOW ??= '127.0.0.1';

let s: TestServer;
let receiver: http.Server;
let receiverUrl: string;
const received: { type: string; id: string }[] = [];

beforeAll(async () => {
  s = await startTestServer();
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push(JSON.parse(body));
      res.writeHead(204).end();
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

describe('event outbox', () => {
  it('a delivery committed with its event is delivered although nothing announced it', async () => {
    const hook = await s.api('POST', '/webhooks', { body: { url: `${receiverUrl}/events`, events: ['session.error'] } });
    expect(hook.status).toBe(201);
    const agent = await createAgent(s);
    const created = await s.api('POST', '/sessions', { body: { agent: agent.id } });
    const sessionId = created.body.session.id as string;

    // Commit the event and its outbox row, then "crash": no announceEvents, no nudge.
    const batch = await prisma.$transaction((tx) =>
      storeEvents(tx, sessionId, [{ type: 'session.error', fields: { error: { type: 'engine_error', message: 'injected', retry_status: 'exhausted' } } }]),
    );
    expect(batch.deliveries).toBe(1);
    const eventId = batch.stored[0]!.event.id;
    // The dispatcher's poll finds the row and delivers it (thin body, the event's own id).
    await waitFor(async () => received.some((r) => r.id === eventId), 10_000, 'the delivery');
    expect(received.find((r) => r.id === eventId)).toMatchObject({ id: eventId, type: 'session.error', data: { type: 'session', id: sessionId } });
    // History has the event too: both or neither.
    const history = await s.api('GET', `/sessions/${sessionId}/events`);
    expect(history.body.events.map((e: { id: string }) => e.id)).toContain(eventId);
  });

  it('session.requires_action is written in the statement of the status_idle that stops the turn, one per waiting call', async () => {
    const hook = await s.api('POST', '/webhooks', { body: { url: `${receiverUrl}/actions`, events: ['session.requires_action'] } });
    expect(hook.status).toBe(201);
    const agent = await createAgent(s);
    const sessionId = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body.session.id as string;
    const toolUses = ['evt_01waitingcallnumberone00', 'evt_01waitingcallnumbertwo00'];

    // Commit the stop and "crash" before any announcement: the deliveries are already there.
    const batch = await prisma.$transaction((tx) =>
      storeEvents(tx, sessionId, [{ type: 'session.status_idle', fields: { stop_reason: { type: 'requires_action', event_ids: toolUses } } }]),
    );
    expect(batch.deliveries).toBe(2);
    const rows = await prisma.webhookDelivery.findMany({ where: { eventId: { in: toolUses } }, select: { eventId: true, eventType: true } });
    expect(rows.sort((a, b) => a.eventId.localeCompare(b.eventId))).toEqual(toolUses.map((eventId) => ({ eventId, eventType: 'session.requires_action' })));
    await waitFor(async () => toolUses.every((id) => received.some((r) => r.id === id)), 10_000, 'both deliveries');
    expect(received.find((r) => r.id === toolUses[0])).toMatchObject({ type: 'session.requires_action', data: { type: 'session', id: sessionId } });

    // An idle that stops for another reason derives nothing.
    const other = await prisma.$transaction((tx) =>
      storeEvents(tx, sessionId, [{ type: 'session.status_idle', fields: { stop_reason: { type: 'end_turn' } } }]),
    );
    expect(other.deliveries).toBe(0);
  });

  it('an event transaction that rolls back leaves neither the event nor a delivery', async () => {
    const agent = await createAgent(s);
    const created = await s.api('POST', '/sessions', { body: { agent: agent.id } });
    const sessionId = created.body.session.id as string;
    const before = await prisma.webhookDelivery.count();
    await expect(
      prisma.$transaction(async (tx) => {
        await storeEvents(tx, sessionId, [
          { type: 'session.error', fields: { error: { type: 'engine_error', message: 'rolled back', retry_status: 'exhausted' } } },
        ]);
        throw new Error('crash inside the transaction');
      }),
    ).rejects.toThrow('crash inside the transaction');
    expect(await prisma.webhookDelivery.count()).toBe(before);
    const history = await s.api('GET', `/sessions/${sessionId}/events`);
    expect(history.body.events.filter((e: { type: string }) => e.type === 'session.error')).toEqual([]);
  });
});
