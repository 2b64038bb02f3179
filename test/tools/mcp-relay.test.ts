// The MCP relay for CLI engines (/gateway/mcp), over real HTTP with the official SDK's client,
// as a CLI in the sandbox reaches it: the session credential as a bearer token, valid only while
// a turn of its session runs; exactly the session's service-side tools (the agent's MCP servers'
// tools, include/exclude applied, and the granted capabilities; never the sandbox tools); a call
// to a real MCP server carrying the agent's runtime authentication that the CLI never sees; a
// capability against a fake vendor, metered; revocation by PATCH on the next call; the tool
// policy's always_ask refused; another session's credential confined to its own session; and
// the codex adapter's configuration of the relay, read by the real codex binary.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeMcpServer, type FakeMcpServer, TINY_PNG } from '../fake-vendors/mcp-server.js';
import { startFakeVendors, type FakeVendors } from '../fake-vendors/vendors.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { localSpawner } from '../helpers/cli-process.js';
import { readySession, history } from '../helpers/sessions.js';
import { prisma } from '../../src/db/client.js';
import { issueSessionCredential } from '../../src/gateway/session-credentials.js';
import { codexAdapter, CODEX_VERSION } from '../../src/engines/cli/codex/adapter.js';
import { mcpRelayFor, cliMcpToolName } from '../../src/engines/cli/core/mcp-relay.js';
import { runCliTurn } from '../../src/engines/cli/core/run-cli.js';
import type { EngineEvent } from '../../src/engines/cli/core/adapter.js';

const TOKEN = 'relay-mcp-secret-4b8e1d';
let s: TestServer;
let mcp: FakeMcpServer;
let vendors: FakeVendors;
let fake: FakeProvider;
/** Every answer the relay gave (status, headers and body), to check none carries a secret. */
const answers: string[] = [];

beforeAll(async () => {
  process.env.OUTBOUND_ALLOW = '127.0.0.0/8';
  mcp = await startFakeMcpServer();
  vendors = await startFakeVendors();
  Object.assign(process.env, { EXA_API_KEY: vendors.keys.exa, EXA_BASE_URL: vendors.exaBaseUrl });
  fake = await startFakeProvider();
  s = await startTestServer({
    anthropicApiKey: 'sk-ant-test',
    anthropicBaseUrl: fake.anthropicBaseUrl,
    openaiApiKey: 'sk-oai-relay-test',
    openaiBaseUrl: fake.openaiBaseUrl,
  });
});
afterAll(async () => {
  await s?.stop();
  await mcp?.close();
  await vendors?.close();
  await fake?.close();
  for (const k of ['OUTBOUND_ALLOW', 'EXA_API_KEY', 'EXA_BASE_URL']) delete process.env[k];
});
beforeEach(() => {
  mcp.requests.length = 0;
  mcp.calls.length = 0;
  vendors.requests.length = 0;
  answers.length = 0;
  fake.reset();
});

const docs = (extra: Record<string, unknown> = {}) => ({ name: 'docs', url: mcp.url, ...extra });

/** An agent's session whose turn is running (the only time its credential works), and that credential. */
async function runningSession(agentBody: Record<string, unknown>) {
  const { agent, session } = await readySession(s, agentBody);
  await prisma.session.update({ where: { id: session.id }, data: { status: 'running', turnCount: 1 } });
  return { agentId: agent.id as string, id: session.id as string, token: issueSessionCredential(session.id) };
}

const recordingFetch: typeof fetch = async (url, init) => {
  const res = await fetch(url, init);
  answers.push(`${res.status} ${JSON.stringify([...res.headers])} ${await res.clone().text()}`);
  return res;
};

/** An MCP client connected to the relay as a CLI would be. */
async function relayClient(token: string): Promise<Client> {
  const client = new Client({ name: 'test-cli', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/gateway/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: recordingFetch,
  });
  await client.connect(transport);
  return client;
}

const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name).sort();
const text = (r: any) => (r.content as { type: string; text: string }[]).map((c) => c.text).join('\n');

