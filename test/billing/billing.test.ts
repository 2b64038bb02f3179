// Spend: exact list-price metering, budgets (mid-stream stop, 402, PATCH rules), the wallet
// (402 insufficient_credits, holds against parallel overspend, grants, ledger) and model
// subscriptions (write-only credential, account billing at the provider, needs_reconnect).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type ApiResponse } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents, waitFor } from '../helpers/sessions.js';
import { prisma } from '../../src/db/client.js';

let s: TestServer;
let fake: FakeProvider;
const bodies: string[] = [];
beforeAll(async () => {
  process.env.MODEL_RETRY_BASE_MS = '10';
  fake = await startFakeProvider();
  s = await startTestServer({
    anthropicApiKey: 'sk-platform',
    anthropicBaseUrl: fake.anthropicBaseUrl,
    openaiApiKey: 'sk-platform-oai',
    openaiBaseUrl: fake.openaiBaseUrl,
  });
  const api = s.api.bind(s);
  s.api = async (...args: Parameters<TestServer['api']>) => {
    const res = await api(...args);
    bodies.push(JSON.stringify(res.body));
    return res;
  };
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});
beforeEach(() => fake.reset());

const expectError = (res: ApiResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
};
const universeIdOf = async (sessionId: string) => (await prisma.session.findUniqueOrThrow({ where: { id: sessionId } })).universeId;
const setBalanceCents = async (universeId: string, cents: number) =>
  prisma.universe.update({ where: { id: universeId }, data: { balanceNanoUsd: BigInt(cents) * 10_000_000n, heldNanoUsd: 0n } });

describe('metering', () => {
  it('consumed cost is the exact sum of list prices, sub-cent parts adding up across calls', async () => {
    const { session } = await readySession(s, { llm: 'claude-sonnet-4-5' }, { budget: { type: 'limit', max_list_cost: { amount: '1000', currency: 'USD' } } });
    const universeId = await universeIdOf(session.id);
    const before = (await prisma.universe.findUniqueOrThrow({ where: { id: universeId } })).balanceNanoUsd;
    const usage = { input: 333, output: 333, cacheRead: 100, cacheWrite: 10 };
    // $3 in, $15 out, $0.30 cache read, $3.75 cache write per million tokens (sonnet):
    const perCall = 333n * 3000n + 333n * 15000n + 100n * 300n + 10n * 3750n; // nano-dollars
    for (let i = 0; i < 4; i++) fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: 'true' }, usage });
    fake.enqueue({ kind: 'text', text: 'done', usage });
    await sendText(s, session.id, 'spend a little, five times');
    await waitForEvents(s, session.id, 'session.status_idle');
    const row = await prisma.session.findUniqueOrThrow({ where: { id: session.id } });
    expect(row.consumedNanoUsd).toBe(perCall * 5n); // 30,305,000 nano = 3.03 cents
    const got = (await s.api('GET', `/sessions/${session.id}`)).body.session.budget;
    expect(got.consumed_cost).toEqual({ amount: String((perCall * 5n) / 10_000_000n), currency: 'USD' });
    expect(got.consumed_cost.amount).toBe('3'); // per-call cents would have shown 0
    const usages = await prisma.modelUsage.findMany({ where: { sessionId: session.id } });
    expect(usages).toHaveLength(5);
    expect(usages.every((u) => u.costNanoUsd === perCall && u.billing === 'platform')).toBe(true);
    const after = await prisma.universe.findUniqueOrThrow({ where: { id: universeId } });
    expect(before - after.balanceNanoUsd).toBe(perCall * 5n);
    expect(after.heldNanoUsd).toBe(0n);
    const charges = await prisma.walletEntry.findMany({ where: { sessionId: session.id, kind: 'charge' } });
    expect(charges.reduce((a, c) => a + c.amountNanoUsd, 0n)).toBe(-perCall * 5n);
  });

  it('a call its turn leaves mid-stream (interrupt) is recorded once, at its usage so far, and its hold is released', async () => {
    const { session } = await readySession(s, { llm: 'claude-sonnet-4-5' });
    const universeId = await universeIdOf(session.id);
    fake.enqueue({ kind: 'hang', text: 'partial' }); // message_start counts 10 input tokens, then one delta, then nothing
    await sendText(s, session.id, 'go on forever');
    await waitForEvents(s, session.id, 'agent.message');
    expect((await s.api('POST', `/sessions/${session.id}/interrupt`)).body).toEqual({ status: 'interrupting' });
    await waitForEvents(s, session.id, 'session.status_idle');
    await waitFor(async () => (await prisma.modelUsage.count({ where: { sessionId: session.id } })) > 0, 10_000, 'the usage row');
    const usages = await prisma.modelUsage.findMany({ where: { sessionId: session.id } });
    expect(usages).toHaveLength(1);
    expect(usages[0]!.inputTokens).toBe(10); // message_start's count, the only usage the call sent
    expect(usages[0]!.costNanoUsd).toBeGreaterThan(0n);
    expect((await prisma.session.findUniqueOrThrow({ where: { id: session.id } })).consumedNanoUsd).toBe(usages[0]!.costNanoUsd);
    expect((await prisma.universe.findUniqueOrThrow({ where: { id: universeId } })).heldNanoUsd).toBe(0n);
  });

  it('lists engines, models and prices through GraphQL', async () => {
    const res = await s.gql<any>(`{ engines { agentType defaultModel models { id provider inputPerMillion outputPerMillion } } }`);
    const hermes = res.body.data.engines.find((e: any) => e.agentType === 'hermes');
    expect(hermes.defaultModel).toBe('claude-sonnet-4-5');
    expect(hermes.models.find((m: any) => m.id === 'claude-sonnet-4-5')).toEqual({
      id: 'claude-sonnet-4-5',
      provider: 'anthropic',
      inputPerMillion: 3,
      outputPerMillion: 15,
    });
  });
});

