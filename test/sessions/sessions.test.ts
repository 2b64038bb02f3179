// Sessions over real HTTP: create (fields, defaults, limits), list, detail, PATCH, archive and
// delete rules, the agent's default session and agent-id addressing, send-body validation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type ApiResponse } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents, waitFor } from '../helpers/sessions.js';

let s: TestServer;
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
  s = await startTestServer({ anthropicApiKey: 'sk-ant-test', anthropicBaseUrl: fake.anthropicBaseUrl });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});

const expectError = (res: ApiResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({ error: { code, message: expect.any(String) } });
};

const SESSION_KEYS = [
  'agentId',
  'agentType',
  'budget',
  'createdAt',
  'default',
  'forked_from',
  'id',
  'llm',
  'metadata',
  'modelBilling',
  'reasoningEffort',
  'resources',
  'status',
  'title',
  'usage',
];

describe('create and read', () => {
  it('creates with the agent defaults, provisions up front, and reads back', async () => {
    const agent = (await s.api('POST', '/agents', { body: { reasoningEffort: 'low' } })).body.agent;
    const res = await s.api('POST', '/sessions', { body: { agent: agent.id, title: 'First', metadata: { k: 'v' } } });
    expect(res.status).toBe(201);
    const session = res.body.session;
    expect(Object.keys(session).sort()).toEqual(SESSION_KEYS);
    expect(session).toMatchObject({
      id: expect.stringMatching(/^sess_/),
      agentId: agent.id,
      title: 'First',
      agentType: 'hermes',
      llm: agent.llm,
      reasoningEffort: 'low',
      modelBilling: 'platform',
      default: true,
      metadata: { k: 'v' },
      budget: null,
      resources: [],
    });
    expect(['provisioning', 'idle']).toContain(session.status);
    await waitFor(async () => (await s.api('GET', `/sessions/${session.id}`)).body.session.status === 'idle');
    const list = await s.api('GET', `/sessions?agent=${agent.id}`);
    expect(list.body.sessions.map((x: any) => x.id)).toEqual([session.id]);
    const detail = await s.api('GET', `/agents/${agent.id}`);
    expect(detail.body.agent.defaultSessionId).toBe(session.id);
    expect(detail.body.agent.sessionCount).toBe(1);
    const second = await s.api('POST', '/sessions', { body: { agent: agent.id } });
    expect(second.body.session.default).toBe(false);
  });

  it('the session model and effort override the agent for this session only', async () => {
    const { agent, session } = await readySession(s, {}, { llm: 'claude-haiku-4-5', reasoningEffort: 'high' });
    expect(session).toMatchObject({ llm: 'claude-haiku-4-5', reasoningEffort: 'high' });
    expect((await s.api('GET', `/agents/${agent.id}`)).body.agent.llm).toBe('claude-sonnet-4-5');
  });

  it('stores a budget at create', async () => {
    const { session } = await readySession(s, {}, { budget: { type: 'limit', max_list_cost: { amount: '50', currency: 'USD' } } });
    expect(session.budget).toEqual({
      max_list_cost: { amount: '50', currency: 'USD' },
      consumed_cost: { amount: '0', currency: 'USD' },
      reached: false,
      reached_at: null,
    });
  });

  it('refuses bad bodies', async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    expectError(await s.api('POST', '/sessions', { body: {} }), 400, 'invalid_request');
    expectError(await s.api('POST', '/sessions', { body: { agent: 'agent_missing' } }), 404, 'not_found');
    expectError(await s.api('POST', '/sessions', { body: { agent: agent.id, llm: 'gpt-1' } }), 422, 'invalid_spec');
    expectError(await s.api('POST', '/sessions', { body: { agent: agent.id, llm: '' } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/sessions', { body: { agent: agent.id, title: 't'.repeat(121) } }), 400, 'invalid_request');
    expect((await s.api('POST', '/sessions', { body: { agent: agent.id, title: 't'.repeat(120) } })).status).toBe(201);
    expectError(
      await s.api('POST', '/sessions', { body: { agent: agent.id, instructions: Array.from({ length: 21 }, (_, i) => ({ name: `${i}.md` })) } }),
      400,
      'invalid_request',
    );
    expectError(
      await s.api('POST', '/sessions', { body: { agent: agent.id, vault_ids: Array.from({ length: 11 }, (_, i) => `v${i}`) } }),
      400,
      'invalid_request',
    );
    expectError(
      await s.api('POST', '/sessions', { body: { agent: agent.id, budget: { type: 'limit', max_list_cost: { amount: '1'.repeat(16), currency: 'USD' } } } }),
      400,
      'invalid_request',
    );
    expectError(
      await s.api('POST', '/sessions', { body: { agent: agent.id, budget: { type: 'limit', max_list_cost: { amount: '1.5', currency: 'USD' } } } }),
      400,
      'invalid_request',
    );
    expectError(
      await s.api('POST', '/sessions', {
        body: { agent: agent.id, initial_events: Array.from({ length: 51 }, () => ({ type: 'user.message', content: [{ type: 'text', text: 'x' }] })) },
      }),
      400,
      'invalid_request',
    );
    expectError(await s.api('POST', '/sessions', { body: { agent: agent.id, extra: 1 } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/sessions', { body: { agent: agent.id, reasoningEffort: 'off' } }), 422, 'invalid_spec');
  });

  it('a 150,000-character instruction name is refused at once, without blocking other requests (no regex backtracking)', { timeout: 5000 }, async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const slow = s.api('POST', '/sessions', { body: { agent: agent.id, instructions: [{ name: 'A'.repeat(150_000) }] } });
    await new Promise((r) => setTimeout(r, 100));
    const [res, who] = await Promise.all([slow, s.api('GET', '/whoami')]);
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.message).toContain('must end in .md');
    expect(who.status).toBe(200);
  });

  it('initial_events are all-or-nothing: one bad event creates nothing', async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const bad = await s.api('POST', '/sessions', {
      body: {
        agent: agent.id,
        initial_events: [
          { type: 'user.message', content: [{ type: 'text', text: 'ok' }] },
          { type: 'user.message', content: [] },
        ],
      },
    });
    expectError(bad, 400, 'invalid_request');
    expect((await s.api('GET', `/sessions?agent=${agent.id}`)).body.sessions).toEqual([]);
  });

  it('initial_events start the first turn in the same call', async () => {
    fake.enqueue({ kind: 'text', text: 'hello from the first turn' });
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const res = await s.api('POST', '/sessions', {
      body: { agent: agent.id, initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }] },
    });
    const events = await waitForEvents(s, res.body.session.id, 'session.status_idle');
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['user.message', 'session.status_running', 'agent.message', 'session.status_idle']));
  });

  it('an archived agent rejects new sessions', async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    await s.api('POST', `/agents/${agent.id}/archive`);
    expectError(await s.api('POST', '/sessions', { body: { agent: agent.id } }), 409, 'conflict');
  });
});

