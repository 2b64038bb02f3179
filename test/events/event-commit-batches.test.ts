// Commits of many sessions at the same moment share statements (src/events/commit-queue.ts,
// store-many.ts): each session's events stay numbered without gaps, in the order they were
// committed, each caller gets its own events back, webhook outbox rows are written as for a
// session alone, a session deleted meanwhile fails its own commits only, and text that needs
// escaping in SQL or JSON comes back exactly as given, alone or shared.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { idleSessions as idleSessionsOf, status, textOf } from '../helpers/status-events.js';
import { prisma } from '../../src/db/client.js';
import { commitEvents, eventsAfter, type NewEvent, type StoredEvent } from '../../src/events/store.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

const idleSessions = (n: number) => idleSessionsOf(s, n);

describe('commits of many sessions at once', () => {
  it('keep every session gap-free and in commit order, each caller answered with its own events', async () => {
    const ids = await idleSessions(6);
    const before = new Map(await Promise.all(ids.map(async (id) => [id, (await eventsAfter(id, 0)).length] as const)));
    // Five commits per session asked for at once (none awaited before the next), some of two events.
    const commits = ids.flatMap((id) =>
      Array.from({ length: 5 }, (_, k) => ({
        id,
        k,
        done: commitEvents(id, k % 2 ? [status(`${k}a`), status(`${k}b`)] : [status(`${k}`)]),
      })),
    );
    const answers = await Promise.all(commits.map((c) => c.done));
    for (const id of ids) {
      const history = (await eventsAfter(id, 0)).slice(before.get(id));
      expect(history.map(textOf)).toEqual(['0', '1a', '1b', '2', '3a', '3b', '4']);
      const first = history[0]!.seq;
      expect(history.map((e) => e.seq)).toEqual(history.map((_, i) => first + i));
      // Each commit's answer is exactly its stored rows.
      const own = commits.flatMap((c, i) => (c.id === id ? answers[i]! : []));
      expect(own.map((e) => [e.seq, e.event.id])).toEqual(history.map((e) => [e.seq, e.event.id]));
      expect(new Set(history.map((e) => e.event.id)).size).toBe(history.length);
      expect(history.every((e) => e.event.sessionId === id)).toBe(true);
    }
    // They shared statements: the events of different sessions carry one statement's time.
    const firstAt = await Promise.all(ids.map(async (id) => (await eventsAfter(id, 0)).slice(before.get(id))[0]!.event.at));
    expect(new Set(firstAt).size).toBeLessThan(ids.length);
  });

  it('write the webhook outbox rows of every session, and a deleted session fails only its own commit', async () => {
    const hook = await s.api('POST', '/webhooks', { body: { url: 'https://hooks.example.test/events', events: ['session.error'] } });
    expect(hook.status).toBe(201);
    const [a, b, gone] = await idleSessions(3);
    await prisma.session.delete({ where: { id: gone! } });
    const error: NewEvent = { type: 'session.error', fields: { error: { type: 'engine_error', message: 'batched', retry_status: 'exhausted' } } };
    const [ra, rb, rg] = await Promise.allSettled([commitEvents(a!, [error]), commitEvents(b!, [error]), commitEvents(gone!, [error])]);
    expect(rg.status).toBe('rejected');
    expect((rg as PromiseRejectedResult).reason).toMatchObject({ code: 'not_found' });
    const stored = [ra, rb].map((r) => {
      expect(r.status).toBe('fulfilled');
      return (r as PromiseFulfilledResult<StoredEvent[]>).value;
    });
    // session.error is followed by its agent.status `error` part; the delivery is for the error.
    const errorIds = stored.map((events) => events.find((e) => e.event.type === 'session.error')!.event.id);
    const deliveries = await prisma.webhookDelivery.findMany({ where: { eventId: { in: errorIds } }, select: { eventId: true, eventType: true, body: true } });
    expect(deliveries.map((d) => d.eventId).sort()).toEqual([...errorIds].sort());
    for (const [i, sessionId] of [a!, b!].entries()) {
      const d = deliveries.find((x) => x.eventId === errorIds[i])!;
      expect(d.eventType).toBe('session.error');
      expect(JSON.parse(d.body)).toMatchObject({ id: errorIds[i], type: 'session.error', data: { type: 'session', id: sessionId } });
    }
  });

  it('store text that SQL or JSON would escape exactly as given, alone and in a shared statement', async () => {
    const awkward = [
      'quotes " and \' and \\ backslashes \\" \\\\',
      '{braces}, commas, NULL, null, "NULL", {"a":[1,"b"]}',
      'lines\nand\r\ttabs \u2028 \u2029 \u0001',
      'unicode: é ß 中文 😀 👩‍👩‍👧 \ud83d\ude00',
      '',
    ];
    const [alone, ...shared] = await idleSessions(4);
    const lone = await commitEvents(alone!, awkward.map(status));
    const together = await Promise.all(shared.map((id) => commitEvents(id, awkward.map(status))));
    for (const [id, answer] of [[alone!, lone] as const, ...shared.map((id, i) => [id, together[i]!] as const)]) {
      expect(answer.map(textOf)).toEqual(awkward);
      const stored = (await eventsAfter(id, 0)).slice(-awkward.length);
      expect(stored.map(textOf)).toEqual(awkward);
      expect(stored.map((e) => e.event.id)).toEqual(answer.map((e) => e.event.id));
    }
  });
});
