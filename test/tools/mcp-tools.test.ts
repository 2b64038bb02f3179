// Remote MCP tool servers end to end over HTTP: a real MCP server (the official SDK's server on
// a real port, Streamable HTTP), the fake model provider driving tool-calling turns, the
// agent's runtime authentication (received by the server, absent from every answer, the event
// history and the sandbox), include/exclude filtering, failures, limits, and the validation.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startFakeMcpServer, type FakeMcpServer, TINY_PNG } from '../fake-vendors/mcp-server.js';
import { readySession, sendText, waitForEvents, waitFor, history } from '../helpers/sessions.js';
import { expectError } from '../helpers/agents.js';
import { startChildServer, api } from '../helpers/child-server.js';
import { deploymentEnv, waitForHistory } from '../helpers/durability.js';

const TOKEN = 'mcp-secret-token-7f3a9c';
let s: TestServer;
let fake: FakeProvider;
let mcp: FakeMcpServer;

beforeAll(async () => {
  process.env.OUTBOUND_ALLOW = '127.0.0.0/8';
  process.env.MODEL_RETRY_BASE_MS = '20';
  fake = await startFakeProvider();
  mcp = await startFakeMcpServer();
  s = await startTestServer({ anthropicApiKey: 'sk-ant-test', anthropicBaseUrl: fake.anthropicBaseUrl });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
  await mcp?.close();
  delete process.env.OUTBOUND_ALLOW;
});
beforeEach(() => {
  fake.reset();
  mcp.requests.length = 0;
  mcp.calls.length = 0;
  mcp.delayMs = 0;
});

const docs = (extra: Record<string, unknown> = {}) => ({ name: 'docs', url: mcp.url, ...extra });
const toolNames = (i = 0) => fake.requests[i]!.body.tools.map((t: any) => t.name).sort();
const resultOf = (events: any[], n = 0) => events.filter((e) => e.type === 'agent.tool_result')[n].part;

