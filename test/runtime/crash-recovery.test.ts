// kill -9 at a bad moment: a turn streaming, a message queued behind it, one webhook delivery
// waiting for its 5 s retry and another with its attempt in flight. After the restart nothing
// accepted is lost and nothing is delivered twice; the restarted instance recovers its own turn
// and its own in-flight delivery at once (RUNNER_STALE_MS and the webhook lease are set far
// beyond the test, so only the own-claims recovery can explain it). On PostgreSQL + Redis a
// second instance, started meanwhile, leaves the dead instance's turn alone (it waits for the
// heartbeat timeout as before). On PGlite (a data directory) and PostgreSQL + Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startChildServer, api, type ChildServer } from '../helpers/child-server.js';
import {
  CONFIGS,
  deploymentEnv,
  dropSchemas,
  freePort,
  history,
  idleSession,
  say,
  startReceiver,
  waitForHistory,
  type Delivery,
} from '../helpers/durability.js';

let fake: FakeProvider;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const children: ChildServer[] = [];

beforeAll(async () => {
  fake = await startFakeProvider();
  // /flaky fails its first attempt, /slow never answers its first; everything else succeeds.
  receiver = await startReceiver((path, n) => (path.startsWith('/flaky') && n === 0 ? 500 : path.startsWith('/slow') && n === 0 ? 'hang' : 204));
});
afterAll(async () => {
  await Promise.all(children.map((c) => c.kill('SIGKILL')));
  receiver?.close();
  await fake?.close();
  await dropSchemas();
});

