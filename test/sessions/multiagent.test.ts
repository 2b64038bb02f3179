// Multiagent sessions (issue #32) end to end on the fake provider: a coordinator agent with a
// roster delegates to specialists in threads (parallel, own conversations, same sandbox), waits
// for their replies and answers; threads have their own history and SSE stream (resume
// included); an interrupt, the budget and a failing specialist reach every thread; the roster is
// checked at save and at session start. Runs on the embedded defaults and on PostgreSQL + Redis.
import { describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import type { FakeProvider } from '../fake-provider/server.js';
import { collectSse, sendText, waitFor, waitForEvents, withServerOnFakeProvider } from '../helpers/sessions.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { prisma } from '../../src/db/client.js';
import { issueSessionCredential } from '../../src/gateway/session-credentials.js';
import { mcpRelayFor } from '../../src/engines/cli/core/mcp-relay.js';

let s: TestServer;
let fake: FakeProvider;
withServerOnFakeProvider((started) => ({ s, fake } = started), { env: { MODEL_RETRY_BASE_MS: '20' } });

const types = (events: any[]) => events.map((e) => e.type);
/** The coordinator's last turn end (a thread's thread.idle may follow it on the stream). */
const lastIdle = (events: any[]) => events.filter((e) => e.type === 'session.status_idle').at(-1);

async function agent(body: Record<string, unknown>) {
  const res = await s.api('POST', '/agents', { body: { llm: 'claude-sonnet-4-5', ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.agent;
}

/** A coordinator (prompt COORDINATOR) with two specialists (RESEARCHER, REVIEWER) and a ready session of it. */
async function team(sessionBody: Record<string, unknown> = {}) {
  const researcher = await agent({ displayName: 'Researcher', prompt: 'You are the RESEARCHER.' });
  const reviewer = await agent({ displayName: 'Reviewer', prompt: 'You are the REVIEWER.' });
  const coordinator = await agent({
    displayName: 'Coordinator',
    prompt: 'You are the COORDINATOR.',
    multiagent: {
      type: 'coordinator',
      agents: [{ type: 'agent', id: researcher.id, name: 'researcher' }, { type: 'agent', id: reviewer.id, name: 'reviewer' }, { type: 'self' }],
    },
  });
  const created = await s.api('POST', '/sessions', { body: { agent: coordinator.id, ...sessionBody } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const session = created.body.session;
  await waitFor(async () => (await s.api('GET', `/sessions/${session.id}`)).body.session.status !== 'provisioning');
  return { researcher, reviewer, coordinator, session };
}

const delegateBoth = {
  kind: 'tool_call' as const,
  name: 'delegate',
  id: 'toolu_d1',
  input: { agent: 'researcher', message: 'find the facts' },
  more: [{ name: 'delegate', id: 'toolu_d2', input: { agent: 'reviewer', message: 'review the plan' } }],
};
const waitAll = { kind: 'tool_call' as const, name: 'wait_threads', id: 'toolu_w1', input: {} };

const requestsOf = (marker: string) => fake.requests.filter((r) => JSON.stringify(r.body?.system ?? '').includes(marker));

async function waitIdle(sessionId: string, count = 1, timeoutMs = 15_000) {
  return waitForEvents(s, sessionId, 'session.status_idle', count, timeoutMs);
}

describe('a coordinator delegating to two specialists', () => {
  it('runs both threads in parallel, waits, and answers with both replies; threads are listed with their history', async () => {
    const { session, researcher, reviewer } = await team();
    fake.enqueueFor('COORDINATOR', delegateBoth, waitAll, { kind: 'text', text: 'Both specialists reported.' });
    fake.enqueueFor('RESEARCHER', { kind: 'text', text: 'facts: water is wet', chunks: 4, delayMs: 150 });
    fake.enqueueFor('REVIEWER', { kind: 'text', text: 'plan looks fine', chunks: 4, delayMs: 150 });
    await sendText(s, session.id, 'do the task');
    const events = await waitIdle(session.id);
    expect(lastIdle(events).stop_reason).toEqual({ type: 'end_turn' });

    // The session's stream: thread.started × 2, thread.message × 2, thread.idle × 2, then the answer.
    const started = events.filter((e) => e.type === 'thread.started');
    expect(started.map((e) => e.agent.name).sort()).toEqual(['researcher', 'reviewer']);
    expect(started.find((e) => e.agent.name === 'researcher').agent).toEqual({ id: researcher.id, name: 'researcher', version: 1 });
    for (const e of started) expect(e.thread_id).toMatch(/^sthr_[0-9a-z]{26}$/);
    const messages = events.filter((e) => e.type === 'thread.message');
    expect(messages.map((e) => e.text).sort()).toEqual(['facts: water is wet', 'plan looks fine']);
    expect(events.filter((e) => e.type === 'thread.idle').map((e) => e.stop_reason.type)).toEqual(['end_turn', 'end_turn']);
    const final = events.filter((e) => e.type === 'agent.message' && e.final).at(-1);
    expect(final.text).toBe('Both specialists reported.');

    // wait_threads returned both replies to the coordinator (its third model request carries them).
    const waitResult = events.find((e) => e.type === 'agent.tool_result' && e.part.call_id === 'toolu_w1');
    expect(waitResult, JSON.stringify(types(events))).toBeTruthy();
    const coordinatorCalls = requestsOf('COORDINATOR');
    expect(coordinatorCalls).toHaveLength(3);
    expect(coordinatorCalls[0]!.body.tools.map((t: any) => t.name)).toEqual(expect.arrayContaining(['delegate', 'message_thread', 'wait_threads', 'bash']));
    const lastInput = JSON.stringify(coordinatorCalls[2]!.body.messages);
    expect(lastInput).toContain('facts: water is wet');
    expect(lastInput).toContain('plan looks fine');
    // Specialists are offered no delegation tools (one level only) and got their own task.
    const [researchCall] = requestsOf('RESEARCHER');
    expect(researchCall!.body.tools.map((t: any) => t.name)).not.toContain('delegate');
    expect(JSON.stringify(researchCall!.body.messages)).toContain('find the facts');

    // The two threads ran at once: their running spans overlap.
    const list = (await s.api('GET', `/sessions/${session.id}/threads`)).body.threads;
    expect(list).toHaveLength(2);
    const spans: [number, number][] = [];
    for (const t of list) {
      expect(t).toMatchObject({ sessionId: session.id, status: 'idle', turns: 1, agentType: 'hermes' });
      const h = (await s.api('GET', `/sessions/${session.id}/threads/${t.id}/events`)).body.events;
      expect(types(h)).toEqual(expect.arrayContaining(['user.message', 'session.status_running', 'agent.message', 'session.status_idle']));
      for (const e of h) expect(e).toMatchObject({ sessionId: session.id, thread_id: t.id });
      spans.push([Date.parse(h.find((e: any) => e.type === 'session.status_running').at), Date.parse(h.find((e: any) => e.type === 'session.status_idle').at)]);
    }
    expect(spans[0]![0]).toBeLessThan(spans[1]![1]);
    expect(spans[1]![0]).toBeLessThan(spans[0]![1]);
    expect([...list.map((t: any) => t.agent.id)].sort()).toEqual([researcher.id, reviewer.id].sort());
    // One thread by id; threads are not sessions of their own.
    const one = await s.api('GET', `/sessions/${session.id}/threads/${list[0].id}`);
    expect(one.body.thread.id).toBe(list[0].id);
    expect((await s.api('GET', `/sessions/${list[0].id}`)).status).toBe(404);
    expect((await s.api('GET', '/sessions')).body.sessions.map((x: any) => x.id)).not.toContain(list[0].id);
    expect((await s.api('GET', `/sessions/${session.id}/threads/sthr_01jzzzzzzzzzzzzzzzzzzzzzzz`)).status).toBe(404);

    // GraphQL reads the same threads.
    const gql = await s.gql(`query($id: String!) { sessionThreads(sessionId: $id) { id agent { name } status } }`, { id: session.id });
    expect(gql.body.data!.sessionThreads.map((t: any) => t.id)).toEqual(list.map((t: any) => t.id));

    // A follow-up to the first thread: it remembers its earlier turn.
    const researchThread = list.find((t: any) => t.agent.name === 'researcher');
    fake.enqueueFor(
      'COORDINATOR',
      { kind: 'tool_call', name: 'message_thread', id: 'toolu_m1', input: { thread_id: researchThread.id, message: 'and is ice wet?' } },
      { kind: 'tool_call', name: 'wait_threads', id: 'toolu_w2', input: { thread_ids: [researchThread.id] } },
      { kind: 'text', text: 'Done again.' },
    );
    fake.enqueueFor('RESEARCHER', { kind: 'text', text: 'ice is wet when it melts' });
    await sendText(s, session.id, 'follow up');
    const again = await waitIdle(session.id, 2);
    expect(again.filter((e) => e.type === 'thread.message').at(-1).text).toBe('ice is wet when it melts');
    const secondResearch = requestsOf('RESEARCHER')[1]!;
    // Prompt caching adds cache_control markers to blocks; the words and their order are what matter here.
    expect(secondResearch.body.messages).toMatchObject([
      { role: 'user', content: [{ type: 'text', text: 'find the facts' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'facts: water is wet' }] },
      { role: 'user', content: [{ type: 'text', text: 'and is ice wet?' }] },
    ]);
    expect(JSON.stringify(requestsOf('COORDINATOR').at(-1)!.body.messages)).toContain('ice is wet when it melts');

    // Thread SSE: resume after an event id replays exactly what follows it.
    const threadHistory = (await s.api('GET', `/sessions/${session.id}/threads/${researchThread.id}/events`)).body.events.filter(
      (e: any) => e.type !== 'user.message',
    );
    const pivot = threadHistory[2];
    const frames = await collectSse(
      `${s.base}/sessions/${session.id}/threads/${researchThread.id}/events/stream`,
      s.adminToken,
      (f) => f.length >= threadHistory.length - 3,
      {
        headers: { 'last-event-id': pivot.id },
      },
    );
    expect(frames.map((f) => f.id)).toEqual(threadHistory.slice(3).map((e: any) => e.id));
    expect(frames[0]!.data.thread_id).toBe(researchThread.id);
  }, 40_000);
});

describe('stopping threads', () => {
  it('an interrupt of the session during delegation interrupts the running thread and the coordinator', async () => {
    const { session } = await team();
    fake.enqueueFor('COORDINATOR', { kind: 'tool_call', name: 'delegate', id: 'toolu_d', input: { agent: 'researcher', message: 'think forever' } }, waitAll);
    fake.enqueueFor('RESEARCHER', { kind: 'hang', text: 'thinking' });
    await sendText(s, session.id, 'go');
    await waitForEvents(s, session.id, 'thread.started');
    const threadId = (await s.api('GET', `/sessions/${session.id}/threads`)).body.threads[0].id;
    await waitFor(async () => (await s.api('GET', `/sessions/${session.id}/threads/${threadId}`)).body.thread.status === 'running');
    const res = await s.api('POST', `/sessions/${session.id}/interrupt`);
    expect(res.body.status).toBe('interrupting');
    const events = await waitIdle(session.id);
    expect(lastIdle(events).stop_reason).toEqual({ type: 'end_turn' });
    await waitForEvents(s, session.id, 'thread.idle');
    const thread = (await s.api('GET', `/sessions/${session.id}/threads/${threadId}/events`)).body.events;
    expect(types(thread)).toContain('user.interrupt');
    expect(thread.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    await waitFor(async () => (await s.api('GET', `/sessions/${session.id}/threads/${threadId}`)).body.thread.status === 'idle');
  }, 30_000);

  it("a thread reaching the session's budget stops every thread and the coordinator with budget_reached", async () => {
    const { session } = await team({ budget: { type: 'limit', max_list_cost: { amount: '1', currency: 'USD' } } });
    fake.enqueueFor('COORDINATOR', delegateBoth, waitAll);
    fake.enqueueFor('RESEARCHER', { kind: 'text', text: 'expensive', usage: { input: 200_000, output: 50_000 } });
    fake.enqueueFor('REVIEWER', { kind: 'hang', text: 'slow' });
    await sendText(s, session.id, 'spend');
    const events = await waitIdle(session.id, 1, 20_000);
    expect(lastIdle(events).stop_reason).toEqual({ type: 'budget_reached' });
    const idles = (await waitForEvents(s, session.id, 'thread.idle', 2)).filter((e) => e.type === 'thread.idle');
    expect(idles.find((e) => e.agent.name === 'researcher').stop_reason.type).toBe('budget_reached');
    const detail = (await s.api('GET', `/sessions/${session.id}`)).body.session;
    expect(detail.budget).toMatchObject({ reached: true });
    expect(Number(detail.budget.consumed_cost.amount)).toBeGreaterThanOrEqual(1);
    // The other thread (hanging) was stopped too; no model request came after the budget.
    expect(idles.find((e) => e.agent.name === 'reviewer').stop_reason.type).toMatch(/^(end_turn|budget_reached)$/);
    const after = fake.requests.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(fake.requests.length).toBe(after);
  }, 30_000);

  it('a specialist whose provider fails ends its thread with session.error; the coordinator gets the failure, not a hang', async () => {
    const { session } = await team();
    fake.enqueueFor('COORDINATOR', { kind: 'tool_call', name: 'delegate', id: 'toolu_d', input: { agent: 'reviewer', message: 'review' } }, waitAll, {
      kind: 'text',
      text: 'The reviewer failed.',
    });
    fake.enqueueFor('REVIEWER', { kind: 'error', status: 400, message: 'bad request from the fake' });
    await sendText(s, session.id, 'go');
    const events = await waitIdle(session.id);
    const idle = events.find((e) => e.type === 'thread.idle');
    expect(idle).toMatchObject({ stop_reason: { type: 'retries_exhausted' }, error: { retry_status: 'exhausted' } });
    const result = events.find((e) => e.type === 'agent.tool_result' && e.part.call_id === 'toolu_w1');
    expect(JSON.stringify(result.part)).toContain('failed');
    expect(JSON.stringify(result.part)).toContain('bad request from the fake');
    expect(events.filter((e) => e.type === 'agent.message' && e.final).at(-1).text).toBe('The reviewer failed.');
    const threadId = idle.thread_id;
    const thread = (await s.api('GET', `/sessions/${session.id}/threads/${threadId}/events`)).body.events;
    expect(thread.find((e: any) => e.type === 'session.error')).toMatchObject({ thread_id: threadId, error: { retry_status: 'exhausted' } });
  }, 30_000);

  it('archive and delete act on the whole session', async () => {
    const { session } = await team();
    fake.enqueueFor('COORDINATOR', { kind: 'tool_call', name: 'delegate', id: 'toolu_d', input: { agent: 'researcher', message: 'x' } }, waitAll, {
      kind: 'text',
      text: 'ok',
    });
    await sendText(s, session.id, 'go');
    await waitIdle(session.id);
    const [thread] = (await s.api('GET', `/sessions/${session.id}/threads`)).body.threads;
    expect((await s.api('POST', `/sessions/${session.id}/archive`)).status).toBe(200);
    expect((await s.api('GET', `/sessions/${session.id}/threads/${thread.id}`)).body.thread.status).toBe('terminated');
    expect((await s.api('DELETE', `/sessions/${session.id}`)).status).toBe(200);
    expect((await s.api('GET', `/sessions/${session.id}/threads/${thread.id}`)).status).toBe(404);
  }, 30_000);
});

describe('webhooks', () => {
  it("an endpoint subscribed to thread.started and thread.idle gets them for the session; a thread's own events are no deliveries", async () => {
    const hook = await s.api('POST', '/webhooks', {
      body: { url: 'https://example.com/multiagent-hook', events: ['thread.started', 'thread.idle', 'session.status_idle'] },
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const { session } = await team();
    fake.enqueueFor('COORDINATOR', { kind: 'tool_call', name: 'delegate', id: 'toolu_d', input: { agent: 'researcher', message: 'x' } }, waitAll, {
      kind: 'text',
      text: 'ok',
    });
    await sendText(s, session.id, 'go');
    await waitIdle(session.id);
    const rows = await prisma.webhookDelivery.findMany({ where: { endpointId: hook.body.id } });
    const bodies = rows.map((r) => JSON.parse(r.body));
    expect(bodies.filter((b) => b.type.startsWith('thread.')).map((b) => [b.type, b.data])).toEqual(
      expect.arrayContaining([
        ['thread.started', { type: 'session', id: session.id }],
        ['thread.idle', { type: 'session', id: session.id }],
      ]),
    );
    // session.status_idle: the coordinator's only, never the thread's (a thread is not a session of its own)
    expect(bodies.filter((b) => b.type === 'session.status_idle').every((b) => b.data.id === session.id)).toBe(true);
    expect(bodies.some((b) => String(b.data.id).startsWith('sthr_'))).toBe(false);
    await s.api('DELETE', `/webhooks/${hook.body.id}`);
  }, 30_000);
});

describe('the roster', () => {
  it('is echoed in the detail, validated at create and PATCH, and resolved at session start', async () => {
    const a = await agent({ displayName: 'Roster A' });
    const b = await agent({ displayName: 'Roster B' });
    const coordinator = await agent({
      multiagent: {
        type: 'coordinator',
        agents: [
          { type: 'agent', id: a.id },
          { type: 'self', name: 'me' },
        ],
      },
    });
    expect(coordinator.multiagent).toEqual({
      type: 'coordinator',
      agents: [
        { type: 'agent', id: a.id, name: a.slug },
        { type: 'self', name: 'me' },
      ],
    });
    expect((await s.api('GET', `/agents/${coordinator.id}`)).body.agent.multiagent).toEqual(coordinator.multiagent);
    expect((await s.api('GET', `/agents/${a.id}`)).body.agent.multiagent).toBeNull();

    const refused = async (multiagent: unknown, what: string) => {
      const res = await s.api('PATCH', `/agents/${coordinator.id}`, { body: { multiagent } });
      expect(res.status, what).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      return res.body.error.message as string;
    };
    expect(await refused({ type: 'coordinator', agents: [] }, 'empty')).toBeTruthy();
    expect(await refused({ type: 'coordinator', agents: Array.from({ length: 21 }, () => ({ type: 'self' })) }, '21')).toBeTruthy();
    expect(await refused({ type: 'coordinator', agents: [{ type: 'agent', id: 'agent_01jzzzzzzzzzzzzzzzzzzzzzzz' }] }, 'unknown')).toContain('not found');
    expect(
      await refused(
        {
          type: 'coordinator',
          agents: [
            { type: 'agent', id: a.id, name: 'x' },
            { type: 'self', name: 'x' },
          ],
        },
        'twice',
      ),
    ).toContain('twice');
    // nesting: an agent with a roster of its own
    const nested = await s.api('POST', '/agents', { body: { multiagent: { type: 'coordinator', agents: [{ type: 'agent', id: coordinator.id }] } } });
    expect(nested.status).toBe(400);
    expect(nested.body.error.message).toContain('roster of its own');
    // another universe's agent does not exist here
    expect((await s.api('POST', '/universes', { body: { slug: 'multiagent-b', name: 'B' } })).status).toBe(201);
    const tokenB = await s.mintToken('admin', { universe: 'multiagent-b' });
    const other = (await s.api('POST', '/agents', { body: {}, token: tokenB })).body.agent;
    expect(await refused({ type: 'coordinator', agents: [{ type: 'agent', id: other.id }] }, 'other universe')).toContain('not found');
    // archived: refused at PATCH, and at session start when archived after the save
    const patched = await s.api('PATCH', `/agents/${coordinator.id}`, { body: { multiagent: { type: 'coordinator', agents: [{ type: 'agent', id: b.id }] } } });
    expect(patched.status).toBe(200);
    expect(patched.body.agent.multiagent.agents).toEqual([{ type: 'agent', id: b.id, name: b.slug }]);
    expect((await s.api('POST', `/agents/${b.id}/archive`)).status).toBe(200);
    expect(await refused({ type: 'coordinator', agents: [{ type: 'agent', id: b.id }] }, 'archived')).toContain('archived');
    const start = await s.api('POST', '/sessions', { body: { agent: coordinator.id } });
    expect(start.status).toBe(400);
    expect(start.body.error.message).toContain('archived');
    // null removes the roster: sessions start again
    expect((await s.api('PATCH', `/agents/${coordinator.id}`, { body: { multiagent: null } })).body.agent.multiagent).toBeNull();
    expect((await s.api('POST', '/sessions', { body: { agent: coordinator.id } })).status).toBe(201);
    // GraphQL shows the roster too
    const gql = await s.gql(`query($id: String!) { agent(id: $id) { multiagent { type } } }`, { id: a.id });
    expect(gql.body.errors).toBeUndefined();
  }, 30_000);
});

describe('a CLI coordinator', () => {
  it('delegates through the MCP relay: the delegation tools are listed, a thread runs, wait_threads returns its reply', async () => {
    const { session, coordinator } = await team();
    // A CLI engine of a coordinator gets the relay even without MCP servers or capabilities.
    expect(mcpRelayFor({ mcpServers: [], capabilities: [] })).toBeNull();
    expect(mcpRelayFor({ mcpServers: [], capabilities: [] }, 'http://x/gateway', true)).toMatchObject({ url: 'http://x/gateway/mcp' });
    expect(coordinator.multiagent.agents).toHaveLength(3);
    // The CLI's turn is running (the only time its credential works), as the CLI engine runs it.
    await prisma.session.update({ where: { id: session.id }, data: { status: 'running', turnCount: 1 } });
    const client = new Client({ name: 'test-cli', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${s.url}/gateway/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${issueSessionCredential(session.id)}` } },
      }),
    );
    const tools = (await client.listTools()).tools;
    expect(tools.map((t) => t.name).sort()).toEqual(['delegate', 'message_thread', 'wait_threads']);
    expect(tools.find((t) => t.name === 'delegate')!.inputSchema).toMatchObject({ properties: { agent: { enum: ['researcher', 'reviewer', 'self'] } } });
    fake.enqueueFor('RESEARCHER', { kind: 'text', text: 'relayed research' });
    const started = await client.callTool({ name: 'delegate', arguments: { agent: 'researcher', message: 'from the CLI' } });
    expect(started.isError).toBe(false);
    const threadId = JSON.parse((started.content as any)[0].text).thread_id;
    expect(threadId).toMatch(/^sthr_/);
    // A later request of the same turn (the relay keeps no connection) waits for what this turn sent.
    const waited = await client.callTool({ name: 'wait_threads', arguments: {} });
    expect(waited.isError).toBe(false);
    expect(JSON.parse((waited.content as any)[0].text).threads).toEqual([
      { thread_id: threadId, agent: 'researcher', status: 'replied', reply: 'relayed research' },
    ]);
    await client.close();
    await prisma.session.update({ where: { id: session.id }, data: { status: 'idle' } });
  }, 30_000);
});