describe('a turn with a remote tool server', () => {
  it('offers the included tools under mcp__<server>__<tool>, calls one with the runtime auth, and records the events', async () => {
    const { agent, session } = await readySession(s, {
      mcpServers: [docs({ tools: { exclude: ['explode', 'slow', 'big'] }, authentication: { type: 'bearer', token: TOKEN } })],
    });
    fake.enqueue({ kind: 'tool_call', name: 'mcp__docs__search', input: { query: 'vitest' } }, { kind: 'text', text: 'Found 3 pages.' });
    await sendText(s, session.id, 'look it up');
    const events = await waitForEvents(s, session.id, 'session.status_idle');

    expect(toolNames()).toEqual([
      'bash',
      'edit_file',
      'mcp__docs__add',
      'mcp__docs__fail',
      'mcp__docs__picture',
      'mcp__docs__search',
      'read_file',
      'write_file',
    ]);
    const offered = fake.requests[0]!.body.tools.find((t: any) => t.name === 'mcp__docs__search');
    expect(offered.description).toContain('Search the documentation');
    expect(offered.input_schema).toMatchObject({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'] });

    const use = events.find((e) => e.type === 'agent.tool_use');
    expect(use.part).toMatchObject({ type: 'tool_call', tool_name: 'mcp__docs__search', args: { query: 'vitest' } });
    expect(use.awaiting_confirmation).toBeUndefined();
    expect(resultOf(events)).toMatchObject({
      type: 'tool_result',
      tool_name: 'mcp__docs__search',
      call_id: use.part.call_id,
      status: 'ok',
      result: { content: [{ type: 'text', text: '3 pages match "vitest"' }], structured_content: { hits: 3 } },
    });
    expect(mcp.calls).toEqual([{ name: 'search', args: { query: 'vitest' } }]);
    // The model saw the result.
    const back = fake.requests[1]!.body.messages.at(-1).content[0];
    expect(back).toMatchObject({ type: 'tool_result', tool_use_id: use.part.call_id });
    expect(JSON.stringify(back.content)).toContain('3 pages match');
    expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });

    // Every request to the server carried the credential; nothing the API answers does.
    expect(mcp.requests.length).toBeGreaterThan(1);
    for (const r of mcp.requests) expect(r.headers.authorization).toBe(`Bearer ${TOKEN}`);
    const answers = [
      await s.api('GET', `/agents/${agent.id}`),
      await s.api('GET', '/agents'),
      await s.api('GET', `/sessions/${session.id}`),
      await s.api('GET', `/sessions/${session.id}/events?limit=1000`),
      await s.gql(`{ agent(id: "${agent.id}") { mcpServers { name url type tools { include exclude } } } }`),
    ];
    for (const a of answers) expect(JSON.stringify(a.body)).not.toContain(TOKEN);
    expect((await s.api('GET', `/agents/${agent.id}`)).body.agent.mcpServers).toEqual([
      { type: 'url', name: 'docs', url: mcp.url, tools: { include: [], exclude: ['explode', 'slow', 'big'] } },
    ]);
    // Stored sealed, not in clear.
    const { prisma } = await import('../../src/db/client.js');
    const row = await prisma.agent.findUniqueOrThrow({ where: { id: agent.id } });
    expect(JSON.stringify(row)).not.toContain(TOKEN);
  });

  it('include lists exactly the offered tools; the sandbox never sees the credential', async () => {
    const { session } = await readySession(s, {
      mcpServers: [docs({ tools: { include: ['add'] }, authentication: { type: 'headers', headers: [{ name: 'X-Api-Key', value: TOKEN }] } })],
    });
    fake.enqueue(
      { kind: 'tool_call', name: 'mcp__docs__add', input: { a: 2, b: 40 } },
      {
        kind: 'tool_call',
        name: 'bash',
        input: {
          command: `env; cat /proc/self/environ 2>/dev/null | tr '\\0' '\\n'; grep -rl "${TOKEN.slice(0, 10)}" /workspace /tmp /etc 2>/dev/null | head -1; echo end`,
        },
      },
      { kind: 'text', text: '42' },
    );
    await sendText(s, session.id, 'add');
    const events = await waitForEvents(s, session.id, 'session.status_idle', 1, 20_000);
    expect(toolNames()).toEqual(['bash', 'edit_file', 'mcp__docs__add', 'read_file', 'write_file']);
    expect(resultOf(events)).toMatchObject({ status: 'ok', result: { content: [{ type: 'text', text: '42' }] } });
    const bash = resultOf(events, 1).result;
    expect(bash.stdout).toContain('end');
    expect(JSON.stringify(bash)).not.toContain(TOKEN);
    for (const r of mcp.requests) expect(r.headers['x-api-key']).toBe(TOKEN);
  });

  it('a tool error and a thrown error become tool_result errors; the turn goes on', async () => {
    const { session } = await readySession(s, { mcpServers: [docs()] });
    fake.enqueue(
      { kind: 'tool_call', name: 'mcp__docs__fail', input: {} },
      { kind: 'tool_call', name: 'mcp__docs__explode', input: {} },
      { kind: 'tool_call', name: 'mcp__docs__nope', input: {} },
      { kind: 'text', text: 'sorry' },
    );
    await sendText(s, session.id, 'try');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(resultOf(events, 0)).toMatchObject({
      status: 'error',
      result: { error: 'the index is being rebuilt', content: [{ type: 'text', text: 'the index is being rebuilt' }] },
    });
    expect(resultOf(events, 1)).toMatchObject({ status: 'error', result: { error: expect.stringContaining('kaboom') } });
    expect(resultOf(events, 2)).toMatchObject({ status: 'error', result: { error: 'unknown tool mcp__docs__nope' } });
    expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });
    expect(fake.requests[1]!.body.messages.at(-1).content[0]).toMatchObject({ type: 'tool_result', is_error: true });
  });

  it('an image result becomes a downloadable session file and an image part', async () => {
    const { session } = await readySession(s, { mcpServers: [docs({ tools: { include: ['picture'] } })] });
    fake.enqueue({ kind: 'tool_call', name: 'mcp__docs__picture', input: {} }, { kind: 'text', text: 'there' });
    await sendText(s, session.id, 'draw');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const result = resultOf(events).result;
    expect(result.content[0]).toEqual({ type: 'text', text: 'here it is' });
    expect(result.content[1]).toMatchObject({ type: 'file', file_id: expect.stringMatching(/^file_/), mime_type: 'image/png', size_bytes: TINY_PNG.length });
    const fileId = result.content[1].file_id;
    const shown = events.find((e) => e.type === 'agent.message' && e.parts?.[0]?.type === 'image');
    expect(shown.parts[0]).toMatchObject({ type: 'image', media_type: 'image/png', uri: `/v1/files/${fileId}/content` });
    const listed = await s.api('GET', `/files?scope_id=${session.id}`);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: fileId, downloadable: true, mime_type: 'image/png' })]);
    const content = await s.fetch(`${s.base}/files/${fileId}/content`, { headers: { authorization: `Bearer ${s.adminToken}` } });
    expect(content.headers.get('content-type')).toContain('image/png');
    expect(Buffer.from(await content.arrayBuffer()).equals(TINY_PNG)).toBe(true);
  });

  it('a server speaking only the older HTTP+SSE transport is reached through the fallback, with the credential', async () => {
    const { session } = await readySession(s, {
      mcpServers: [{ name: 'legacy', url: mcp.sseUrl, tools: { include: ['add'] }, authentication: { type: 'bearer', token: TOKEN } }],
    });
    fake.enqueue({ kind: 'tool_call', name: 'mcp__legacy__add', input: { a: 20, b: 22 } }, { kind: 'text', text: '42' });
    await sendText(s, session.id, 'add');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(toolNames()).toContain('mcp__legacy__add');
    expect(resultOf(events)).toMatchObject({ status: 'ok', result: { content: [{ type: 'text', text: '42' }] } });
    expect(mcp.requests.map((r) => r.method)).toEqual(expect.arrayContaining(['POST', 'GET']));
    for (const r of mcp.requests) expect(r.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('an unreachable server: a session.error (retrying) names it, and the turn runs without its tools', async () => {
    const { session } = await readySession(s, { mcpServers: [{ name: 'gone', url: 'http://127.0.0.1:9/mcp' }, docs({ tools: { include: ['add'] } })] });
    fake.enqueue({ kind: 'text', text: 'ok without it' });
    await sendText(s, session.id, 'hi');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const err = events.find((e) => e.type === 'session.error');
    expect(err.error).toMatchObject({ type: 'tool_server_unavailable', retry_status: 'retrying', message: expect.stringContaining('gone') });
    expect(toolNames()).toContain('mcp__docs__add');
    expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });
  });

  it('the tool list is kept for the session (listed once); a PATCH applies from the next provision', async () => {
    const { agent, session } = await readySession(s, { mcpServers: [docs({ tools: { include: ['add'] } })] });
    fake.enqueue({ kind: 'text', text: 'one' }, { kind: 'text', text: 'two' });
    await sendText(s, session.id, 'one');
    await waitForEvents(s, session.id, 'session.status_idle');
    const patched = await s.api('PATCH', `/agents/${agent.id}`, { body: { mcpServers: [docs({ tools: { include: ['search'] } })] } });
    expect(patched.status).toBe(200);
    mcp.requests.length = 0;
    await sendText(s, session.id, 'two');
    await waitForEvents(s, session.id, 'session.status_idle', 2);
    expect(toolNames(1)).toContain('mcp__docs__add');
    expect(toolNames(1)).not.toContain('mcp__docs__search');
    expect(mcp.requests).toHaveLength(0); // no second listing
    // A new session (a new provision) sees the change.
    const next = await s.api('POST', '/sessions', { body: { agent: agent.id } });
    await waitFor(async () => (await s.api('GET', `/sessions/${next.body.session.id}`)).body.session.status === 'idle');
    fake.enqueue({ kind: 'text', text: 'three' });
    await sendText(s, next.body.session.id, 'three');
    await waitForEvents(s, next.body.session.id, 'session.status_idle');
    expect(toolNames(2)).toContain('mcp__docs__search');
    expect(toolNames(2)).not.toContain('mcp__docs__add');
  });

  it('a server that forgot our MCP session is reconnected transparently', async () => {
    const { session } = await readySession(s, { mcpServers: [docs({ tools: { include: ['add'] } })] });
    fake.enqueue({ kind: 'text', text: 'warm' });
    await sendText(s, session.id, 'warm up');
    await waitForEvents(s, session.id, 'session.status_idle');
    mcp.forgetSessions();
    fake.enqueue({ kind: 'tool_call', name: 'mcp__docs__add', input: { a: 1, b: 1 } }, { kind: 'text', text: 'two' });
    await sendText(s, session.id, 'add');
    const events = await waitForEvents(s, session.id, 'session.status_idle', 2);
    expect(resultOf(events)).toMatchObject({ status: 'ok', result: { content: [{ type: 'text', text: '2' }] } });
  });

  it('calls time out and long answers are cut for the model', async () => {
    process.env.MCP_CALL_TIMEOUT_MS = '300';
    process.env.MCP_MAX_RESULT_CHARS = '1000';
    try {
      const { session } = await readySession(s, { mcpServers: [docs({ tools: { include: ['slow', 'big'] } })] });
      fake.enqueue(
        { kind: 'tool_call', name: 'mcp__docs__slow', input: { ms: 3000 } },
        { kind: 'tool_call', name: 'mcp__docs__big', input: { chars: 5000 } },
        { kind: 'text', text: 'done' },
      );
      await sendText(s, session.id, 'go');
      const events = await waitForEvents(s, session.id, 'session.status_idle');
      expect(resultOf(events, 0)).toMatchObject({ status: 'error', result: { error: 'tool server docs: no answer in time' } });
      const big = resultOf(events, 1);
      expect(big).toMatchObject({ status: 'ok', result: { truncated: true } });
      expect(big.result.content[0].text).toHaveLength(1000);
    } finally {
      delete process.env.MCP_CALL_TIMEOUT_MS;
      delete process.env.MCP_MAX_RESULT_CHARS;
    }
  });
});

