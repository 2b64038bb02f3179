// Vaults over real HTTP and GraphQL: CRUD and pagination, the limits at their boundaries,
// credential values write-only (no response, GraphQL answer or log line of this file carries
// one; sealed at rest), scopes, universe isolation, `vault_ids` on session create (404, storage,
// egress_header_conflict against other vaults, agent secrets and repository tokens), a PUT that
// would make a live session conflict refused with nothing stored, and the routine error for a
// vault that does not exist. The injection itself, from a real sandbox: vaults-egress.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createAgent, expectError, gqlCode } from '../helpers/agents.js';
import { logger } from '../../src/logger.js';
import { prisma } from '../../src/db/client.js';
import { sessionRules } from '../../src/egress/session-policy.js';
import { seal } from '../../src/crypto/secret-box.js';

const SECRET = 'ghp_VAULT-secret-value-0a1b2c3d';
const OTHER = 'sk-OTHER-vault-value-4e5f6a';
const values = [SECRET, OTHER];

let s: TestServer;
const seen: string[] = []; // every response body and log call of this file
const restoreLogger: (() => void)[] = [];
beforeAll(async () => {
  process.env.SCHEDULER_TICK_MS = '3600000';
  s = await startTestServer();
  const call = s.api.bind(s);
  s.api = async (...args: Parameters<TestServer['api']>) => {
    const res = await call(...args);
    seen.push(JSON.stringify(res.body), JSON.stringify([...res.headers]));
    return res;
  };
  for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const) {
    const original = logger[level];
    (logger as any)[level] = (...args: unknown[]) => {
      seen.push(JSON.stringify(args, (_k, v) => (v instanceof Error ? { message: v.message, stack: v.stack } : v)));
      return (original as any).apply(logger, args);
    };
    restoreLogger.push(() => ((logger as any)[level] = original));
  }
});
afterAll(async () => {
  restoreLogger.forEach((r) => r());
  await s?.stop();
});