describe('budgets', () => {
  it('reached mid-stream: the turn stops with budget_reached, the session pauses, new work is 402, a higher cap resumes', async () => {
    const { session } = await readySession(s, {}, { budget: { type: 'limit', max_list_cost: { amount: '1', currency: 'USD' } } });
    // 5000 input tokens at $3/M = 1.5 cents: over the 1-cent cap as soon as usage arrives.
    fake.enqueue({ kind: 'text', text: 'a long answer that should be cut off', chunks: 10, delayMs: 20, usage: { input: 5000, output: 50 } });
    await sendText(s, session.id, 'expensive');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(events.at(-1).stop_reason).toEqual({ type: 'budget_reached' });
    expect(events.find((e) => e.type === 'agent.message' && e.final)).toBeUndefined();
    const detail = (await s.api('GET', `/sessions/${session.id}`)).body.session;
    expect(detail.budget).toMatchObject({ max_list_cost: { amount: '1', currency: 'USD' }, reached: true, reached_at: expect.any(String) });
    expect(Number(detail.budget.consumed_cost.amount)).toBeGreaterThanOrEqual(1);
    expectError(await sendText(s, session.id, 'more'), 402, 'budget_reached');
    expectError(await s.api('POST', `/sessions/${session.id}/messages`, { body: { parts: [{ type: 'text', index: 0, text: 'x' }] } }), 402, 'budget_reached');

    // PATCH rules: at or below consumed is refused; strictly above resumes.
    const consumed = detail.budget.consumed_cost.amount;
    expectError(
      await s.api('PATCH', `/sessions/${session.id}`, { body: { budget: { type: 'limit', max_list_cost: { amount: consumed, currency: 'USD' } } } }),
      400,
      'invalid_request',
    );
    const raised = await s.api('PATCH', `/sessions/${session.id}`, { body: { budget: { type: 'limit', max_list_cost: { amount: '100', currency: 'USD' } } } });
    expect(raised.status).toBe(200);
    expect(raised.body.session.budget).toMatchObject({ reached: false, reached_at: null, max_list_cost: { amount: '100', currency: 'USD' } });
    fake.enqueue({ kind: 'text', text: 'resumed' });
    expect((await sendText(s, session.id, 'again')).status).toBe(202);
    const after = await waitForEvents(s, session.id, 'session.status_idle', 2);
    expect(after.at(-1).stop_reason).toEqual({ type: 'end_turn' });
  });

  it('null removes the cap (one-way); a budget cannot be added after create', async () => {
    const { session } = await readySession(s, {}, { budget: { type: 'limit', max_list_cost: { amount: '5', currency: 'USD' } } });
    const removed = await s.api('PATCH', `/sessions/${session.id}`, { body: { budget: null } });
    expect(removed.body.session.budget).toBeNull();
    expectError(
      await s.api('PATCH', `/sessions/${session.id}`, { body: { budget: { type: 'limit', max_list_cost: { amount: '5', currency: 'USD' } } } }),
      400,
      'invalid_request',
    );
    const plain = await readySession(s);
    expectError(
      await s.api('PATCH', `/sessions/${plain.session.id}`, { body: { budget: { type: 'limit', max_list_cost: { amount: '5', currency: 'USD' } } } }),
      400,
      'invalid_request',
    );
    expectError(
      await s.api('PATCH', `/sessions/${plain.session.id}`, { body: { budget: { type: 'limit', max_list_cost: { amount: '5', currency: 'EUR' } } } }),
      400,
      'invalid_request',
    );
  });
});