describe('runtime authentication input', () => {
  it('is kept by a PATCH that omits it (same name and origin), removed by null, dropped when the origin changes', async () => {
    const created = await s.api('POST', '/agents', { body: { mcpServers: [docs({ authentication: { type: 'bearer', token: TOKEN } })] } });
    expect(created.status).toBe(201);
    const id = created.body.agent.id;
    const { prisma } = await import('../../src/db/client.js');
    const sealed = async () => ((await prisma.agent.findUniqueOrThrow({ where: { id } })).mcpServers as any[])[0].authSealed ?? null;
    const first = await sealed();
    expect(first).toEqual(expect.any(String));
    // The fetched list sent back unchanged keeps the credential.
    await s.api('PATCH', `/agents/${id}`, { body: { mcpServers: created.body.agent.mcpServers } });
    expect(await sealed()).toBe(first);
    await s.api('PATCH', `/agents/${id}`, { body: { mcpServers: [{ name: 'docs', url: 'https://other.example/mcp' }] } });
    expect(await sealed()).toBeNull();
    await s.api('PATCH', `/agents/${id}`, { body: { mcpServers: [docs({ authentication: { type: 'bearer', token: TOKEN } })] } });
    expect(await sealed()).toEqual(expect.any(String));
    await s.api('PATCH', `/agents/${id}`, { body: { mcpServers: [docs({ authentication: null })] } });
    expect(await sealed()).toBeNull();
  });

  it('two servers setting one header on one host with different values: 400 egress_header_conflict', async () => {
    const a = { name: 'a', url: 'https://tools.example/a', authentication: { type: 'bearer', token: 'one' } };
    const b = { name: 'b', url: 'https://tools.example/b', authentication: { type: 'headers', headers: [{ name: 'authorization', value: 'Bearer two' }] } };
    expectError(await s.api('POST', '/agents', { body: { mcpServers: [a, b] } }), 400, 'egress_header_conflict');
    const agent = (await s.api('POST', '/agents', { body: { mcpServers: [a] } })).body.agent;
    expectError(await s.api('PATCH', `/agents/${agent.id}`, { body: { mcpServers: [a, b] } }), 400, 'egress_header_conflict');
    // The same value, or another host, is no conflict.
    expect((await s.api('POST', '/agents', { body: { mcpServers: [a, { ...b, authentication: { type: 'bearer', token: 'one' } }] } })).status).toBe(201);
    expect((await s.api('POST', '/agents', { body: { mcpServers: [a, { ...b, url: 'https://elsewhere.example/b' }] } })).status).toBe(201);
    // A kept (omitted) credential counts too.
    expectError(await s.api('PATCH', `/agents/${agent.id}`, { body: { mcpServers: [{ name: 'a', url: a.url }, b] } }), 400, 'egress_header_conflict');
    // GraphQL (authentication as a @oneOf input) answers the same code.
    const gql = await s.gql(`mutation($i: CreateAgentInput!) { createAgent(input: $i) { id } }`, {
      i: {
        mcpServers: [
          { name: 'a', url: a.url, authentication: { bearer: { token: 'one' } } },
          { name: 'b', url: b.url, authentication: { headers: { headers: [{ name: 'authorization', value: 'Bearer two' }] } } },
        ],
      },
    });
    expect(gql.body.errors?.[0]?.extensions?.code).toBe('egress_header_conflict');
  });

  it('refuses bad input with 400 invalid_request', async () => {
    const bad = [
      { mcpServers: [docs({ authentication: { type: 'basic', token: 'x' } })] },
      { mcpServers: [docs({ authentication: { type: 'bearer', token: '' } })] },
      { mcpServers: [docs({ authentication: { type: 'bearer', token: 'a\r\nX-Evil: 1' } })] },
      { mcpServers: [docs({ authentication: { type: 'headers', headers: [] } })] },
      { mcpServers: [docs({ authentication: { type: 'headers', headers: [{ name: 'Mcp-Session-Id', value: 'x' }] } })] },
      { mcpServers: [docs({ authentication: { type: 'headers', headers: [{ name: 'bad header', value: 'x' }] } })] },
      { mcpServers: [docs({ authentication: { type: 'bearer', token: 'x', extra: 1 } })] },
      { mcpServers: [{ name: 'x', url: 'http://tools.example/mcp' }] },
      { mcpServers: [{ name: 'x', url: 'https://user:pw@tools.example/mcp' }] },
      { mcpServers: [{ name: 'x', url: 'https://169.254.169.254/mcp' }] },
      {
        mcpServers: [
          { name: 'x', url: 'https://a.example/mcp' },
          { name: 'x', url: 'https://b.example/mcp' },
        ],
      },
    ];
    for (const body of bad) expectError(await s.api('POST', '/agents', { body }), 400, 'invalid_request');
  });
});

