// Agents over real HTTP: shapes, defaults, every limit at its boundary, domain errors, PATCH
// rules, prompt versions, secrets (never echoed), archive/delete, scopes and isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type ApiResponse } from './helpers/server.js';

let s: TestServer;
const seen: string[] = []; // every response body, scanned for secret values at the end
beforeAll(async () => {
  s = await startTestServer();
  const api = s.api.bind(s);
  s.api = async (...args: Parameters<TestServer['api']>) => {
    const res = await api(...args);
    seen.push(JSON.stringify(res.body));
    return res;
  };
});
afterAll(async () => {
  await s?.stop();
});

const expectError = (res: ApiResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({ error: { code, message: expect.any(String) } });
};
const create = async (body: unknown = {}) => {
  const res = await s.api('POST', '/agents', { body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.agent;
};

const LIST_KEYS = ['agentType', 'archived', 'capabilities', 'createdAt', 'displayName', 'harnessVersion', 'id', 'llm', 'name', 'reasoningEffort', 'sessionCount', 'version'];
const DETAIL_KEYS = [...LIST_KEYS, 'customData', 'defaultSessionId', 'description', 'instructions', 'mcpServers', 'metadata', 'prompt', 'promptVersion', 'skills', 'slug', 'universe'].sort();

describe('create', () => {
  it('an empty body makes a hermes agent with the default model and no capabilities', async () => {
    const res = await s.api('POST', '/agents', { body: {} });
    expect(res.status).toBe(201);
    const a = res.body.agent;
    expect(Object.keys(a).sort()).toEqual(DETAIL_KEYS);
    expect(a).toMatchObject({
      id: expect.stringMatching(/^agent_/), agentType: 'hermes', llm: 'claude-sonnet-4-5', capabilities: [], version: 1,
      archived: false, sessionCount: 0, reasoningEffort: null, prompt: null, promptVersion: null, mcpServers: [], skills: [],
      instructions: [], customData: [], metadata: {}, defaultSessionId: null, description: null,
    });
    expect(a.slug).toMatch(/^[a-z0-9-]+$/);
    expect(a.displayName.length).toBeGreaterThan(0);
    const who = await s.api('GET', '/whoami');
    expect(a.universe).toBe(who.body.universe.slug);
  });

  it('a request without a body is the same as {}', async () => {
    const res = await s.api('POST', '/agents');
    expect(res.status).toBe(201);
    expect(res.body.agent.agentType).toBe('hermes');
  });

  it('takes every field and returns them in the detail', async () => {
    const a = await create({
      name: 'Researcher', description: 'finds things', agentType: 'claude_code', llm: 'claude-opus-4-5', reasoningEffort: 'high',
      prompt: 'You research.', displayName: 'Research Bot', capabilities: ['exa.search', 'tinyfish.fetch'],
      instructions: [{ name: 'STYLE.md', content: 'be brief' }],
      skills: [{ type: 'skill', skillId: 'skill_abc' }, { type: 'github', url: 'https://github.com/o/r', ref: 'main' }],
      mcpServers: [{ name: 'search', url: 'https://mcp.example.com/sse', tools: { include: ['find'] } }],
      customData: [{ id: 'sheet1', name: 'sales_q1', kind: 'spreadsheet', config: { tab: 'Q1' } }],
      metadata: { team: 'growth' },
    });
    expect(a).toMatchObject({
      name: 'Researcher', description: 'finds things', agentType: 'claude_code', llm: 'claude-opus-4-5', reasoningEffort: 'high',
      prompt: 'You research.', promptVersion: 1, displayName: 'Research Bot', slug: 'research-bot', capabilities: ['exa.search', 'tinyfish.fetch'],
      instructions: [{ name: 'STYLE.md', content: 'be brief' }],
      skills: [{ type: 'skill', skillId: 'skill_abc', version: 'latest' }, { type: 'github', url: 'https://github.com/o/r', ref: 'main' }],
      mcpServers: [{ type: 'url', name: 'search', url: 'https://mcp.example.com/sse', tools: { include: ['find'], exclude: [] } }],
      customData: [{ id: 'sheet1', name: 'sales_q1', kind: 'spreadsheet', scope: 'creator', config: { tab: 'Q1' } }],
      metadata: { team: 'growth' },
    });
  });

  it('mints unique slugs from displayName', async () => {
    const a = await create({ displayName: 'Twin' });
    const b = await create({ displayName: 'Twin' });
    expect(a.slug).toBe('twin');
    expect(b.slug).not.toBe('twin');
    expect(b.slug).toMatch(/^twin-/);
  });

  it('refuses unknown capability ids and unknown fields with 400', async () => {
    expectError(await s.api('POST', '/agents', { body: { capabilities: ['exa.search', 'made.up'] } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/agents', { body: { nope: true } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/agents', { body: { agentType: 'robot' } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/agents', { body: { instructions: [{ name: 'notes.txt' }] } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/agents', { body: { customData: [{ id: 'x', name: 'Bad-Name', kind: 'doc' }] } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/agents', { body: { mcpServers: [{ name: 'x', url: 'not a url' }] } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/agents', { body: { skills: [{ type: 'skill', skillId: 's', version: 'v2' }] } }), 400, 'invalid_request');
  });

  it('answers 422 invalid_spec for a model the engine does not run, or an effort it does not allow', async () => {
    expectError(await s.api('POST', '/agents', { body: { llm: 'gpt-2' } }), 422, 'invalid_spec');
    expectError(await s.api('POST', '/agents', { body: { agentType: 'codex', llm: 'claude-sonnet-4-5' } }), 422, 'invalid_spec');
    expectError(await s.api('POST', '/agents', { body: { agentType: 'claude_code', reasoningEffort: 'minimal' } }), 422, 'invalid_spec');
    expectError(await s.api('POST', '/agents', { body: { agentType: 'openclaw', reasoningEffort: 'low' } }), 422, 'invalid_spec');
    expectError(await s.api('POST', '/agents', { body: { agentType: 'pi', reasoningEffort: 'none' } }), 422, 'invalid_spec');
    await create({ agentType: 'pi', reasoningEffort: 'off' });
    await create({ agentType: 'hermes', reasoningEffort: 'ultra' });
    await create({ agentType: 'codex', reasoningEffort: 'none' });
  });

  it.each([
    ['name', (n: number) => ({ name: 'n'.repeat(n) }), 60],
    ['displayName', (n: number) => ({ displayName: 'd'.repeat(n) }), 60],
    ['description', (n: number) => ({ description: 'x'.repeat(n) }), 500],
    ['prompt', (n: number) => ({ prompt: 'p'.repeat(n) }), 100_000],
    ['skills', (n: number) => ({ skills: Array.from({ length: n }, (_, i) => ({ type: 'skill', skillId: `skill_${i}` })) }), 20],
    ['mcpServers', (n: number) => ({ mcpServers: Array.from({ length: n }, (_, i) => ({ name: `m${i}`, url: 'https://m.example' })) }), 20],
    ['mcp name', (n: number) => ({ mcpServers: [{ name: 'm'.repeat(n), url: 'https://m.example' }] }), 255],
    ['tools.include', (n: number) => ({ mcpServers: [{ name: 'm', url: 'https://m.example', tools: { include: Array.from({ length: n }, (_, i) => `t${i}`) } }] }), 200],
    ['tools.exclude', (n: number) => ({ mcpServers: [{ name: 'm', url: 'https://m.example', tools: { exclude: Array.from({ length: n }, (_, i) => `t${i}`) } }] }), 200],
  ] as const)('%s: %i accepted, one more refused', async (_name, body, max) => {
    expect((await s.api('POST', '/agents', { body: body(max) })).status).toBe(201);
    expectError(await s.api('POST', '/agents', { body: body(max + 1) }), 400, 'invalid_request');
  });

  it('mcp server name must be non-empty', async () => {
    expectError(await s.api('POST', '/agents', { body: { mcpServers: [{ name: '', url: 'https://m.example' }] } }), 400, 'invalid_request');
  });

  it('honours Idempotency-Key: a retry returns the first agent and creates nothing', async () => {
    const headers = { 'idempotency-key': 'create-agent-1' };
    const first = await s.api('POST', '/agents', { body: { displayName: 'Once' }, headers });
    const again = await s.api('POST', '/agents', { body: { displayName: 'Once' }, headers });
    expect(again.status).toBe(201);
    expect(again.body.agent.id).toBe(first.body.agent.id);
    const list = await s.api('GET', '/agents');
    expect(list.body.agents.filter((a: any) => a.displayName === 'Once')).toHaveLength(1);
    expectError(await s.api('POST', '/agents', { body: { displayName: 'Other' }, headers }), 400, 'invalid_request');
  });
});

describe('read', () => {
  it('lists items with the list fields only, newest first; detail by id', async () => {
    const a = await create({ displayName: 'Listed' });
    const list = await s.api('GET', '/agents');
    expect(list.status).toBe(200);
    expect(Object.keys(list.body.agents[0]).sort()).toEqual([...LIST_KEYS].sort());
    expect(list.body.agents[0].id).toBe(a.id);
    const one = await s.api('GET', `/agents/${a.id}`);
    expect(one.body.agent).toEqual(a);
  });

  it('unknown ids are 404 not_found', async () => {
    expectError(await s.api('GET', '/agents/agent_nope'), 404, 'not_found');
  });
});

describe('update', () => {
  it('replaces capabilities whole, [] revokes all; merges metadata with null deleting; replaces skills and mcpServers; bumps version', async () => {
    const a = await create({ capabilities: ['exa.search', 'exa.contents'], metadata: { keep: 1, drop: 2 }, mcpServers: [{ name: 'a', url: 'https://a.example' }] });
    let r = await s.api('PATCH', `/agents/${a.id}`, { body: { capabilities: ['mm.i2v'] } });
    expect(r.body.agent.capabilities).toEqual(['mm.i2v']);
    expect(r.body.agent.version).toBe(2);
    r = await s.api('PATCH', `/agents/${a.id}`, { body: { capabilities: [] } });
    expect(r.body.agent.capabilities).toEqual([]);
    r = await s.api('PATCH', `/agents/${a.id}`, { body: { metadata: { drop: null, added: 'x' } } });
    expect(r.body.agent.metadata).toEqual({ keep: 1, added: 'x' });
    r = await s.api('PATCH', `/agents/${a.id}`, { body: { mcpServers: [{ name: 'b', url: 'https://b.example' }], skills: [{ type: 'skill', skillId: 'skill_z', version: 'skr_1' }] } });
    expect(r.body.agent.mcpServers.map((m: any) => m.name)).toEqual(['b']);
    expect(r.body.agent.skills).toEqual([{ type: 'skill', skillId: 'skill_z', version: 'skr_1' }]);
    expect(r.body.agent.version).toBe(5);
    r = await s.api('PATCH', `/agents/${a.id}`, { body: {} });
    expect(r.body.agent.version).toBe(6);
  });

  it('reasoningEffort null clears; harnessVersion moves to the current version; displayName max 60', async () => {
    const a = await create({ reasoningEffort: 'high' });
    let r = await s.api('PATCH', `/agents/${a.id}`, { body: { reasoningEffort: null, harnessVersion: 'anything' } });
    expect(r.body.agent.reasoningEffort).toBeNull();
    expect(r.body.agent.harnessVersion).toBe(a.harnessVersion);
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { harnessVersion: '' } }), 400, 'invalid_request');
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { reasoningEffort: 'turbo' } }), 400, 'invalid_request');
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { displayName: 'x'.repeat(61) } }), 400, 'invalid_request');
    r = await s.api('PATCH', `/agents/${a.id}`, { body: { displayName: 'x'.repeat(60) } });
    expect(r.status).toBe(200);
  });

  it('expectedVersion mismatch is 409 version_conflict; a match applies', async () => {
    const a = await create();
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { metadata: { a: 1 }, expectedVersion: 7 } }), 409, 'version_conflict');
    const ok = await s.api('PATCH', `/agents/${a.id}`, { body: { metadata: { a: 1 }, expectedVersion: 1 } });
    expect(ok.body.agent.version).toBe(2);
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { metadata: { a: 2 }, expectedVersion: 1 } }), 409, 'version_conflict');
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { expectedVersion: 0 } }), 400, 'invalid_request');
  });

  it('two concurrent PATCHes with the same expectedVersion: exactly one wins', async () => {
    const a = await create();
    const [x, y] = await Promise.all([
      s.api('PATCH', `/agents/${a.id}`, { body: { metadata: { w: 'x' }, expectedVersion: 1 } }),
      s.api('PATCH', `/agents/${a.id}`, { body: { metadata: { w: 'y' }, expectedVersion: 1 } }),
    ]);
    expect([x.status, y.status].sort()).toEqual([200, 409]);
  });
});