describe('the MCP relay', () => {
  it('lists exactly the service-side tools (include/exclude, granted capabilities) and calls an MCP tool with the credential the CLI never sees', async () => {
    const { id, token } = await runningSession({
      mcpServers: [
        docs({ tools: { include: ['search', 'fail'] }, authentication: { type: 'bearer', token: TOKEN } }),
        { name: 'calc', url: mcp.url, tools: { exclude: ['search', 'fail', 'explode', 'picture', 'slow', 'big'] } },
      ],
      capabilities: ['exa.search'],
    });
    const client = await relayClient(token);
    const tools = (await client.listTools()).tools;
    expect(tools.map((t) => t.name).sort()).toEqual(['exa_search', 'mcp__calc__add', 'mcp__docs__fail', 'mcp__docs__search']);
    const search = tools.find((t) => t.name === 'mcp__docs__search')!;
    expect(search.description).toContain('Search the documentation');
    expect(search.inputSchema).toMatchObject({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'] });

    const r = await client.callTool({ name: 'mcp__docs__search', arguments: { query: 'relay' } });
    expect(r.isError).toBe(false);
    // Structured content as a text block of its JSON (codex would show a model only that part).
    expect(r.content).toEqual([
      { type: 'text', text: '3 pages match "relay"' },
      { type: 'text', text: '{"hits":3}' },
    ]);
    expect(r.structuredContent).toBeUndefined();
    expect(mcp.calls).toEqual([{ name: 'search', args: { query: 'relay' } }]);
    // The server got the agent's credential on every request to the docs server…
    const toDocs = mcp.requests.filter((q) => q.headers.authorization);
    expect(toDocs.length).toBeGreaterThan(0);
    for (const q of toDocs) expect(q.headers.authorization).toBe(`Bearer ${TOKEN}`);
    // …and nothing the relay answered carries it (nor the session credential).
    expect(answers.length).toBeGreaterThan(1);
    for (const a of answers) {
      expect(a).not.toContain(TOKEN);
      expect(a).not.toContain(token);
    }

    const add = await client.callTool({ name: 'mcp__calc__add', arguments: { a: 40, b: 2 } });
    expect(text(add)).toBe('42');

    // No event is written for a plain call: the CLI's own output is the session's record of it.
    expect((await history(s, id)).filter((e) => e.type.startsWith('agent.'))).toEqual([]);
    await client.close();
  });

  it('a tool error, an unknown tool and a sandbox tool name are MCP tool errors (isError)', async () => {
    const { token } = await runningSession({ mcpServers: [docs({ tools: { include: ['fail', 'explode'] } })] });
    const client = await relayClient(token);
    const failed = await client.callTool({ name: 'mcp__docs__fail', arguments: {} });
    expect(failed.isError).toBe(true);
    expect(text(failed)).toBe('the index is being rebuilt');
    const thrown = await client.callTool({ name: 'mcp__docs__explode', arguments: {} });
    expect(thrown.isError).toBe(true);
    expect(text(thrown)).toContain('kaboom');
    for (const name of ['mcp__docs__search', 'bash', 'read_file']) {
      const r = await client.callTool({ name, arguments: { command: 'id', path: 'x', query: 'q' } });
      expect(r.isError).toBe(true);
      expect(text(r)).toBe(`unknown tool ${name}`);
    }
    expect(mcp.calls.map((c) => c.name)).toEqual(['fail', 'explode']);
    await client.close();
  });

  it('an image result is stored as a session file and shown to clients; the CLI gets its file id', async () => {
    const { id, token } = await runningSession({ mcpServers: [docs({ tools: { include: ['picture'] } })] });
    const client = await relayClient(token);
    const r = await client.callTool({ name: 'mcp__docs__picture', arguments: {} });
    expect(r.isError).toBe(false);
    const [caption, file] = r.content as { type: string; text: string }[];
    expect(caption).toEqual({ type: 'text', text: 'here it is' });
    const ref = JSON.parse(file!.text);
    expect(ref).toMatchObject({ type: 'file', file_id: expect.stringMatching(/^file_/), mime_type: 'image/png', size_bytes: TINY_PNG.length });
    const listed = await s.api('GET', `/files?scope_id=${id}`);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: ref.file_id, downloadable: true })]);
    const shown = (await history(s, id)).find((e) => e.type === 'agent.message');
    expect(shown.parts[0]).toMatchObject({ type: 'image', media_type: 'image/png', uri: `/v1/files/${ref.file_id}/content` });
    await client.close();
  });

  it('runs a granted capability against its vendor, metered; a PATCH revoking it refuses the next call and drops it from the list', async () => {
    const { agentId, id, token } = await runningSession({ capabilities: ['exa.search'] });
    const client = await relayClient(token);
    expect(await names(client)).toEqual(['exa_search']);
    const r = await client.callTool({ name: 'exa_search', arguments: { query: 'agent platforms', num_results: 3 } });
    expect(r.isError, text(r)).toBe(false);
    const result = JSON.parse(text(r));
    expect(result).toMatchObject({ request_id: 'req_search_1' });
    expect(result.results).toHaveLength(3);
    const req = vendors.requests.find((q) => q.path === '/exa/search')!;
    expect(req.headers['x-api-key']).toBe(vendors.keys.exa);
    for (const a of answers) expect(a).not.toContain(vendors.keys.exa);
    const usage = await prisma.modelUsage.findMany({ where: { sessionId: id, model: 'exa.search' } });
    expect(usage).toMatchObject([{ provider: 'exa', billing: 'platform', turn: 1, costNanoUsd: 7_000_000n }]);
    expect((await prisma.session.findUniqueOrThrow({ where: { id } })).consumedNanoUsd).toBe(7_000_000n);

    expect((await s.api('PATCH', `/agents/${agentId}`, { body: { capabilities: [] } })).status).toBe(200);
    const again = await client.callTool({ name: 'exa_search', arguments: { query: 'again' } });
    expect(again.isError).toBe(true);
    expect(text(again)).toContain('the capability exa.search is not granted to this agent (it may have been revoked)');
    expect(vendors.requests.filter((q) => q.path === '/exa/search')).toHaveLength(1);
    expect(await names(client)).toEqual([]);
    await client.close();
  });

  it('a tool the policy says to ask about is refused with a tool error (a CLI cannot pause mid-call)', async () => {
    const { agentId, token } = await runningSession({ mcpServers: [docs({ tools: { include: ['search', 'add'] } })] });
    const put = await s.api('PUT', `/agents/${agentId}/tool-policy`, {
      body: { default: 'always_allow', rules: [{ target: 'tool', name: 'mcp__docs__search', policy: 'always_ask' }] },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const client = await relayClient(token);
    const r = await client.callTool({ name: 'mcp__docs__search', arguments: { query: 'x' } });
    expect(r.isError).toBe(true);
    expect(text(r)).toContain("needs a person's confirmation");
    const ok = await client.callTool({ name: 'mcp__docs__add', arguments: { a: 1, b: 2 } });
    expect(text(ok)).toBe('3');
    expect(mcp.calls.map((c) => c.name)).toEqual(['add']);
    await client.close();
  });
});

