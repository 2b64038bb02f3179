// Human confirmation of tool calls over HTTP: an agent's tool policy makes a call wait (an
// agent.tool_use marked awaiting_confirmation, then idle with stop_reason requires_action and an
// outbound webhook), the client allows or denies it with a user.tool_confirmation (REST or
// GraphQL), and the turn goes on; a pending confirmation survives a restart of the service.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents, waitFor } from '../helpers/sessions.js';
import { expectError } from '../helpers/agents.js';
import { startChildServer, api } from '../helpers/child-server.js';
import { deploymentEnv, startReceiver, waitForHistory } from '../helpers/durability.js';

let s: TestServer;
let fake: FakeProvider;

beforeAll(async () => {
  process.env.OUTBOUND_ALLOW = '127.0.0.0/8';
  fake = await startFakeProvider();
  s = await startTestServer({ anthropicApiKey: 'sk-ant-test', anthropicBaseUrl: fake.anthropicBaseUrl });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
  delete process.env.OUTBOUND_ALLOW;
});
beforeEach(() => fake.reset());

const ASK_BASH = { default: 'always_allow', rules: [{ target: 'tool', name: 'bash', policy: 'always_ask' }] };
const confirm = (tool_use_id: string, result: 'allow' | 'deny', deny_message?: string) => ({
  events: [{ type: 'user.tool_confirmation', tool_use_id, result, ...(deny_message ? { deny_message } : {}) }],
});

async function pausedSession(policy: unknown = ASK_BASH) {
  const { agent, session } = await readySession(s);
  const put = await s.api('PUT', `/agents/${agent.id}/tool-policy`, { body: policy });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  return { agent, session };
}

describe('tool policy', () => {
  it('defaults to always_allow; PUT replaces it, bumps the version; GraphQL reads and writes the same', async () => {
    const { agent } = await readySession(s);
    expect((await s.api('GET', `/agents/${agent.id}/tool-policy`)).body).toEqual({ toolPolicy: { default: 'always_allow', rules: [] } });
    const put = await s.api('PUT', `/agents/${agent.id}/tool-policy`, { body: { rules: [{ target: 'mcp_server', name: 'docs', policy: 'always_ask' }] } });
    expect(put.body).toEqual({ toolPolicy: { default: 'always_allow', rules: [{ target: 'mcp_server', name: 'docs', policy: 'always_ask' }] } });
    expect((await s.api('GET', `/agents/${agent.id}`)).body.agent.version).toBe(agent.version + 1);
    const gql = await s.gql(
      `mutation($id: String!, $i: ToolPolicyInput!) { setAgentToolPolicy(id: $id, input: $i) { default rules { target name policy } } }`,
      { id: agent.id, i: { default: 'always_ask', rules: [{ target: 'capability', name: 'exa.search', policy: 'always_allow' }] } },
    );
    expect(gql.body.errors).toBeUndefined();
    const read = await s.gql(`{ agent(id: "${agent.id}") { toolPolicy { default rules { target name policy } } } }`);
    expect(read.body.data.agent.toolPolicy).toEqual({ default: 'always_ask', rules: [{ target: 'capability', name: 'exa.search', policy: 'always_allow' }] });
    expectError(await s.api('PUT', `/agents/${agent.id}/tool-policy`, { body: { default: 'sometimes' } }), 400, 'invalid_request');
    expectError(
      await s.api('PUT', `/agents/${agent.id}/tool-policy`, { body: { rules: [{ target: 'tool', name: '', policy: 'always_ask' }] } }),
      400,
      'invalid_request',
    );
    expectError(await s.api('PUT', `/agents/${agent.id}/tool-policy`, { body: { rules: [], extra: 1 } }), 400, 'invalid_request');
    expectError(await s.api('PUT', '/agents/agent_nope/tool-policy', { body: {} }), 404, 'not_found');
    await s.api('POST', `/agents/${agent.id}/archive`);
    expectError(await s.api('PUT', `/agents/${agent.id}/tool-policy`, { body: {} }), 409, 'conflict');
  });
});