const waitUntil = async (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; received: ${JSON.stringify(receiver.deliveries.map((d) => [d.path, d.type, d.answered]))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};
const at = (path: string) => receiver.deliveries.filter((d) => d.path === path);

describe.each(CONFIGS)('kill -9 mid-turn with a queued message and webhooks pending and in flight ($name)', ({ postgres }) => {
  it('after the restart: nothing lost, nothing delivered twice, own turn and own in-flight delivery recovered at once', async () => {
    const port = await freePort();
    const tag = postgres ? 'pg' : 'lite';
    const { env, token } = deploymentEnv({
      postgres,
      providerUrl: fake.anthropicBaseUrl,
      extra: { PORT: String(port), RUNNER_STALE_MS: '600000', WEBHOOK_TIMEOUT_MS: '120000' },
    });
    const first = await startChildServer(env);
    children.push(first);
    const { session } = await idleSession(first.base, token);
    const hook = (path: string, events: string[]) => api(first.base, token, 'POST', '/webhooks', { url: `${receiver.url}${path}`, events });
    expect((await hook(`/flaky-${tag}`, ['agent.created'])).status).toBe(201);
    expect((await hook(`/slow-${tag}`, ['agent.updated'])).status).toBe(201);
    expect((await hook(`/all-${tag}`, ['session.status_running', 'session.status_idle', 'session.error'])).status).toBe(201);

    // A turn streaming (the provider hangs after its first words), a message queued behind it.
    fake.enqueue({ kind: 'hang', text: 'working on it' });
    expect((await say(first.base, token, session.id, 'long job')).status).toBe(202);
    await waitForHistory(first.base, token, session.id, (ev) => ev.some((e) => e.type === 'agent.message'));
    expect((await say(first.base, token, session.id, 'queued while running')).status).toBe(202);
    // One delivery fails its first attempt (retry due 5 s after the event), one hangs in flight.
    const agent = (await api(first.base, token, 'POST', '/agents', {})).body.agent;
    expect((await api(first.base, token, 'PATCH', `/agents/${agent.id}`, { metadata: { v: '1' } })).status).toBe(200);
    await waitUntil('the failed and the hanging attempt', () => at(`/flaky-${tag}`).length === 1 && at(`/slow-${tag}`).length === 1);
    const slowEventAt = at(`/slow-${tag}`)[0]!.at;

    await first.kill('SIGKILL');
    const killedAt = Date.now();

    if (postgres) {
      // Another instance does not touch the dead one's turn or lease before their timeouts.
      const other = await startChildServer({ ...env, PORT: String(await freePort()) });
      children.push(other);
      await new Promise((r) => setTimeout(r, 3000));
      expect((await api(other.base, token, 'GET', `/sessions/${session.id}`)).body.session.status).toBe('running');
      expect(at(`/slow-${tag}`)).toHaveLength(1);
      await other.kill('SIGTERM');
    }

    fake.enqueue({ kind: 'text', text: 'after the restart' });
    const second = await startChildServer(env);
    children.push(second);
    const readyAt = Date.now();

    // The turn: ended as lost at once (not after RUNNER_STALE_MS), then the queued message ran.
    const events = await waitForHistory(
      second.base,
      token,
      session.id,
      (ev) =>
        ev.some((e) => e.type === 'agent.message' && e.final && e.text === 'after the restart') &&
        ev.filter((e) => e.type === 'session.status_idle').length >= 2,
      30_000,
    );
    expect(Date.now() - readyAt).toBeLessThan(20_000);
    expect(events.filter((e) => e.type === 'user.message').map((e) => e.content[0].text)).toEqual(['long job', 'queued while running']);
    expect(events.filter((e) => e.type === 'session.error').map((e) => e.error.type)).toEqual(['runner_lost']);
    // The words streamed before the kill are kept as the lost turn's complete message, stored
    // before the error, and the next turn's conversation has them.
    expect(events.filter((e) => e.type === 'agent.message' && e.final).map((e) => e.text)).toEqual(['working on it', 'after the restart']);
    const completed = events.findIndex((e) => e.type === 'agent.message' && e.final && e.text === 'working on it');
    expect(completed).toBeLessThan(events.findIndex((e) => e.type === 'session.error'));
    expect(events[completed].messageId).toBe(events.find((e) => e.type === 'agent.message' && !e.final).messageId);
    const nextCall = [...fake.requests].reverse().find((r) => r.path === '/v1/messages')!;
    expect(JSON.stringify(nextCall.body.messages)).toContain('working on it');
    expect(events.filter((e) => e.type === 'session.status_idle').map((e) => e.stop_reason.type)).toEqual(['retries_exhausted', 'end_turn']);
    const final = await api(second.base, token, 'GET', `/sessions/${session.id}`);
    expect(final.body.session.status).toBe('idle');

    // The pending retry and the interrupted attempt: delivered once more each, same delivery id.
    await waitUntil('the retries', () => at(`/flaky-${tag}`).length >= 2 && at(`/slow-${tag}`).length >= 2);
    const [slow0, slow1] = at(`/slow-${tag}`) as [Delivery, Delivery];
    expect(slow1.deliveryId).toBe(slow0.deliveryId);
    expect(slow1.at - slowEventAt).toBeGreaterThanOrEqual(4_500); // the schedule's next slot (5 s)…
    expect(slow1.at - readyAt).toBeLessThan(5_000); // …reached at once after the restart, not after a lease
    expect(slow1.at - killedAt).toBeLessThan(90_000);
    const [flaky0, flaky1] = at(`/flaky-${tag}`) as [Delivery, Delivery];
    expect(flaky1.deliveryId).toBe(flaky0.deliveryId);

    // Nothing twice: after the dust settles (past the last retry slot), every delivery was
    // answered 2xx exactly once, and each session event reached the /all endpoint once.
    await new Promise((r) => setTimeout(r, 6000));
    const mine = receiver.deliveries.filter((d) => d.path.endsWith(`-${tag}`));
    const okByDelivery = new Map<string, number>();
    for (const d of mine) if (d.answered !== null && d.answered < 300) okByDelivery.set(d.deliveryId, (okByDelivery.get(d.deliveryId) ?? 0) + 1);
    expect([...okByDelivery.values()].every((n) => n === 1)).toBe(true);
    expect(at(`/flaky-${tag}`)).toHaveLength(2);
    expect(at(`/slow-${tag}`)).toHaveLength(2);
    const all = at(`/all-${tag}`);
    const sessionEvents = (await history(second.base, token, session.id)).filter((e) =>
      ['session.status_running', 'session.status_idle', 'session.error'].includes(e.type),
    );
    expect(all.map((d) => d.eventId).sort()).toEqual(sessionEvents.map((e) => e.id).sort());
    await second.kill('SIGTERM');
    expect(second.process.exitCode).toBe(0);
  }, 240_000);
});