describe('who may use the relay', () => {
  it('a credential outside a running turn, a forged one or none: 401; GET and DELETE: 405', async () => {
    const { id, token } = await runningSession({ mcpServers: [docs()] });
    const post = (auth: string | null) =>
      fetch(`${s.url}/gateway/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(auth ? { authorization: `Bearer ${auth}` } : {}) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
    expect((await post(token)).status).toBe(200);
    for (const bad of [null, 'nonsense', `${token.slice(0, -4)}AAAA`]) {
      const res = await post(bad);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: { code: 'unauthorized' } });
    }
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${s.url}/gateway/mcp`, { method, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }

    await prisma.session.update({ where: { id }, data: { status: 'idle' } });
    expect((await post(token)).status).toBe(401);
    await expect(relayClient(token)).rejects.toMatchObject({ code: 401, message: expect.stringContaining('no turn of its session is running') });
    expect(mcp.calls).toEqual([]);
  });

  it("another session's credential reaches only that session's tools", async () => {
    const mine = await runningSession({ mcpServers: [docs({ authentication: { type: 'bearer', token: TOKEN } })], capabilities: ['exa.search'] });
    const other = await runningSession({ mcpServers: [{ name: 'elsewhere', url: mcp.url, tools: { include: ['add'] } }] });
    const client = await relayClient(other.token);
    expect(await names(client)).toEqual(['mcp__elsewhere__add']);
    const search = await client.callTool({ name: 'mcp__docs__search', arguments: { query: 'steal' } });
    expect(search.isError).toBe(true);
    expect(text(search)).toBe('unknown tool mcp__docs__search');
    const exa = await client.callTool({ name: 'exa_search', arguments: { query: 'steal' } });
    expect(exa.isError).toBe(true);
    expect(text(exa)).toContain('the capability exa.search is not granted to this agent');
    expect(mcp.calls).toEqual([]);
    expect(vendors.requests).toEqual([]);
    expect(mcp.requests.some((q) => q.headers.authorization)).toBe(false);
    // Its own session is untouched: no usage, no event.
    expect(await prisma.modelUsage.count({ where: { sessionId: mine.id } })).toBe(0);
    await client.close();
  });
});

/** The codex CLI from npm in the cache test/engines/codex.test.ts uses (installed once, reused). */
function codexBinary(): string {
  const dir = path.join(process.env.ENGINE_CACHE_DIR ?? path.join(os.tmpdir(), 'agent-service-engines'), `codex-${CODEX_VERSION}`);
  const bin = path.join(dir, 'node_modules', '.bin', 'codex');
  if (!fs.existsSync(bin)) {
    fs.mkdirSync(dir, { recursive: true });
    execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', dir, `${codexAdapter.cli.npm}@${CODEX_VERSION}`], {
      stdio: 'ignore',
      timeout: 300_000,
    });
  }
  return bin;
}