describe('a call that needs confirmation', () => {
  it('pauses the turn, announces it (event, idle requires_action, webhook, GraphQL); allow runs it and the turn goes on', async () => {
    const receiver = await startReceiver(() => 200);
    try {
      const hook = await s.api('POST', '/webhooks', { body: { url: `${receiver.url}/hook`, events: ['session.requires_action'] } });
      expect(hook.status, JSON.stringify(hook.body)).toBe(201);
      const { session } = await pausedSession();
      fake.enqueue(
        { kind: 'tool_call', name: 'bash', input: { command: 'echo approved > a.txt && cat a.txt' }, text: 'Let me write it.' },
        { kind: 'text', text: 'Written.' },
      );
      await sendText(s, session.id, 'write a.txt');
      let events = await waitForEvents(s, session.id, 'session.status_idle');
      const use = events.find((e) => e.type === 'agent.tool_use');
      expect(use).toMatchObject({ awaiting_confirmation: true, part: { tool_name: 'bash', args: { command: 'echo approved > a.txt && cat a.txt' } } });
      expect(events.at(-1).stop_reason).toEqual({ type: 'requires_action', event_ids: [use.id] });
      expect(events.some((e) => e.type === 'agent.tool_result')).toBe(false);
      expect((await s.api('GET', `/sessions/${session.id}`)).body.session.status).toBe('idle');
      const pending = await s.gql(
        `{ session(id: "${session.id}") { pendingToolConfirmations { id awaitingConfirmation part { ... on ToolCallPart { toolName callId } } } } }`,
      );
      expect(pending.body.data.session.pendingToolConfirmations).toEqual([
        { id: use.id, awaitingConfirmation: true, part: { toolName: 'bash', callId: use.part.call_id } },
      ]);
      await waitFor(async () => receiver.deliveries.length > 0, 10_000, 'the webhook');
      expect(receiver.deliveries[0]).toMatchObject({ path: '/hook', type: 'session.requires_action', eventId: use.id });

      const sent = await s.api('POST', `/sessions/${session.id}/events`, { body: confirm(use.id, 'allow') });
      expect(sent.status).toBe(202);
      expect(sent.body.data[0]).toMatchObject({
        type: 'user.tool_confirmation',
        tool_use_id: use.id,
        result: 'allow',
        deny_message: null,
        by: expect.stringMatching(/^token:/),
      });
      events = await waitForEvents(s, session.id, 'session.status_idle', 2);
      const result = events.find((e) => e.type === 'agent.tool_result');
      expect(result.part).toMatchObject({ call_id: use.part.call_id, status: 'ok', result: { stdout: 'approved\n' } });
      expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });
      expect(events.filter((e) => e.type === 'agent.message' && e.final).map((e) => e.text)).toEqual(['Let me write it.', 'Written.']);
      // The model saw its call answered right after it.
      const msgs = fake.requests[1]!.body.messages;
      expect(msgs.at(-2)).toMatchObject({
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me write it.' },
          { type: 'tool_use', id: use.part.call_id },
        ],
      });
      expect(msgs.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'tool_result', tool_use_id: use.part.call_id }] });
      expect((await s.gql(`{ session(id: "${session.id}") { pendingToolConfirmations { id } } }`)).body.data.session.pendingToolConfirmations).toEqual([]);
    } finally {
      receiver.close();
    }
  });

  it('deny with a message answers the model with the reason; nothing runs', async () => {
    const { session } = await pausedSession({ default: 'always_ask', rules: [] });
    fake.enqueue({ kind: 'tool_call', name: 'write_file', input: { path: 'x.txt', content: 'x' } }, { kind: 'text', text: 'Understood.' });
    await sendText(s, session.id, 'write x');
    let events = await waitForEvents(s, session.id, 'session.status_idle');
    const use = events.find((e) => e.type === 'agent.tool_use');
    // GraphQL answers too (a @oneOf member of the send input), by the call id.
    const gql = await s.gql(
      `mutation($id: String!, $i: SendSessionEventsInput!) { sendSessionEvents(sessionId: $id, input: $i) { ... on UserToolConfirmationEvent { toolUseId result denyMessage } } }`,
      { id: session.id, i: { events: [{ userToolConfirmation: { toolUseId: use.part.call_id, result: 'deny', denyMessage: 'not in this folder' } }] } },
    );
    expect(gql.body.errors).toBeUndefined();
    expect(gql.body.data.sendSessionEvents).toEqual([{ toolUseId: use.id, result: 'deny', denyMessage: 'not in this folder' }]);
    events = await waitForEvents(s, session.id, 'session.status_idle', 2);
    expect(events.find((e) => e.type === 'agent.tool_result').part).toMatchObject({
      status: 'error',
      result: { error: 'the user denied this tool call', deny_message: 'not in this folder' },
    });
    const back = fake.requests[1]!.body.messages.at(-1).content[0];
    expect(back).toMatchObject({ type: 'tool_result', is_error: true });
    expect(JSON.stringify(back.content)).toContain('not in this folder');
    expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });
  });

  it('allowed calls run, the first that must be confirmed waits; a new message instead answers it as not confirmed', async () => {
    const { session } = await pausedSession();
    // Two model steps: write_file (allowed, runs), then bash (must be confirmed).
    fake.enqueue({ kind: 'tool_call', name: 'write_file', input: { path: 'w.txt', content: 'w' }, id: 'toolu_first' });
    fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: 'cat w.txt' }, id: 'toolu_second' });
    await sendText(s, session.id, 'go');
    let events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(events.filter((e) => e.type === 'agent.tool_result').map((e) => e.part.tool_name)).toEqual(['write_file']);
    expect(events.at(-1).stop_reason.type).toBe('requires_action');
    fake.enqueue({ kind: 'text', text: 'Skipping that.' });
    await sendText(s, session.id, 'never mind, stop');
    events = await waitForEvents(s, session.id, 'session.status_idle', 2);
    const results = events.filter((e) => e.type === 'agent.tool_result');
    expect(results[1].part).toMatchObject({ tool_name: 'bash', status: 'error', result: { error: expect.stringContaining('new message arrived') } });
    expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });
  });

  it('several calls in one answer: those before the first to confirm run, it and the later ones wait, then run in order', async () => {
    const { session } = await pausedSession();
    fake.enqueue(
      {
        kind: 'tool_call',
        name: 'write_file',
        input: { path: 'm.txt', content: 'many' },
        id: 'toolu_w',
        more: [
          { name: 'bash', input: { command: 'cat m.txt' }, id: 'toolu_b' },
          { name: 'read_file', input: { path: 'm.txt' }, id: 'toolu_r' },
        ],
      },
      { kind: 'text', text: 'All three ran.' },
    );
    await sendText(s, session.id, 'go');
    let events = await waitForEvents(s, session.id, 'session.status_idle');
    const uses = events.filter((e) => e.type === 'agent.tool_use');
    expect(uses.map((e) => [e.part.call_id, e.part.index, e.awaiting_confirmation ?? false])).toEqual([
      ['toolu_w', 0, false],
      ['toolu_b', 1, true],
      ['toolu_r', 2, false],
    ]);
    expect(events.filter((e) => e.type === 'agent.tool_result').map((e) => e.part.call_id)).toEqual(['toolu_w']);
    expect(events.at(-1).stop_reason).toEqual({ type: 'requires_action', event_ids: [uses[1].id] });
    expect((await s.gql(`{ session(id: "${session.id}") { pendingToolConfirmations { id } } }`)).body.data.session.pendingToolConfirmations).toEqual([
      { id: uses[1].id },
    ]);

    await s.api('POST', `/sessions/${session.id}/events`, { body: confirm('toolu_b', 'allow') });
    events = await waitForEvents(s, session.id, 'session.status_idle', 2);
    const results = events.filter((e) => e.type === 'agent.tool_result').map((e) => e.part);
    expect(results.map((r) => [r.call_id, r.index, r.status])).toEqual([
      ['toolu_w', 0, 'ok'],
      ['toolu_b', 1, 'ok'],
      ['toolu_r', 2, 'ok'],
    ]);
    expect(results[1].result.stdout).toBe('many');
    expect(results[2].result.content).toBe('many');
    expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });
    // The model got every call answered, in order.
    const answered = fake.requests[1]!.body.messages.flatMap((m: any) => m.content)
      .filter((b: any) => b.type === 'tool_result')
      .map((b: any) => b.tool_use_id);
    expect(answered).toEqual(['toolu_w', 'toolu_b', 'toolu_r']);
  });

  it('refuses confirmations that answer nothing: 400 invalid_request', async () => {
    const { session } = await pausedSession();
    expectError(await s.api('POST', `/sessions/${session.id}/events`, { body: confirm('evt_nothing', 'allow') }), 400, 'invalid_request');
    fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: 'true' } });
    await sendText(s, session.id, 'go');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const use = events.find((e) => e.type === 'agent.tool_use');
    expectError(
      await s.api('POST', `/sessions/${session.id}/events`, { body: { events: [confirm(use.id, 'allow').events[0], confirm(use.id, 'deny').events[0]] } }),
      400,
      'invalid_request',
    );
    expectError(
      await s.api('POST', `/sessions/${session.id}/events`, { body: { events: [{ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'maybe' }] } }),
      400,
      'invalid_request',
    );
    expectError(
      await s.api('POST', `/sessions/${session.id}/events`, { body: { events: [{ type: 'user.tool_confirmation', result: 'allow' }] } }),
      400,
      'invalid_request',
    );
    fake.enqueue({ kind: 'text', text: 'done' });
    expect((await s.api('POST', `/sessions/${session.id}/events`, { body: confirm(use.id, 'allow') })).status).toBe(202);
    await waitForEvents(s, session.id, 'session.status_idle', 2);
    expectError(await s.api('POST', `/sessions/${session.id}/events`, { body: confirm(use.id, 'allow') }), 400, 'invalid_request');
  });
});

