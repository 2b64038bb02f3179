// Who may do what to agents: the scope matrix (read / write / admin × every agents endpoint, over
// REST and GraphQL), missing or bad tokens, and universe isolation (scoped tokens and X-Universe).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createAgent, expectError, gqlCode } from '../helpers/agents.js';

let s: TestServer;
const tokens: Record<'read' | 'write' | 'admin', string> = { read: '', write: '', admin: '' };
beforeAll(async () => {
  s = await startTestServer();
  tokens.read = await s.mintToken('read');
  tokens.write = await s.mintToken('write');
  tokens.admin = await s.mintToken('admin');
});
afterAll(async () => {
  await s?.stop();
});

const RANK = { read: 0, write: 1, admin: 2 } as const;
type Scope = keyof typeof RANK;

interface Endpoint {
  name: string;
  scope: Scope;
  status: number;
  /** Builds the request against a fresh agent (fixtures made with the owner's admin token). */
  request: (agentId: string) => Promise<{ method: string; path: string; body?: unknown }>;
}

const ENDPOINTS: Endpoint[] = [
  { name: 'GET /agents', scope: 'read', status: 200, request: async () => ({ method: 'GET', path: '/agents' }) },
  { name: 'POST /agents', scope: 'write', status: 201, request: async () => ({ method: 'POST', path: '/agents', body: {} }) },
  { name: 'GET /agents/{id}', scope: 'read', status: 200, request: async (id) => ({ method: 'GET', path: `/agents/${id}` }) },
  {
    name: 'PATCH /agents/{id}',
    scope: 'write',
    status: 200,
    request: async (id) => ({ method: 'PATCH', path: `/agents/${id}`, body: { metadata: { k: 1 } } }),
  },
  { name: 'DELETE /agents/{id}', scope: 'admin', status: 200, request: async (id) => ({ method: 'DELETE', path: `/agents/${id}` }) },
  { name: 'POST /agents/{id}/archive', scope: 'admin', status: 200, request: async (id) => ({ method: 'POST', path: `/agents/${id}/archive` }) },
  {
    name: 'PUT /agents/{id}/prompt',
    scope: 'write',
    status: 200,
    request: async (id) => ({ method: 'PUT', path: `/agents/${id}/prompt`, body: { prompt: 'p' } }),
  },
  { name: 'GET /agents/{id}/prompt/versions', scope: 'read', status: 200, request: async (id) => ({ method: 'GET', path: `/agents/${id}/prompt/versions` }) },
  { name: 'GET /agents/{id}/secrets', scope: 'read', status: 200, request: async (id) => ({ method: 'GET', path: `/agents/${id}/secrets` }) },
  {
    name: 'PUT /agents/{id}/secrets/{key}',
    scope: 'write',
    status: 200,
    request: async (id) => ({ method: 'PUT', path: `/agents/${id}/secrets/K`, body: { value: 'v' } }),
  },
  {
    name: 'DELETE /agents/{id}/secrets/{key}',
    scope: 'write',
    status: 200,
    request: async (id) => {
      await s.api('PUT', `/agents/${id}/secrets/GONE`, { body: { value: 'v' } });
      return { method: 'DELETE', path: `/agents/${id}/secrets/GONE` };
    },
  },
];

describe('scope matrix', () => {
  const cases = (['read', 'write', 'admin'] as const).flatMap((token) => ENDPOINTS.map((e) => [token, e.name, e] as const));
  it.each(cases)('%s token: %s', async (token, _name, endpoint) => {
    const agent = await createAgent(s);
    const { method, path, body } = await endpoint.request(agent.id);
    const before = (await s.api('GET', `/agents/${agent.id}`)).body.agent;
    const res = await s.api(method, path, { token: tokens[token], body });
    if (RANK[token] >= RANK[endpoint.scope]) {
      expect(res.status, JSON.stringify(res.body)).toBe(endpoint.status);
    } else {
      expectError(res, 403, 'insufficient_scope');
      // Refused means nothing happened.
      const after = (await s.api('GET', `/agents/${agent.id}`)).body.agent;
      expect(after).toEqual(before);
    }
  });

  it('every endpoint of the spec table is in the matrix', () => {
    expect(ENDPOINTS.map((e) => e.name)).toHaveLength(11);
  });

  it('missing, unknown and malformed tokens are 401 invalid_token', async () => {
    const a = await createAgent(s);
    for (const token of [null, 'ast_not_a_real_token', 'nope']) {
      expectError(await s.api('GET', '/agents', { token }), 401, 'invalid_token');
      expectError(await s.api('GET', `/agents/${a.id}`, { token }), 401, 'invalid_token');
      expectError(await s.api('POST', '/agents', { token, body: {} }), 401, 'invalid_token');
    }
  });

  it('the same matrix holds over GraphQL', async () => {
    const a = await createAgent(s);
    const ops: [Scope, string][] = [
      ['read', `{ agents(first: 1) { edges { node { id } } } }`],
      ['read', `{ agent(id: "${a.id}") { id } }`],
      ['read', `{ agentPromptVersions(agentId: "${a.id}") { version } }`],
      ['read', `{ agentSecrets(agentId: "${a.id}") { key } }`],
      ['write', `mutation { createAgent { id } }`],
      ['write', `mutation { updateAgent(id: "${a.id}", input: {}) { id } }`],
      ['write', `mutation { setAgentPrompt(agentId: "${a.id}", input: {prompt: "x"}) { version } }`],
      ['write', `mutation { setAgentSecret(agentId: "${a.id}", key: "K", input: {value: "v"}) }`],
      ['admin', `mutation { archiveAgent(id: "${a.id}") { id } }`],
    ];
    for (const [needed, query] of ops) {
      for (const token of ['read', 'write'] as const) {
        const res = await s.gql(query, {}, { token: tokens[token] });
        if (RANK[token] >= RANK[needed]) expect(res.body.errors, `${token}: ${query}`).toBeUndefined();
        else expect(gqlCode(res), `${token}: ${query}`).toBe('insufficient_scope');
      }
    }
    expect(gqlCode(await s.gql(`mutation { deleteAgent(id: "${a.id}") }`, {}, { token: tokens.write }))).toBe('insufficient_scope');
    expect((await s.gql(`mutation { deleteAgent(id: "${a.id}") }`, {}, { token: tokens.admin })).body).toEqual({ data: { deleteAgent: true } });
  });
});