describe('wallet', () => {
  it('an empty wallet answers 402 insufficient_credits on platform billing before accepting', async () => {
    const { session } = await readySession(s);
    const universeId = await universeIdOf(session.id);
    await setBalanceCents(universeId, 0);
    expectError(await sendText(s, session.id, 'hi'), 402, 'insufficient_credits');
    expect((await s.api('GET', `/sessions/${session.id}/events`)).body.events).toEqual([]);
    await setBalanceCents(universeId, 500);
  });

  it('POST /sessions with initial_events and an empty wallet: 402 insufficient_credits, no session, no turn (all-or-nothing)', async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const universeId = (await prisma.agent.findUniqueOrThrow({ where: { id: agent.id } })).universeId;
    await setBalanceCents(universeId, 0);
    try {
      const calls = fake.requests.length;
      const initial_events = [{ type: 'user.message', content: [{ type: 'text', text: 'start working' }] }];
      expectError(await s.api('POST', '/sessions', { body: { agent: agent.id, initial_events } }), 402, 'insufficient_credits');
      expect(await prisma.session.count({ where: { agentId: agent.id } })).toBe(0);
      expect(fake.requests.length).toBe(calls);
      // Without a first turn, nothing is spent: the session is created.
      expect((await s.api('POST', '/sessions', { body: { agent: agent.id } })).status).toBe(201);
    } finally {
      await setBalanceCents(universeId, 500);
    }
  });

  it('parallel turns in one universe cannot overspend: calls hold their worst case first', async () => {
    await s.api('POST', '/universes', { body: { slug: 'race-wallet' } });
    const token = await s.mintToken('admin', { universe: 'race-wallet' });
    const scoped = { ...s, api: (m: string, p: string, o: any = {}) => s.api(m, p, { token, ...o }) } as TestServer;
    const a = await readySession(scoped);
    const b = await readySession(scoped);
    const universeId = await universeIdOf(a.session.id);
    // 15 cents: one call's hold (8192 output tokens at $15/M ≈ 12.3 cents) fits, two do not.
    await setBalanceCents(universeId, 15);
    fake.enqueue(
      { kind: 'text', text: 'one', chunks: 5, delayMs: 60, usage: { input: 100, output: 100 } },
      { kind: 'text', text: 'two', chunks: 5, delayMs: 60, usage: { input: 100, output: 100 } },
    );
    await Promise.all([sendText(scoped, a.session.id, 'race'), sendText(scoped, b.session.id, 'race')]);
    const [ea, eb] = await Promise.all([
      waitForEvents(scoped, a.session.id, 'session.status_idle'),
      waitForEvents(scoped, b.session.id, 'session.status_idle'),
    ]);
    const errors = [...ea, ...eb].filter((e) => e.type === 'session.error');
    expect(errors.map((e) => e.error.type)).toEqual(['insufficient_credits']);
    const u = await prisma.universe.findUniqueOrThrow({ where: { id: universeId } });
    expect(u.heldNanoUsd).toBe(0n);
    expect(u.balanceNanoUsd).toBeGreaterThanOrEqual(0n);
    const spent = 150_000_000n - u.balanceNanoUsd;
    const consumed = (await prisma.session.findMany({ where: { universeId } })).reduce((acc, x) => acc + x.consumedNanoUsd, 0n);
    expect(spent).toBe(consumed);
  });

  it('the owner grants credits; the ledger lists grants and charges; a write token cannot grant', async () => {
    const who = await s.api('GET', '/whoami');
    const before = (await s.gql<any>(`{ wallet { balance { amount } } }`)).body.data.wallet.balance.amount;
    const granted = await s.gql<any>(
      `mutation($u: String!) { grantCredits(universe: $u, amountCents: "250", note: "top-up") { balance { amount currency } } }`,
      { u: who.body.universe.slug },
    );
    expect(Number(granted.body.data.grantCredits.balance.amount)).toBe(Number(before) + 250);
    const ledger = await s.gql<any>(`{ walletEntries(first: 50) { edges { node { kind amount { amount } note } } } }`);
    expect(ledger.body.data.walletEntries.edges.map((e: any) => e.node)).toContainEqual({ kind: 'grant', amount: { amount: '250' }, note: 'top-up' });
    const write = await s.mintToken('write');
    const refused = await s.gql<any>(
      `mutation($u: String!) { grantCredits(universe: $u, amountCents: "1") { balance { amount } } }`,
      { u: who.body.universe.slug },
      { token: write },
    );
    expect(refused.body.errors![0].extensions.code).toBe('insufficient_scope');
    const bad = await s.gql<any>(`mutation($u: String!) { grantCredits(universe: $u, amountCents: "-5") { balance { amount } } }`, {
      u: who.body.universe.slug,
    });
    expect(bad.body.errors![0].extensions.code).toBe('invalid_request');
  });

  it("an owner's token scoped to one universe grants credits there only (403 universe_mismatch elsewhere)", async () => {
    const personal = (await s.api('GET', '/whoami')).body.universe.slug as string;
    expect((await s.api('POST', '/universes', { body: { slug: 'granted-here' } })).status).toBe(201);
    const scoped = await s.mintToken('admin', { universe: 'granted-here' });
    const grant = (u: string) =>
      s.gql<any>(`mutation($u: String!) { grantCredits(universe: $u, amountCents: "5") { universe balance { amount } } }`, { u }, { token: scoped });
    const before = (await s.gql<any>(`{ wallet { balance { amount } } }`)).body.data.wallet.balance.amount;
    const elsewhere = await grant(personal);
    expect(elsewhere.body.errors![0].extensions.code).toBe('universe_mismatch');
    expect(elsewhere.status).toBe(403);
    expect((await s.gql<any>(`{ wallet { balance { amount } } }`)).body.data.wallet.balance.amount).toBe(before);
    expect((await grant('no-such-universe')).body.errors![0].extensions.code).toBe('universe_mismatch');
    expect((await grant('granted-here')).body.data.grantCredits).toEqual({ universe: 'granted-here', balance: { amount: '505' } });
  });

  it('a new universe starts with STARTING_CREDITS_CENTS', async () => {
    await s.api('POST', '/universes', { body: { slug: 'fresh-wallet' } });
    const res = await s.gql<any>(`{ wallet { universe balance { amount } } }`, {}, { headers: { 'x-universe': 'fresh-wallet' } });
    expect(res.body.data.wallet).toEqual({ universe: 'fresh-wallet', balance: { amount: '500' } });
  });
});