async function vault(name = 'v'): Promise<any> {
  const res = await s.api('POST', '/vaults', { body: { name } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}
const put = (id: string, key: string, body: unknown, token?: string) =>
  s.api('PUT', `/vaults/${id}/credentials/${encodeURIComponent(key)}`, { body, ...(token ? { token } : {}) });
async function session(body: Record<string, unknown>) {
  return s.api('POST', '/sessions', { body });
}

describe('CRUD', () => {
  it('create, read, put credentials (key order; key, host, header, created_at only), replace, delete', async () => {
    const v = await vault('GitHub');
    expect(v).toEqual({ id: expect.stringMatching(/^vault_[0-9a-z]{26}$/), name: 'GitHub', credentials: [], created_at: expect.any(String) });
    const first = await put(v.id, 'GITHUB', { value: SECRET, host: 'api.github.com' });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.credentials).toEqual([{ key: 'GITHUB', host: 'api.github.com', header: 'Authorization', created_at: expect.any(String) }]);
    const second = await put(v.id, 'ACME.key-1', { value: OTHER, host: 'API.Acme.test:443', header: 'X-Api-Key', prefix: '' });
    expect(second.body.credentials.map((c: any) => [c.key, c.host, c.header])).toEqual([
      ['ACME.key-1', 'api.acme.test', 'X-Api-Key'],
      ['GITHUB', 'api.github.com', 'Authorization'],
    ]);
    for (const c of second.body.credentials) expect(Object.keys(c).sort()).toEqual(['created_at', 'header', 'host', 'key']);
    const got = await s.api('GET', `/vaults/${v.id}`);
    expect(got.body).toEqual(second.body);

    // Defaults and the stored form: sealed at rest; the rule is header: prefix + value on the normalised host.
    const rows = await prisma.vaultCredential.findMany({ where: { vaultId: v.id }, orderBy: { key: 'asc' } });
    expect(rows.map((r) => [r.key, r.header, r.prefix])).toEqual([
      ['ACME.key-1', 'X-Api-Key', ''],
      ['GITHUB', 'Authorization', 'Bearer '],
    ]);
    for (const r of rows) for (const value of values) expect(JSON.stringify(r)).not.toContain(value);

    // Replacing keeps created_at and changes host/header/value.
    const created = first.body.credentials[0].created_at;
    const replaced = await put(v.id, 'GITHUB', { value: OTHER, host: 'github.example.test:8443', header: 'X-Token' });
    expect(replaced.body.credentials.find((c: any) => c.key === 'GITHUB')).toEqual({
      key: 'GITHUB',
      host: 'github.example.test:8443',
      header: 'X-Token',
      created_at: created,
    });

    const afterDelete = await s.api('DELETE', `/vaults/${v.id}/credentials/GITHUB`);
    expect(afterDelete.status).toBe(200);
    expect(afterDelete.body.credentials.map((c: any) => c.key)).toEqual(['ACME.key-1']);
    expectError(await s.api('DELETE', `/vaults/${v.id}/credentials/GITHUB`), 404, 'not_found');

    expect((await s.api('DELETE', `/vaults/${v.id}`)).body).toEqual({ ok: true });
    expectError(await s.api('GET', `/vaults/${v.id}`), 404, 'not_found');
    expectError(await s.api('DELETE', `/vaults/${v.id}`), 404, 'not_found');
    expect(await prisma.vaultCredential.count({ where: { vaultId: v.id } })).toBe(0);
  });

  it('lists newest first, paginated with limit and next_page', async () => {
    const made = [await vault('p1'), await vault('p2'), await vault('p3')];
    const page1 = await s.api('GET', '/vaults?limit=2');
    expect(page1.status).toBe(200);
    expect(page1.body.data.map((v: any) => v.id)).toEqual([made[2].id, made[1].id]);
    expect(page1.body.next_page).toEqual(expect.any(String));
    const page2 = await s.api('GET', `/vaults?limit=2&page=${encodeURIComponent(page1.body.next_page)}`);
    expect(page2.body.data[0].id).toBe(made[0].id);
    const all = await s.api('GET', '/vaults?limit=100');
    expect(all.body.next_page).toBeNull();
    expectError(await s.api('GET', '/vaults?page=garbage'), 400, 'invalid_request');
    expectError(await s.api('GET', '/vaults?limit=101'), 400, 'invalid_request');
  });

  it('GraphQL: the same operations, and no field that could carry a value', async () => {
    const created = await s.gql(`mutation { createVault(input: { name: "g" }) { id name } }`);
    const id = created.body.data.createVault.id;
    const put1 = await s.gql(
      `mutation($id: String!, $v: String!) { putVaultCredential(vaultId: $id, key: "K", input: { value: $v, host: "api.g.test" }) { id credentials { key host header createdAt } } }`,
      { id, v: SECRET },
    );
    expect(put1.body.errors).toBeUndefined();
    expect(put1.body.data.putVaultCredential.credentials).toEqual([{ key: 'K', host: 'api.g.test', header: 'Authorization', createdAt: expect.any(String) }]);
    const read = await s.gql(`query($id: String!) { vault(id: $id) { id name credentials { key } } vaults(first: 100) { edges { node { id } } } }`, { id });
    expect(read.body.data.vault).toEqual({ id, name: 'g', credentials: [{ key: 'K' }] });
    expect(read.body.data.vaults.edges.map((e: any) => e.node.id)).toContain(id);
    const fields = await s.gql(`{ __type(name: "VaultCredential") { fields { name } } }`);
    expect(fields.body.data.__type.fields.map((f: any) => f.name).sort()).toEqual(['createdAt', 'header', 'host', 'key']);
    const bad = await s.gql(`mutation($id: String!) { putVaultCredential(vaultId: $id, key: "K", input: { value: "x", host: "h", header: "Host" }) { id } }`, {
      id,
    });
    expect(gqlCode(bad)).toBe('invalid_request');
    const del = await s.gql(`mutation($id: String!) { deleteVaultCredential(vaultId: $id, key: "K") { credentials { key } } deleteVault(id: $id) }`, { id });
    expect(del.body.data).toEqual({ deleteVaultCredential: { credentials: [] }, deleteVault: true });
    seen.push(JSON.stringify(put1.body), JSON.stringify(read.body));
  });
});

describe('limits', () => {
  it('name 1 to 120; only name', async () => {
    expectError(await s.api('POST', '/vaults', { body: { name: '' } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/vaults', { body: { name: 'n'.repeat(121) } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/vaults', { body: { name: 'x', credentials: [] } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/vaults', { body: {} }), 400, 'invalid_request');
    expect((await s.api('POST', '/vaults', { body: { name: 'n'.repeat(120) } })).status).toBe(201);
  });

  it('value 1 to 10000 without line breaks; host a name or name:port; header a token, not a transport header; prefix without line breaks; key shape', async () => {
    const v = await vault();
    const ok = { value: 'v', host: 'api.example.com' };
    expect((await put(v.id, 'K', { ...ok, value: 'v'.repeat(10_000) })).status).toBe(200);
    const refused: unknown[] = [
      { ...ok, value: '' },
      { ...ok, value: 'v'.repeat(10_001) },
      { ...ok, value: 'a\r\nX-Evil: 1' },
      { ...ok, value: 'a\nb' },
      { host: ok.host },
      { ...ok, host: '' },
      { ...ok, host: 'https://api.example.com' },
      { ...ok, host: 'api.example.com/path' },
      { ...ok, host: 'api.example.com:0' },
      { ...ok, host: 'api.example.com:65536' },
      { ...ok, host: 'a b' },
      { ...ok, host: 'user@host' },
      { value: 'v' },
      { ...ok, header: 'Host' },
      { ...ok, header: 'content-length' },
      { ...ok, header: 'Connection' },
      { ...ok, header: 'Cookie' },
      { ...ok, header: 'Transfer-Encoding' },
      { ...ok, header: 'Proxy-Authorization' },
      { ...ok, header: 'Upgrade' },
      { ...ok, header: 'Bad Header' },
      { ...ok, header: 'X:Y' },
      { ...ok, header: '' },
      { ...ok, prefix: 'Bearer\r\n' },
      { ...ok, prefix: 'p'.repeat(201) },
      { ...ok, extra: 1 },
      { ...ok, value: 42 },
    ];
    for (const body of refused) expectError(await put(v.id, 'K', body), 400, 'invalid_request');
    for (const key of ['a b', 'k'.repeat(129), 'é', 'a/b']) expectError(await put(v.id, key, ok), 400, 'invalid_request');
    expect((await put(v.id, 'k'.repeat(128), { ...ok, host: '127.0.0.1:9000', header: 'X-Api-Key', prefix: 'p'.repeat(200) })).status).toBe(200);
    expect((await put(v.id, 'wild', { ...ok, host: '*.example.org' })).status).toBe(200);
    // Session create: vault_ids at most 10.
    const agent = await createAgent(s);
    expectError(await session({ agent: agent.id, vault_ids: Array(11).fill(v.id) }), 400, 'invalid_request');
  });

  it('a vault holds at most 100 credentials', async () => {
    const v = await vault();
    await prisma.vaultCredential.createMany({
      data: Array.from({ length: 100 }, (_, i) => ({ vaultId: v.id, key: `K${i}`, host: `h${i}.test`, valueSealed: 'x' })),
    });
    expectError(await put(v.id, 'ONE_MORE', { value: 'v', host: 'x.test' }), 400, 'invalid_request');
  });
});

describe('access', () => {
  it('read tokens read, write tokens write', async () => {
    const v = await vault();
    const read = await s.mintToken('read');
    expect((await s.api('GET', `/vaults/${v.id}`, { token: read })).status).toBe(200);
    expect((await s.api('GET', '/vaults', { token: read })).status).toBe(200);
    expectError(await s.api('POST', '/vaults', { body: { name: 'x' }, token: read }), 403, 'insufficient_scope');
    expectError(await put(v.id, 'K', { value: 'v', host: 'h.test' }, read), 403, 'insufficient_scope');
    expectError(await s.api('DELETE', `/vaults/${v.id}/credentials/K`, { token: read }), 403, 'insufficient_scope');
    expectError(await s.api('DELETE', `/vaults/${v.id}`, { token: read }), 403, 'insufficient_scope');
    const write = await s.mintToken('write');
    expect((await put(v.id, 'K', { value: 'v', host: 'h.test' }, write)).status).toBe(200);
  });

  it('another universe sees 404 for every vault operation and cannot list the vault on a session', async () => {
    const v = await vault('mine');
    await put(v.id, 'K', { value: SECRET, host: 'api.mine.test' });
    expect((await s.api('POST', '/universes', { body: { slug: 'vault-other' } })).status).toBe(201);
    const other = await s.mintToken('admin', { universe: 'vault-other' });
    expectError(await s.api('GET', `/vaults/${v.id}`, { token: other }), 404, 'not_found');
    expect((await s.api('GET', '/vaults?limit=100', { token: other })).body.data).toEqual([]);
    expectError(await put(v.id, 'K', { value: 'stolen', host: 'api.mine.test' }, other), 404, 'not_found');
    expectError(await s.api('DELETE', `/vaults/${v.id}/credentials/K`, { token: other }), 404, 'not_found');
    expectError(await s.api('DELETE', `/vaults/${v.id}`, { token: other }), 404, 'not_found');
    const g = await s.gql(`query($id: String!) { vault(id: $id) { id } }`, { id: v.id }, { token: other });
    expect(gqlCode(g)).toBe('not_found');
    const theirAgent = (await s.api('POST', '/agents', { body: {}, token: other })).body.agent;
    expectError(await s.api('POST', '/sessions', { body: { agent: theirAgent.id, vault_ids: [v.id] }, token: other }), 404, 'not_found');
    expect((await s.api('GET', `/vaults/${v.id}`)).body.credentials).toHaveLength(1);
  });
});

describe('sessions with vault_ids', () => {
  it('an unknown vault is 404 not_found; known ones are stored once each and join the egress rules', async () => {
    const agent = await createAgent(s);
    expectError(await session({ agent: agent.id, vault_ids: ['vault_01hzzzzzzzzzzzzzzzzzzzzzzz'] }), 404, 'not_found');
    const a = await vault('a');
    const b = await vault('b');
    await put(a.id, 'A', { value: SECRET, host: 'api.a.test' });
    await put(b.id, 'B', { value: OTHER, host: 'api.b.test', header: 'X-Key', prefix: 'key=' });
    expectError(await session({ agent: agent.id, vault_ids: [a.id, 'vault_nope'] }), 404, 'not_found');
    const created = await session({ agent: agent.id, vault_ids: [a.id, b.id, a.id] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const row = await prisma.session.findUniqueOrThrow({ where: { id: created.body.session.id } });
    expect(row.vaultIds).toEqual([a.id, b.id]);
    const rules = await sessionRules(row.id);
    expect(rules.map((r) => [r.host, r.header, r.value])).toEqual([
      ['api.a.test', 'Authorization', `Bearer ${SECRET}`],
      ['api.b.test', 'X-Key', `key=${OTHER}`],
    ]);
    // A deleted vault contributes nothing.
    await s.api('DELETE', `/vaults/${b.id}`);
    expect((await sessionRules(row.id)).map((r) => r.host)).toEqual(['api.a.test']);
  });

  it('egress_header_conflict at create: two vaults, a vault and an agent secret, a vault and a repository token', async () => {
    const agent = await createAgent(s);
    const a = await vault('a');
    const b = await vault('b');
    await put(a.id, 'ONE', { value: SECRET, host: 'api.same.test' });
    await put(b.id, 'TWO', { value: OTHER, host: 'API.same.test' });
    const both = await session({ agent: agent.id, vault_ids: [a.id, b.id] });
    expectError(both, 400, 'egress_header_conflict');
    expect(both.body.error.message).toMatch(/credential ONE.*credential TWO/);
    for (const value of values) expect(both.body.error.message).not.toContain(value);
    // The same value twice is one rule, not a conflict.
    await put(b.id, 'TWO', { value: SECRET, host: 'api.same.test' });
    expect((await session({ agent: agent.id, vault_ids: [a.id, b.id] })).status).toBe(201);

    const withSecret = await createAgent(s);
    await s.api('PUT', `/agents/${withSecret.id}/secrets/API`, { body: { value: OTHER, description: 'egress: api.same.test' } });
    const secretConflict = await session({ agent: withSecret.id, vault_ids: [a.id] });
    expectError(secretConflict, 400, 'egress_header_conflict');
    expect(secretConflict.body.error.message).toMatch(/secret API/);

    const gh = await vault('gh');
    await put(gh.id, 'GH', { value: SECRET, host: 'github.com' });
    const repoConflict = await session({
      agent: agent.id,
      vault_ids: [gh.id],
      resources: [{ type: 'github_repository', url: 'https://github.com/acme/project', authorization_token: 'ghp_repo_token' }],
    });
    expectError(repoConflict, 400, 'egress_header_conflict');
    expect(repoConflict.body.error.message).not.toContain('ghp_repo_token');
    expect(await prisma.session.count({ where: { agentId: withSecret.id } })).toBe(0);
  });

  it('egress_header_conflict at create without any vault: two agent secrets stored before their PUT refused conflicts', async () => {
    const agent = await createAgent(s);
    expect((await s.api('PUT', `/agents/${agent.id}/secrets/ONE`, { body: { value: SECRET, description: 'egress: api.old.test' } })).status).toBe(200);
    // As stored by an earlier version, which accepted the second PUT.
    await prisma.agentSecret.create({ data: { agentId: agent.id, key: 'TWO', description: 'egress: api.old.test', ciphertext: seal(OTHER) } });
    const refused = await session({ agent: agent.id });
    expectError(refused, 400, 'egress_header_conflict');
    expect(refused.body.error.message).toMatch(/secret ONE.*secret TWO/);
    for (const value of values) expect(refused.body.error.message).not.toContain(value);
    expect(await prisma.session.count({ where: { agentId: agent.id } })).toBe(0);
  });

  it("an agent secret PUT that would conflict with a live session's vault credential is refused", async () => {
    const agent = await createAgent(s);
    const v = await vault('live-secret');
    await put(v.id, 'V', { value: SECRET, host: 'api.secret-live.test' });
    const created = await session({ agent: agent.id, vault_ids: [v.id] });
    expect(created.status).toBe(201);
    const refused = await s.api('PUT', `/agents/${agent.id}/secrets/S`, { body: { value: OTHER, description: 'egress: api.secret-live.test' } });
    expectError(refused, 400, 'egress_header_conflict');
    expect((await s.api('GET', `/agents/${agent.id}/secrets`)).body.secrets).toEqual([]);
    await s.api('POST', `/sessions/${created.body.session.id}/archive`);
    expect((await s.api('PUT', `/agents/${agent.id}/secrets/S`, { body: { value: OTHER, description: 'egress: api.secret-live.test' } })).status).toBe(200);
  });

  it('a PUT that would make a live session conflict is refused and stores nothing; once the session is archived it is accepted', async () => {
    const agent = await createAgent(s);
    const a = await vault('a');
    const b = await vault('b');
    await put(a.id, 'A', { value: SECRET, host: 'api.live.test' });
    const created = await session({ agent: agent.id, vault_ids: [a.id, b.id] });
    expect(created.status).toBe(201);
    const refused = await put(b.id, 'B', { value: OTHER, host: 'api.live.test' });
    expectError(refused, 400, 'egress_header_conflict');
    expect(refused.body.error.message).not.toContain(OTHER);
    expect((await s.api('GET', `/vaults/${b.id}`)).body.credentials).toEqual([]);
    // Another header on the same host, or the same header elsewhere, is fine.
    expect((await put(b.id, 'B', { value: OTHER, host: 'api.live.test', header: 'X-Other' })).status).toBe(200);
    // Within one vault a conflict is refused whether or not a session uses it.
    const alone = await vault('alone');
    await put(alone.id, 'X', { value: SECRET, host: 'h.alone.test' });
    expectError(await put(alone.id, 'Y', { value: OTHER, host: 'h.alone.test' }), 400, 'egress_header_conflict');
    expect((await put(alone.id, 'X', { value: OTHER, host: 'h.alone.test' })).status).toBe(200); // replacing itself is no conflict

    await s.api('POST', `/sessions/${created.body.session.id}/archive`);
    expect((await put(b.id, 'B', { value: OTHER, host: 'api.live.test' })).status).toBe(200);
  });
});

describe('routines', () => {
  it('a missing vault fails the fire with vault_not_found_error and pauses the routine; an existing one reaches the session', async () => {
    const agent = await createAgent(s);
    const hello = [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }];
    const gone = await vault('gone');
    await s.api('DELETE', `/vaults/${gone.id}`);
    const r = (
      await s.api('POST', '/routines', { body: { name: 'r', target: { type: 'new_session', agent: agent.id, vault_ids: [gone.id] }, initial_events: hello } })
    ).body;
    const run = await s.api('POST', `/routines/${r.id}/run`);
    expect(run.body).toMatchObject({ session_id: null, error: { type: 'vault_not_found_error', message: expect.stringContaining(gone.id) } });
    expect((await s.api('GET', `/routines/${r.id}`)).body).toMatchObject({
      status: 'paused',
      paused_reason: { type: 'error', error: { type: 'vault_not_found_error' } },
    });

    const v = await vault('kept');
    const ok = (
      await s.api('POST', '/routines', { body: { name: 'r2', target: { type: 'new_session', agent: agent.id, vault_ids: [v.id] }, initial_events: hello } })
    ).body;
    const fired = await s.api('POST', `/routines/${ok.id}/run`);
    expect(fired.body.error).toBeNull();
    expect((await prisma.session.findUniqueOrThrow({ where: { id: fired.body.session_id } })).vaultIds).toEqual([v.id]);
  });
});

describe('write-only', () => {
  it('no response, GraphQL answer or log line of this file carried a credential value', () => {
    expect(seen.length).toBeGreaterThan(50);
    const all = seen.join('\n');
    for (const value of values) expect(all).not.toContain(value);
  });
});