describe('restart', () => {
  it('a pending confirmation survives a restart of the service', async () => {
    const { env, token } = deploymentEnv({ postgres: false, providerUrl: fake.anthropicBaseUrl, extra: { OUTBOUND_ALLOW: '127.0.0.0/8' } });
    let child = await startChildServer(env);
    try {
      const agent = (await api(child.base, token, 'POST', '/agents', {})).body.agent;
      await api(child.base, token, 'PUT', `/agents/${agent.id}/tool-policy`, ASK_BASH);
      const session = (await api(child.base, token, 'POST', '/sessions', { agent: agent.id })).body.session;
      fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: 'echo after-restart' } }, { kind: 'text', text: 'ok' });
      await waitForHistory(child.base, token, session.id, () => true);
      await waitFor(async () => (await api(child.base, token, 'GET', `/sessions/${session.id}`)).body.session.status === 'idle', 20_000);
      await api(child.base, token, 'POST', `/sessions/${session.id}/events`, {
        events: [{ type: 'user.message', content: [{ type: 'text', text: 'run it' }] }],
      });
      let events = await waitForHistory(child.base, token, session.id, (ev) => ev.some((e) => e.type === 'session.status_idle'));
      const use = events.find((e) => e.type === 'agent.tool_use');
      expect(use.awaiting_confirmation).toBe(true);

      await child.kill('SIGTERM');
      child = await startChildServer(env);
      const sent = await api(child.base, token, 'POST', `/sessions/${session.id}/events`, confirm(use.id, 'allow'));
      expect(sent.status).toBe(202);
      events = await waitForHistory(child.base, token, session.id, (ev) => ev.filter((e) => e.type === 'session.status_idle').length === 2);
      expect(events.find((e) => e.type === 'agent.tool_result').part).toMatchObject({ status: 'ok', result: { stdout: 'after-restart\n' } });
      expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });
    } finally {
      await child.kill('SIGTERM');
    }
  }, 120_000);
});