describe('model subscriptions', () => {
  const CREDENTIAL = 'sk-ant-oat-USER-OWN-SUBSCRIPTION-42';

  it('PUT connects (credential never echoed), PATCH changes label/useForNewAgents, GET lists, DELETE removes', async () => {
    const put = await s.api('PUT', '/model-subscriptions/anthropic', { body: { credential: CREDENTIAL, label: 'My Max plan' } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({
      provider: 'anthropic',
      label: 'My Max plan',
      status: 'connected',
      expiresAt: null,
      lastUsedAt: null,
      useForNewAgents: false,
      createdAt: expect.any(String),
      agents: [],
    });
    const patched = await s.api('PATCH', '/model-subscriptions/anthropic', { body: { useForNewAgents: true, label: 'Max' } });
    expect(patched.body).toMatchObject({ useForNewAgents: true, label: 'Max' });
    expect((await s.api('GET', '/model-subscriptions')).body.subscriptions.map((x: any) => x.provider)).toEqual(['anthropic']);
    expectError(await s.api('PUT', '/model-subscriptions/anthropic', { body: { credential: '' } }), 400, 'invalid_request');
    expectError(await s.api('PUT', '/model-subscriptions/anthropic', { body: { credential: 'x', label: 'l'.repeat(61) } }), 400, 'invalid_request');
    expectError(await s.api('PUT', '/model-subscriptions/gemini', { body: { credential: 'x' } }), 404, 'not_found');
    const row = await prisma.modelSubscription.findFirstOrThrow({ where: { provider: 'anthropic' } });
    expect(row.credential).not.toContain(CREDENTIAL);
  });

  it('account billing sends the subscription credential to the provider and charges no wallet; new sessions auto-apply it', async () => {
    const { session } = await readySession(s); // useForNewAgents is on from the previous test
    expect(session.modelBilling).toBe('account');
    const universeId = await universeIdOf(session.id);
    const before = (await prisma.universe.findUniqueOrThrow({ where: { id: universeId } })).balanceNanoUsd;
    fake.enqueue({ kind: 'text', text: 'on your plan', usage: { input: 1000, output: 1000 } });
    await sendText(s, session.id, 'hi');
    await waitForEvents(s, session.id, 'session.status_idle');
    expect(fake.requests[0]!.headers['x-api-key']).toBe(CREDENTIAL);
    expect((await prisma.universe.findUniqueOrThrow({ where: { id: universeId } })).balanceNanoUsd).toBe(before);
    const sub = (await s.api('GET', '/model-subscriptions')).body.subscriptions[0];
    expect(sub.lastUsedAt).toEqual(expect.any(String));
    expect(sub.agents.map((a: any) => a.id)).toContain(session.id);
    // Switching to platform billing uses the platform key.
    await s.api('PATCH', `/sessions/${session.id}`, { body: { modelBilling: 'platform' } });
    fake.enqueue({ kind: 'text', text: 'on the platform' });
    await sendText(s, session.id, 'again');
    await waitForEvents(s, session.id, 'session.status_idle', 2);
    expect(fake.requests[1]!.headers['x-api-key']).toBe('sk-platform');
  });

  it('a 401 from the provider marks the subscription needs_reconnect and the session gets a clear error', async () => {
    const { session } = await readySession(s, {}, { modelBilling: 'account' });
    fake.rejectKeys.add(CREDENTIAL);
    await sendText(s, session.id, 'hi');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const err = events.find((e) => e.type === 'session.error');
    expect(err.error).toMatchObject({ type: 'subscription_needs_reconnect', retry_status: 'exhausted', message: expect.stringContaining('reconnect') });
    expect((await s.api('GET', '/model-subscriptions')).body.subscriptions[0].status).toBe('needs_reconnect');
    // A new session no longer auto-applies a subscription that needs reconnecting.
    expect((await readySession(s)).session.modelBilling).toBe('platform');
    await s.api('PUT', '/model-subscriptions/anthropic', { body: { credential: 'sk-ant-new' } });
    expect((await s.api('GET', '/model-subscriptions')).body.subscriptions[0].status).toBe('connected');
    expect((await s.api('DELETE', '/model-subscriptions/anthropic')).body).toEqual({ ok: true });
    expectError(await s.api('PATCH', '/model-subscriptions/anthropic', { body: { label: 'x' } }), 404, 'not_found');
  });

  it('modelBilling account without a connected subscription for the model is refused (422 invalid_spec), on PATCH and create', async () => {
    // The previous test removed the anthropic subscription.
    const { session } = await readySession(s);
    expect(session.modelBilling).toBe('platform');
    const patched = await s.api('PATCH', `/sessions/${session.id}`, { body: { modelBilling: 'account' } });
    expectError(patched, 422, 'invalid_spec');
    expect(patched.body.error.message).toContain('/v1/model-subscriptions/anthropic');
    expect((await s.api('GET', `/sessions/${session.id}`)).body.session.modelBilling).toBe('platform');
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    expectError(await s.api('POST', '/sessions', { body: { agent: agent.id, modelBilling: 'account' } }), 422, 'invalid_spec');
    // A subscription that needs reconnecting cannot be chosen either.
    await s.api('PUT', '/model-subscriptions/anthropic', { body: { credential: 'sk-ant-later' } });
    await prisma.modelSubscription.updateMany({ where: { provider: 'anthropic' }, data: { status: 'needs_reconnect' } });
    expectError(await s.api('PATCH', `/sessions/${session.id}`, { body: { modelBilling: 'account' } }), 422, 'invalid_spec');
    // Connected: accepted.
    await s.api('PUT', '/model-subscriptions/anthropic', { body: { credential: 'sk-ant-later' } });
    expect((await s.api('PATCH', `/sessions/${session.id}`, { body: { modelBilling: 'account' } })).body.session.modelBilling).toBe('account');
    // Moving an account-billed session to another provider's model needs that provider's subscription.
    expectError(await s.api('PATCH', `/sessions/${session.id}`, { body: { llm: 'gpt-5' } }), 422, 'invalid_spec');
    expect((await s.api('DELETE', '/model-subscriptions/anthropic')).body).toEqual({ ok: true });
  });

  it('no response ever contained the subscription credential', () => {
    for (const b of bodies) expect(b).not.toContain(CREDENTIAL);
  });
});