describe('CLI configuration of the relay', () => {
  it('is offered only to agents with a service-side tool, at the gateway as the CLI reaches it', () => {
    expect(mcpRelayFor(null)).toBeNull();
    expect(mcpRelayFor({ mcpServers: [], capabilities: [] })).toBeNull();
    expect(mcpRelayFor({ mcpServers: [docs()], capabilities: [] })).toMatchObject({
      url: 'http://127.0.0.1:3128/gateway/mcp',
      tokenEnv: 'AGENT_SERVICE_TOKEN',
    });
    expect(mcpRelayFor({ mcpServers: [], capabilities: ['exa.search'] }, `${s.url}/gateway/`)?.url).toBe(`${s.url}/gateway/mcp`);
    // Events name a relayed tool as hermes does; other MCP servers keep their prefix.
    expect(cliMcpToolName('agent_service', 'mcp__docs__search')).toBe('mcp__docs__search');
    expect(cliMcpToolName('agent_service', 'exa_search')).toBe('exa_search');
    expect(cliMcpToolName('github', 'search')).toBe('mcp__github__search');
  });

  it('codex gets it as a streamable HTTP server keyed by AGENT_SERVICE_TOKEN, which the real binary reads; no secret in its files', () => {
    const relay = mcpRelayFor({ mcpServers: [docs()], capabilities: [] })!;
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-codex-'));
    const inv = codexAdapter.invocation(
      { prompt: 'hi', systemPrompt: 'sys', model: 'gpt-5', reasoningEffort: null, resumeId: null, mcpRelay: relay },
      { binPath: '/opt/engines/codex', home, gatewayBaseUrl: 'http://127.0.0.1:3128/gateway/openai/v1' },
    );
    const config = inv.files[`${home}/.codex/config.toml`]!;
    expect(config).toContain('[mcp_servers.agent_service]\nurl = "http://127.0.0.1:3128/gateway/mcp"\nbearer_token_env_var = "AGENT_SERVICE_TOKEN"');
    expect(JSON.stringify(inv)).not.toContain(TOKEN);
    const without = codexAdapter.invocation(
      { prompt: 'hi', systemPrompt: 'sys', model: 'gpt-5', reasoningEffort: null, resumeId: null },
      { binPath: 'x', home, gatewayBaseUrl: 'http://g' },
    );
    expect(without.files[`${home}/.codex/config.toml`]).not.toContain('mcp_servers');

    // The real codex reads the table as we mean it.
    fs.mkdirSync(`${home}/.codex`, { recursive: true });
    fs.writeFileSync(`${home}/.codex/config.toml`, config);
    const got = JSON.parse(
      execFileSync(codexBinary(), ['mcp', 'get', 'agent_service', '--json'], {
        env: { PATH: process.env.PATH!, HOME: home, CODEX_HOME: `${home}/.codex` },
        encoding: 'utf8',
      }),
    );
    expect(got).toMatchObject({
      name: 'agent_service',
      enabled: true,
      transport: { type: 'streamable_http', url: relay.url, bearer_token_env_var: 'AGENT_SERVICE_TOKEN' },
      tool_timeout_sec: relay.toolTimeoutSec,
      startup_timeout_sec: relay.startupTimeoutSec,
    });
    fs.rmSync(home, { recursive: true, force: true });
  });
});