describe('logs', () => {
  it("the service's own log (trace level) never carries the credential", async () => {
    const { env, token } = deploymentEnv({
      postgres: false,
      providerUrl: fake.anthropicBaseUrl,
      extra: { OUTBOUND_ALLOW: '127.0.0.0/8', LOG_LEVEL: 'trace', LOG_FORMAT: 'json' },
    });
    const child = await startChildServer(env);
    try {
      const agent = (
        await api(child.base, token, 'POST', '/agents', {
          mcpServers: [docs({ tools: { include: ['add', 'fail'] }, authentication: { type: 'bearer', token: TOKEN } })],
        })
      ).body.agent;
      const session = (await api(child.base, token, 'POST', '/sessions', { agent: agent.id })).body.session;
      await waitFor(async () => (await api(child.base, token, 'GET', `/sessions/${session.id}`)).body.session.status === 'idle', 20_000);
      fake.enqueue({ kind: 'tool_call', name: 'mcp__docs__fail', input: {} }, { kind: 'text', text: 'done' });
      await api(child.base, token, 'POST', `/sessions/${session.id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }] });
      const events = await waitForHistory(child.base, token, session.id, (ev) => ev.some((e) => e.type === 'session.status_idle'));
      expect(events.find((e) => e.type === 'agent.tool_result').part.status).toBe('error');
      expect(mcp.requests.some((r) => r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
      expect(child.output().length).toBeGreaterThan(0);
      expect(child.output()).not.toContain(TOKEN);
    } finally {
      await child.kill('SIGTERM');
    }
  }, 120_000);
});