describe('prompt versions', () => {
  it('a changed prompt is a new version; the same prompt is unchanged; versions list newest first', async () => {
    const a = await create({ prompt: 'v1' });
    expect((await s.api('PUT', `/agents/${a.id}/prompt`, { body: { prompt: 'v1' } })).body).toEqual({ version: 1, unchanged: true });
    expect((await s.api('PUT', `/agents/${a.id}/prompt`, { body: { prompt: 'v2' } })).body).toEqual({ version: 2, unchanged: false });
    const versions = await s.api('GET', `/agents/${a.id}/prompt/versions`);
    expect(versions.body.versions.map((v: any) => [v.version, v.active, v.content])).toEqual([[2, true, 'v2'], [1, false, 'v1']]);
    expect(versions.body.versions[0]).toEqual({ version: 2, note: null, createdAt: expect.any(String), active: true, content: 'v2' });
    const detail = await s.api('GET', `/agents/${a.id}`);
    expect(detail.body.agent).toMatchObject({ prompt: 'v2', promptVersion: 2 });
  });

  it('prompt is required and at most 100000 characters', async () => {
    const a = await create();
    expectError(await s.api('PUT', `/agents/${a.id}/prompt`, { body: {} }), 400, 'invalid_request');
    expect((await s.api('PUT', `/agents/${a.id}/prompt`, { body: { prompt: 'p'.repeat(100_000) } })).status).toBe(200);
    expectError(await s.api('PUT', `/agents/${a.id}/prompt`, { body: { prompt: 'p'.repeat(100_001) } }), 400, 'invalid_request');
  });
});