describe('the real codex CLI through the relay', () => {
  it("calls remote MCP tools of the agent (a result, a tool error): the tool server gets the agent's credential, codex only the session credential", async () => {
    const bin = codexBinary();
    const { agentId, id, token } = await runningSession({
      mcpServers: [docs({ tools: { include: ['search', 'fail'] }, authentication: { type: 'bearer', token: TOKEN } })],
    });
    const agent = await prisma.agent.findUniqueOrThrow({ where: { id: agentId } });
    const relay = mcpRelayFor(agent, `${s.url}/gateway`);
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-codex-home-'));
    const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-codex-ws-'));
    const env = { PATH: process.env.PATH!, HOME: home, AGENT_SERVICE_TOKEN: token };
    // Codex offers the relay's tools as the Responses namespace `mcp__agent_service`; the model calls one in it.
    fake.enqueue(
      { kind: 'tool_call', name: 'mcp__docs__search', namespace: 'mcp__agent_service', input: { query: 'relay' }, id: 'call_relay_1' },
      { kind: 'tool_call', name: 'mcp__docs__fail', namespace: 'mcp__agent_service', input: {}, id: 'call_relay_2' },
      { kind: 'text', text: 'Three pages match.' },
    );
    const inv = codexAdapter.invocation(
      { prompt: 'look it up', systemPrompt: 'You are the test agent.', model: 'gpt-5', reasoningEffort: 'low', resumeId: null, mcpRelay: relay },
      { binPath: bin, home, gatewayBaseUrl: `${s.url}/gateway/openai/v1` },
    );
    const events: EngineEvent[] = [];
    const stderr: string[] = [];
    const result = await runCliTurn({
      invocation: inv,
      mapper: codexAdapter.mapper(),
      spawn: localSpawner({ cwd: workspace, env, stderr }),
      emit: async (e) => void events.push(e),
      signal: new AbortController().signal,
    });
    expect(result.stop, stderr.join('')).toEqual({ type: 'end_turn' });

    const offered = fake.requests[0]!.body.tools.find((t: any) => t.type === 'namespace' && t.name === 'mcp__agent_service');
    expect(offered.tools.map((t: any) => t.name).sort()).toEqual(['mcp__docs__fail', 'mcp__docs__search']);
    expect(mcp.calls).toEqual([
      { name: 'search', args: { query: 'relay' } },
      { name: 'fail', args: {} },
    ]);
    for (const q of mcp.requests) expect(q.headers.authorization).toBe(`Bearer ${TOKEN}`);
    // The events name the tool as hermes does, with the result as hermes records it.
    expect(events.map((e) => e.type)).toEqual(['agent.tool_use', 'agent.tool_result', 'agent.tool_use', 'agent.tool_result', 'agent.message']);
    expect(events[0]!.fields).toMatchObject({ part: { tool_name: 'mcp__docs__search', args: { query: 'relay' } } });
    expect(events[1]!.fields).toEqual({
      part: expect.objectContaining({
        tool_name: 'mcp__docs__search',
        status: 'ok',
        result: {
          content: [
            { type: 'text', text: '3 pages match "relay"' },
            { type: 'text', text: '{"hits":3}' },
          ],
        },
      }),
    });
    // A tool error reaches codex as an MCP tool error (isError) and comes back as an error result.
    expect(events[3]!.fields).toMatchObject({
      part: {
        tool_name: 'mcp__docs__fail',
        status: 'error',
        result: { error: 'the index is being rebuilt', content: [{ type: 'text', text: 'the index is being rebuilt' }] },
      },
    });
    // The model read the whole result.
    const output = fake.requests[1]!.body.input.find((x: any) => x.type === 'function_call_output' && x.call_id === 'call_relay_1');
    expect(JSON.stringify(output.output)).toContain('3 pages match');
    // Nothing codex holds carries the tool server's credential.
    let held = JSON.stringify(env);
    for (const entry of fs.readdirSync(home, { withFileTypes: true, recursive: true })) {
      if (entry.isFile()) held += fs.readFileSync(path.join(entry.parentPath, entry.name)).toString('latin1');
    }
    expect(held).toContain('[mcp_servers.agent_service]');
    expect(held).not.toContain(TOKEN);
    expect(await prisma.modelUsage.count({ where: { sessionId: id } })).toBe(3);
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(workspace, { recursive: true, force: true });
  }, 240_000);
});