describe('universe isolation', () => {
  let scopedB: string;
  let mine: any;
  let theirs: any;
  beforeAll(async () => {
    expect((await s.api('POST', '/universes', { body: { slug: 'iso-b', name: 'B' } })).status).toBe(201);
    scopedB = await s.mintToken('admin', { universe: 'iso-b' });
    mine = await createAgent(s, { displayName: 'Personal One', prompt: 'mine' });
    theirs = await createAgent(s, { displayName: 'B One' }, scopedB);
  });

  const everyPath = (id: string) =>
    [
      ['GET', `/agents/${id}`, undefined],
      ['PATCH', `/agents/${id}`, { metadata: { x: 1 } }],
      ['PUT', `/agents/${id}/prompt`, { prompt: 'x' }],
      ['GET', `/agents/${id}/prompt/versions`, undefined],
      ['GET', `/agents/${id}/secrets`, undefined],
      ['PUT', `/agents/${id}/secrets/K`, { value: 'v' }],
      ['DELETE', `/agents/${id}/secrets/K`, undefined],
      ['POST', `/agents/${id}/archive`, undefined],
      ['DELETE', `/agents/${id}`, undefined],
    ] as const;

  it('agents carry their universe slug', async () => {
    const who = await s.api('GET', '/whoami');
    expect(mine.universe).toBe(who.body.universe.slug);
    expect(theirs.universe).toBe('iso-b');
  });

  it('a universe-scoped token sees only its universe: the personal agent is 404 on every path', async () => {
    for (const [method, path, body] of everyPath(mine.id)) expectError(await s.api(method, path, { token: scopedB, body }), 404, 'not_found');
    expect((await s.api('GET', '/agents', { token: scopedB })).body.agents.map((a: any) => a.id)).toEqual([theirs.id]);
    const g = await s.gql(`query($id: String!) { agent(id: $id) { id } }`, { id: mine.id }, { token: scopedB });
    expect(gqlCode(g)).toBe('not_found');
    expect((await s.api('GET', `/agents/${mine.id}`)).body.agent).toMatchObject({ version: 1, archived: false, prompt: 'mine' });
  });

  it("the personal universe does not see B's agents, by id or in the list", async () => {
    for (const [method, path, body] of everyPath(theirs.id)) expectError(await s.api(method, path, { body }), 404, 'not_found');
    expect((await s.api('GET', '/agents')).body.agents.map((a: any) => a.id)).not.toContain(theirs.id);
  });

  it('X-Universe switches a personal token into B, and only into B', async () => {
    const inB = { 'x-universe': 'iso-b' };
    expect((await s.api('GET', `/agents/${theirs.id}`, { headers: inB })).status).toBe(200);
    expectError(await s.api('GET', `/agents/${mine.id}`, { headers: inB }), 404, 'not_found');
    const listed = (await s.api('GET', '/agents', { headers: inB })).body.agents.map((a: any) => a.id);
    expect(listed).toContain(theirs.id);
    expect(listed).not.toContain(mine.id);
    const made = await s.api('POST', '/agents', { headers: inB, body: { displayName: 'Made In B' } });
    expect(made.body.agent.universe).toBe('iso-b');
    expect((await s.api('GET', `/agents/${made.body.agent.id}`, { token: scopedB })).status).toBe(200);
    expectError(await s.api('GET', `/agents/${made.body.agent.id}`), 404, 'not_found');
  });

  it('X-Universe conflicting with a scoped token is 403 universe_mismatch; an unknown universe is 404', async () => {
    const who = await s.api('GET', '/whoami');
    expectError(await s.api('GET', '/agents', { token: scopedB, headers: { 'x-universe': who.body.universe.slug } }), 403, 'universe_mismatch');
    expectError(await s.api('GET', '/agents', { headers: { 'x-universe': 'no-such-universe' } }), 404, 'not_found');
  });

  it('the scoped token works fully inside its universe', async () => {
    const id = theirs.id;
    expect((await s.api('PATCH', `/agents/${id}`, { token: scopedB, body: { metadata: { b: true } } })).status).toBe(200);
    expect((await s.api('PUT', `/agents/${id}/prompt`, { token: scopedB, body: { prompt: 'b' } })).body).toEqual({ version: 1, unchanged: false });
    expect((await s.api('PUT', `/agents/${id}/secrets/B`, { token: scopedB, body: { value: 'b' } })).status).toBe(200);
    expect((await s.api('POST', `/agents/${id}/archive`, { token: scopedB })).body.agent.archived).toBe(true);
    expect((await s.api('DELETE', `/agents/${id}`, { token: scopedB })).body).toEqual({ ok: true });
  });
});