describe('patch', () => {
  it('changes title, metadata (merged), llm and reasoningEffort of this session only', async () => {
    const { agent, session } = await readySession(s, {}, { metadata: { a: 1, b: 2 } });
    const res = await s.api('PATCH', `/sessions/${session.id}`, {
      body: { title: 'Renamed', metadata: { b: null, c: 3 }, llm: 'claude-opus-4-5', reasoningEffort: 'medium' },
    });
    expect(res.status).toBe(200);
    expect(res.body.session).toMatchObject({ title: 'Renamed', metadata: { a: 1, c: 3 }, llm: 'claude-opus-4-5', reasoningEffort: 'medium' });
    expect((await s.api('GET', `/agents/${agent.id}`)).body.agent).toMatchObject({ llm: 'claude-sonnet-4-5', reasoningEffort: null });
    const cleared = await s.api('PATCH', `/sessions/${session.id}`, { body: { title: null, reasoningEffort: null } });
    expect(cleared.body.session).toMatchObject({ title: null, reasoningEffort: null });
    expectError(await s.api('PATCH', `/sessions/${session.id}`, { body: { llm: 'gpt-0' } }), 422, 'invalid_spec');
    expectError(await s.api('PATCH', `/sessions/${session.id}`, { body: { reasoningEffort: 'off' } }), 422, 'invalid_spec');
    expectError(await s.api('PATCH', `/sessions/${session.id}`, { body: { title: 'x'.repeat(121) } }), 400, 'invalid_request');
  });
});