describe('secrets', () => {
  const SECRET = 'sk-live-VERY-SECRET-value-9f8e7d';
  it('are write-only: keys listed, values never returned', async () => {
    const a = await create();
    expect((await s.api('PUT', `/agents/${a.id}/secrets/API_KEY`, { body: { value: SECRET, description: 'the key' } })).body).toEqual({ ok: true });
    expect((await s.api('GET', `/agents/${a.id}/secrets`)).body).toEqual({ secrets: [{ key: 'API_KEY', description: 'the key' }] });
    await s.api('GET', `/agents/${a.id}`);
    await s.gql(`query($id: String!) { agent(id: $id) { id } agentSecrets(agentId: $id) { key description } }`, { id: a.id });
    expect((await s.api('DELETE', `/agents/${a.id}/secrets/API_KEY`)).body).toEqual({ ok: true });
    expect((await s.api('GET', `/agents/${a.id}/secrets`)).body).toEqual({ secrets: [] });
    expectError(await s.api('DELETE', `/agents/${a.id}/secrets/API_KEY`), 404, 'not_found');
  });

  it('value 1 to 10000 characters, description max 500, key pattern', async () => {
    const a = await create();
    expectError(await s.api('PUT', `/agents/${a.id}/secrets/K`, { body: { value: '' } }), 400, 'invalid_request');
    expect((await s.api('PUT', `/agents/${a.id}/secrets/K`, { body: { value: 'v'.repeat(10_000) } })).status).toBe(200);
    expectError(await s.api('PUT', `/agents/${a.id}/secrets/K`, { body: { value: 'v'.repeat(10_001) } }), 400, 'invalid_request');
    expect((await s.api('PUT', `/agents/${a.id}/secrets/K`, { body: { value: 'v', description: 'd'.repeat(500) } })).status).toBe(200);
    expectError(await s.api('PUT', `/agents/${a.id}/secrets/K`, { body: { value: 'v', description: 'd'.repeat(501) } }), 400, 'invalid_request');
    expectError(await s.api('PUT', `/agents/${a.id}/secrets/bad-key!`, { body: { value: 'v' } }), 400, 'invalid_request');
  });

  it('are stored encrypted', async () => {
    const a = await create();
    await s.api('PUT', `/agents/${a.id}/secrets/DB_PASSWORD`, { body: { value: SECRET } });
    const { prisma } = await import('../src/db/client.js');
    const row = await prisma.agentSecret.findFirstOrThrow({ where: { agentId: a.id } });
    expect(row.ciphertext).not.toContain(SECRET);
    expect(row.ciphertext.startsWith('v1.')).toBe(true);
  });

  it('no response of this file ever contained a secret value', () => {
    for (const body of seen) expect(body).not.toContain(SECRET);
  });
});

describe('archive and delete', () => {
  it('archive (admin) makes the agent read-only; archive is idempotent', async () => {
    const a = await create();
    const r = await s.api('POST', `/agents/${a.id}/archive`);
    expect(r.status).toBe(200);
    expect(r.body.agent.archived).toBe(true);
    expect((await s.api('POST', `/agents/${a.id}/archive`)).body.agent.archived).toBe(true);
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { metadata: { x: 1 } } }), 409, 'conflict');
    expectError(await s.api('PUT', `/agents/${a.id}/prompt`, { body: { prompt: 'x' } }), 409, 'conflict');
    expectError(await s.api('PUT', `/agents/${a.id}/secrets/K`, { body: { value: 'x' } }), 409, 'conflict');
    expect((await s.api('GET', `/agents/${a.id}`)).status).toBe(200);
  });

  it('delete (admin) removes an agent without sessions; with sessions it is 409 agent_has_sessions', async () => {
    const a = await create();
    expect((await s.api('DELETE', `/agents/${a.id}`)).body).toEqual({ ok: true });
    expectError(await s.api('GET', `/agents/${a.id}`), 404, 'not_found');
    const b = await create();
    const { prisma } = await import('../src/db/client.js');
    await prisma.session.create({ data: { id: 'sess_fortest', universeId: (await prisma.agent.findUniqueOrThrow({ where: { id: b.id } })).universeId, agentId: b.id, agentType: 'hermes', llm: b.llm, status: 'idle' } });
    expectError(await s.api('DELETE', `/agents/${b.id}`), 409, 'agent_has_sessions');
    expect((await s.api('GET', `/agents/${b.id}`)).body.agent.sessionCount).toBe(1);
  });
});