describe('archive and delete', () => {
  it('archive: idle → terminated, idempotent, then messages are refused with 400 session_archived; history stays', async () => {
    const { session } = await readySession(s);
    const a = await s.api('POST', `/sessions/${session.id}/archive`);
    expect(a.status).toBe(200);
    expect(a.body.session.status).toBe('terminated');
    expect((await s.api('POST', `/sessions/${session.id}/archive`)).body.session.status).toBe('terminated');
    expectError(await sendText(s, session.id, 'hello?'), 400, 'session_archived');
    const hist = await s.api('GET', `/sessions/${session.id}/events`);
    expect(hist.body.events.map((e: any) => e.type)).toContain('session.status_terminated');
  });

  it('a running session refuses archive and delete with 400 session_running', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'hang', text: 'thinking…' });
    await sendText(s, session.id, 'take your time');
    await waitFor(async () => (await s.api('GET', `/sessions/${session.id}`)).body.session.status === 'running');
    expectError(await s.api('POST', `/sessions/${session.id}/archive`), 400, 'session_running');
    expectError(await s.api('DELETE', `/sessions/${session.id}`), 400, 'session_running');
    expect((await s.api('POST', `/sessions/${session.id}/interrupt`)).body).toEqual({ status: 'interrupting' });
    await waitForEvents(s, session.id, 'session.status_idle');
    await waitFor(async () => (await s.api('GET', `/sessions/${session.id}`)).body.session.status === 'idle');
    expect((await s.api('DELETE', `/sessions/${session.id}`)).body).toEqual({ ok: true });
    expectError(await s.api('GET', `/sessions/${session.id}`), 404, 'not_found');
    expectError(await s.api('GET', `/sessions/${session.id}/events`), 404, 'not_found');
  });

  it('delete removes the sandbox directory too', async () => {
    const { session } = await readySession(s);
    const fs = await import('node:fs');
    const path = await import('node:path');
    const { config } = await import('../../src/config.js');
    const dir = path.join(config().dataDir, 'sandboxes', session.id);
    expect(fs.existsSync(dir)).toBe(true);
    await s.api('DELETE', `/sessions/${session.id}`);
    expect(fs.existsSync(dir)).toBe(false);
  });
});

describe('agent-id addressing', () => {
  it('every session verb given an agent id acts on its default session', async () => {
    const { agent, session } = await readySession(s);
    expect((await s.api('GET', `/sessions/${agent.id}`)).body.session.id).toBe(session.id);
    fake.enqueue({ kind: 'text', text: 'via the agent id' });
    const sent = await sendText(s, agent.id, 'hi');
    expect(sent.status).toBe(202);
    expect(sent.body.data[0].sessionId).toBe(session.id);
    await waitForEvents(s, session.id, 'session.status_idle');
    expect((await s.api('GET', `/sessions/${agent.id}/events`)).body.events.length).toBeGreaterThan(0);
    expect((await s.api('PATCH', `/sessions/${agent.id}`, { body: { title: 'by agent' } })).body.session.title).toBe('by agent');
    const bare = (await s.api('POST', '/agents', { body: {} })).body.agent;
    expectError(await s.api('GET', `/sessions/${bare.id}`), 404, 'not_found');
  });
});