describe('scopes', () => {
  it('read can read; write can create and patch; only admin archives and deletes', async () => {
    const read = await s.mintToken('read');
    const write = await s.mintToken('write');
    const a = await create();
    expect((await s.api('GET', '/agents', { token: read })).status).toBe(200);
    expect((await s.api('GET', `/agents/${a.id}`, { token: read })).status).toBe(200);
    expect((await s.api('GET', `/agents/${a.id}/secrets`, { token: read })).status).toBe(200);
    expect((await s.api('GET', `/agents/${a.id}/prompt/versions`, { token: read })).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/agents', {}], ['PATCH', `/agents/${a.id}`, {}], ['PUT', `/agents/${a.id}/prompt`, { prompt: 'x' }],
      ['PUT', `/agents/${a.id}/secrets/K`, { value: 'v' }], ['DELETE', `/agents/${a.id}/secrets/K`, undefined],
    ] as const) {
      expectError(await s.api(method, path, { token: read, body }), 403, 'insufficient_scope');
    }
    expect((await s.api('POST', '/agents', { token: write, body: {} })).status).toBe(201);
    expect((await s.api('PATCH', `/agents/${a.id}`, { token: write, body: {} })).status).toBe(200);
    expect((await s.api('PUT', `/agents/${a.id}/prompt`, { token: write, body: { prompt: 'w' } })).status).toBe(200);
    expectError(await s.api('POST', `/agents/${a.id}/archive`, { token: write }), 403, 'insufficient_scope');
    expectError(await s.api('DELETE', `/agents/${a.id}`, { token: write }), 403, 'insufficient_scope');
    expectError(await s.api('POST', `/agents/${a.id}/archive`, { token: read }), 403, 'insufficient_scope');
  });
});

describe('universe isolation', () => {
  it('an agent of one universe is 404 from another, both by scoped token and by X-Universe', async () => {
    await s.api('POST', '/universes', { body: { slug: 'iso-b' } });
    const mine = await create({ displayName: 'Personal One' });
    const scopedB = await s.mintToken('admin', { universe: 'iso-b' });
    const theirs = (await s.api('POST', '/agents', { token: scopedB, body: { displayName: 'B One' } })).body.agent;
    expect(theirs.universe).toBe('iso-b');
    expectError(await s.api('GET', `/agents/${mine.id}`, { token: scopedB }), 404, 'not_found');
    expectError(await s.api('PATCH', `/agents/${mine.id}`, { token: scopedB, body: {} }), 404, 'not_found');
    expectError(await s.api('DELETE', `/agents/${mine.id}`, { token: scopedB }), 404, 'not_found');
    expectError(await s.api('GET', `/agents/${theirs.id}`), 404, 'not_found');
    expect((await s.api('GET', `/agents/${theirs.id}`, { headers: { 'x-universe': 'iso-b' } })).status).toBe(200);
    const listB = await s.api('GET', '/agents', { token: scopedB });
    expect(listB.body.agents.map((a: any) => a.id)).toEqual([theirs.id]);
  });
});

describe('GraphQL', () => {
  it('creates, pages and reads agents', async () => {
    const created = await s.gql<any>(`mutation { createAgent(input: {displayName: "Graph One"}) { id slug agentType version } }`);
    expect(created.body.data.createAgent).toMatchObject({ slug: 'graph-one', agentType: 'hermes', version: 1 });
    const page = await s.gql<any>(`{ agents(first: 2) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`);
    expect(page.body.data.agents.edges).toHaveLength(2);
    expect(page.body.data.agents.pageInfo.hasNextPage).toBe(true);
    const next = await s.gql<any>(`query($after: String) { agents(first: 2, after: $after) { edges { node { id } } } }`, { after: page.body.data.agents.pageInfo.endCursor });
    expect(next.body.data.agents.edges[0].node.id).not.toBe(page.body.data.agents.edges[0].node.id);
    const bad = await s.gql<any>(`mutation { createAgent(input: {llm: "nope"}) { id } }`);
    expect(bad.body.errors![0].extensions.code).toBe('invalid_spec');
  });
});