describe('send events validation', () => {
  it.each([
    ['no events', {}],
    ['empty events', { events: [] }],
    ['51 events', { events: Array.from({ length: 51 }, () => ({ type: 'user.message', content: [{ type: 'text', text: 'x' }] })) }],
    ['unknown type', { events: [{ type: 'agent.message', content: [] }] }],
    ['extra property on the event', { events: [{ type: 'user.message', content: [{ type: 'text', text: 'x' }], extra: 1 }] }],
    ['extra property on the body', { events: [{ type: 'user.interrupt' }], more: true }],
    ['empty content', { events: [{ type: 'user.message', content: [] }] }],
    ['empty text', { events: [{ type: 'user.message', content: [{ type: 'text', text: '' }] }] }],
    ['extra property on a block', { events: [{ type: 'user.message', content: [{ type: 'text', text: 'x', bold: true }] }] }],
    ['unknown block type', { events: [{ type: 'user.message', content: [{ type: 'audio', source: {} }] }] }],
    ['image with a text source', { events: [{ type: 'user.message', content: [{ type: 'image', source: { type: 'text', data: 'x' } }] }] }],
    [
      'base64 source without data',
      { events: [{ type: 'user.message', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: '' } }] }] },
    ],
    ['document with an empty title', { events: [{ type: 'user.message', content: [{ type: 'document', source: { type: 'text', data: 'x' }, title: '' }] }] }],
    [
      'document with an empty context',
      { events: [{ type: 'user.message', content: [{ type: 'document', source: { type: 'text', data: 'x' }, context: '' }] }] },
    ],
    ['system.message with an image', { events: [{ type: 'system.message', content: [{ type: 'image', source: { type: 'url', url: 'https://x' } }] }] }],
    ['system.message with 1001 blocks', { events: [{ type: 'system.message', content: Array.from({ length: 1001 }, () => ({ type: 'text', text: 'x' })) }] }],
    ['user.interrupt with content', { events: [{ type: 'user.interrupt', content: [] }] }],
  ])('%s → 400 invalid_request', async (_name, body) => {
    const { session } = await readySession(s);
    expectError(await s.api('POST', `/sessions/${session.id}/events`, { body }), 400, 'invalid_request');
    expect((await s.api('GET', `/sessions/${session.id}/events`)).body.events).toEqual([]);
  });

  it('accepts every valid block and source shape and echoes one event per event, in order', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'text', text: 'seen' });
    const events = [
      { type: 'system.message', content: Array.from({ length: 1000 }, (_, i) => ({ type: 'text', text: `rule ${i}` })) },
      {
        type: 'user.message',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'document', source: { type: 'text', data: 'plain words' }, title: 'Notes', context: null },
        ],
      },
    ];
    const res = await s.api('POST', `/sessions/${session.id}/events`, { body: { events } });
    expect(res.status).toBe(202);
    expect(res.body.data.map((e: any) => e.type)).toEqual(['system.message', 'user.message']);
    expect(res.body.data[1]).toMatchObject({ id: expect.stringMatching(/^evt_/), sessionId: session.id, agentId: session.agentId, at: expect.any(String) });
    // Attachments are stored as per-session file copies (covered in files.test.ts).
    expect(res.body.data[1].content[2]).toEqual({
      type: 'document',
      source: { type: 'file', file_id: expect.stringMatching(/^file_/) },
      title: 'Notes',
      context: null,
    });
    await waitForEvents(s, session.id, 'session.status_idle');
  });

  it('Idempotency-Key: a retried send returns the first echo and stores nothing new', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'text', text: 'once' });
    const first = await sendText(s, session.id, 'only once', { 'idempotency-key': 'send-1' });
    const again = await sendText(s, session.id, 'only once', { 'idempotency-key': 'send-1' });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(events.filter((e) => e.type === 'user.message')).toHaveLength(1);
  });

  it('deprecated {parts} send is translated into one user.message and answered 410', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'text', text: 'legacy ok' });
    const res = await s.api('POST', `/sessions/${session.id}/messages`, { body: { parts: [{ type: 'text', index: 0, text: 'old style' }] } });
    expect(res.status).toBe(410);
    expect(res.body.error.code).toBe('gone');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const msg = events.find((e) => e.type === 'user.message');
    expect(msg.content).toEqual([{ type: 'text', text: 'old style' }]);
    expectError(await s.api('POST', `/sessions/${session.id}/messages`, { body: { parts: [] } }), 400, 'invalid_request');
  });

  it('deprecated send delivers image and file parts too (as image and document blocks); parts a user message cannot carry are refused', async () => {
    const { session } = await readySession(s);
    const form = new FormData();
    form.append('file', new Blob(['a,b\n1,2\n'], { type: 'text/csv' }), 'table.csv');
    const upload = (await s.api('POST', '/files', { form })).body;
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    fake.enqueue({ kind: 'text', text: 'got all three' });
    const res = await s.api('POST', `/sessions/${session.id}/messages`, {
      body: {
        parts: [
          { type: 'text', index: 0, text: 'see attached' },
          { type: 'image', index: 1, media_type: 'image/png', data: png },
          { type: 'file', index: 2, name: 'table.csv', media_type: 'text/csv', uri: upload.id },
        ],
      },
    });
    expect(res.status).toBe(410);
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const msg = events.find((e) => e.type === 'user.message');
    expect(res.body.error.message).toContain(msg.id);
    expect(msg.content).toEqual([
      { type: 'text', text: 'see attached' },
      { type: 'image', source: { type: 'file', file_id: expect.stringMatching(/^file_/) } },
      { type: 'document', source: { type: 'file', file_id: expect.stringMatching(/^file_/) }, title: 'table.csv', context: null },
    ]);
    const image = await s.api('GET', `/files/${msg.content[1].source.file_id}/content`);
    expect(Buffer.from(image.bytes).toString('base64')).toBe(png);
    const table = await s.api('GET', `/files/${msg.content[2].source.file_id}/content`);
    expect(Buffer.from(table.bytes).toString()).toBe('a,b\n1,2\n');

    const before = (await s.api('GET', `/sessions/${session.id}/events`)).body.events.length;
    for (const part of [
      { type: 'tool_call', index: 1, call_id: 'c1', tool_name: 'bash' },
      { type: 'video', index: 1, media_type: 'video/mp4', uri: 'https://example.com/v.mp4' },
      { type: 'image', index: 1, media_type: 'image/png' },
    ]) {
      const refused = await s.api('POST', `/sessions/${session.id}/messages`, { body: { parts: [{ type: 'text', index: 0, text: 'and this' }, part] } });
      expectError(refused, 400, 'invalid_request');
      expect(refused.body.error.message).toContain('parts[1]');
    }
    expect((await s.api('GET', `/sessions/${session.id}/events`)).body.events).toHaveLength(before);
  });

  it('read tokens cannot send; other universes see 404', async () => {
    const { session } = await readySession(s);
    const read = await s.mintToken('read');
    expectError(
      await s.api('POST', `/sessions/${session.id}/events`, { token: read, body: { events: [{ type: 'user.interrupt' }] } }),
      403,
      'insufficient_scope',
    );
    expect((await s.api('GET', `/sessions/${session.id}/events`, { token: read })).status).toBe(200);
    await s.api('POST', '/universes', { body: { slug: 'sess-other' } });
    const other = await s.mintToken('admin', { universe: 'sess-other' });
    expectError(await s.api('GET', `/sessions/${session.id}`, { token: other }), 404, 'not_found');
    expectError(
      await sendText(s, session.id, 'x').then(() =>
        s.api('POST', `/sessions/${session.id}/events`, { token: other, body: { events: [{ type: 'user.interrupt' }] } }),
      ),
      404,
      'not_found',
    );
  });
});
