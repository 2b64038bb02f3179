// Identity over real HTTP: whoami, universes, sign-in, token minting and revocation, scopes,
// universe isolation, X-Universe, errors in the envelope.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/sessions.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

const expectError = (res: { status: number; body: any }, status: number, code: string) => {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ error: { code, message: expect.any(String) } });
};

describe('whoami', () => {
  it('answers the owner, personal universe, scopes and auth kind for the ADMIN_TOKEN', async () => {
    const res = await s.api('GET', '/whoami');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      user: { id: expect.stringMatching(/^usr_/), email: s.adminEmail, name: null },
      universe: { slug: expect.any(String), name: 'Personal', isPersonal: true },
      scopes: ['read', 'write', 'admin'],
      auth: 'token',
    });
  });

  it('reports auth "session" for a signed-in browser cookie', async () => {
    const cookie = await s.login();
    const res = await s.api('GET', '/whoami', { token: null, cookie });
    expect(res.status).toBe(200);
    expect(res.body.auth).toBe('session');
  });

  it('refuses missing, malformed and unknown tokens with 401 invalid_token', async () => {
    expectError(await s.api('GET', '/whoami', { token: null }), 401, 'invalid_token');
    expectError(await s.api('GET', '/whoami', { token: 'ast_doesnotexist' }), 401, 'invalid_token');
    expectError(await s.api('GET', '/whoami', { token: 'nope' }), 401, 'invalid_token');
  });
});

describe('sign-in', () => {
  it('refuses a wrong password', async () => {
    const res = await s.api('POST', '/auth/login', { token: null, body: { email: s.adminEmail, password: 'wrong' } });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_credentials');
  });

  it('logout ends the cookie session', async () => {
    const cookie = await s.login();
    expect((await s.api('GET', '/whoami', { token: null, cookie })).status).toBe(200);
    await s.api('POST', '/auth/logout', { token: null, cookie });
    expectError(await s.api('GET', '/whoami', { token: null, cookie }), 401, 'invalid_token');
  });
});

describe('tokens', () => {
  it('mints read/write/admin tokens from a cookie session; the value starts with ast_ and is shown once', async () => {
    const cookie = await s.login();
    const res = await s.gql<any>(
      `mutation { createApiToken(input: {name: "ci", scope: write}) { token apiToken { id name scope universe createdAt expiresAt } } }`,
      {},
      { token: null, cookie },
    );
    expect(res.status).toBe(200);
    const created = res.body.data.createApiToken;
    expect(created.token).toMatch(/^ast_/);
    expect(created.apiToken).toMatchObject({ id: expect.stringMatching(/^tok_/), name: 'ci', scope: 'write', universe: null, expiresAt: null });
    const listed = await s.gql<any>(`{ apiTokens { edges { node { id name prefix } } } }`, {}, { token: null, cookie });
    expect(JSON.stringify(listed.body)).not.toContain(created.token);
    const who = await s.api('GET', '/whoami', { token: created.token });
    expect(who.body.scopes).toEqual(['read', 'write']);
  });

  it('a token that authenticates gets its lastUsedAt, written at most once a minute per token', async () => {
    const cookie = await s.login();
    const res = await s.gql<any>(
      `mutation { createApiToken(input: {name: "used", scope: read}) { token apiToken { id lastUsedAt } } }`,
      {},
      { token: null, cookie },
    );
    const { token, apiToken } = res.body.data.createApiToken;
    expect(apiToken.lastUsedAt).toBeNull();
    const lastUsed = async (): Promise<string | null> => {
      const list = await s.gql<any>(`{ apiTokens(first: 200) { edges { node { id lastUsedAt } } } }`, {}, { token: null, cookie });
      return list.body.data.apiTokens.edges.find((e: any) => e.node.id === apiToken.id).node.lastUsedAt;
    };
    expect((await s.api('GET', '/whoami', { token })).status).toBe(200);
    await waitFor(async () => (await lastUsed()) !== null, 10_000, 'lastUsedAt to be written');
    const first = (await lastUsed())!;
    // The write is throttled: later uses within the minute leave it as it is (no write per request).
    const { noteTokenUse } = await import('../../src/auth/token-usage.js');
    const t0 = Date.parse(first);
    noteTokenUse(apiToken.id, t0 + 30_000);
    expect((await s.api('GET', '/whoami', { token })).status).toBe(200);
    expect(await lastUsed()).toBe(first);
    // A minute later it is written again.
    noteTokenUse(apiToken.id, t0 + 61_000);
    await waitFor(async () => (await lastUsed()) === new Date(t0 + 61_000).toISOString(), 10_000, 'lastUsedAt to move on');
  });

  it('a bearer token cannot mint or revoke tokens (403 forbidden)', async () => {
    const res = await s.gql<any>(`mutation { createApiToken(input: {name: "x", scope: read}) { token } }`);
    expect(res.body.errors![0].extensions.code).toBe('forbidden');
  });

  it('a revoked token answers 401', async () => {
    const cookie = await s.login();
    const token = await s.mintToken('read', { cookie });
    const list = await s.gql<any>(`{ apiTokens(first: 100) { edges { node { id name } } } }`, {}, { token: null, cookie });
    const id = list.body.data.apiTokens.edges.find((e: any) => e.node.name === 'read token').node.id;
    expect((await s.api('GET', '/whoami', { token })).status).toBe(200);
    const revoked = await s.gql<any>(`mutation($id: String!) { revokeApiToken(id: $id) { revokedAt } }`, { id }, { token: null, cookie });
    expect(revoked.body.data.revokeApiToken.revokedAt).toBeTruthy();
    expectError(await s.api('GET', '/whoami', { token }), 401, 'invalid_token');
  });

  it('an expired token answers 401', async () => {
    const cookie = await s.login();
    const soon = new Date(Date.now() + 1500).toISOString();
    const res = await s.gql<any>(
      `mutation($at: DateTime) { createApiToken(input: {name: "short", scope: read, expiresAt: $at}) { token } }`,
      { at: soon },
      { token: null, cookie },
    );
    const token = res.body.data.createApiToken.token;
    expect((await s.api('GET', '/whoami', { token })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1700));
    expectError(await s.api('GET', '/whoami', { token }), 401, 'invalid_token');
  });
});

describe('universes', () => {
  it('creates a universe (201) with a personal write token and lists it', async () => {
    const res = await s.api('POST', '/universes', { body: { slug: 'team-a', name: 'Team A' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ universe: { slug: 'team-a', name: 'Team A', isPersonal: false, createdAt: expect.any(String) } });
    const list = await s.api('GET', '/universes');
    expect(list.body.universes.map((u: any) => u.slug)).toContain('team-a');
    const one = await s.api('GET', '/universes/team-a');
    expect(one.body.universe.slug).toBe('team-a');
  });

  it('validates slug (3-40, pattern) and name (max 80)', async () => {
    expectError(await s.api('POST', '/universes', { body: { slug: 'ab' } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/universes', { body: { slug: 'a'.repeat(41) } }), 400, 'invalid_request');
    expect((await s.api('POST', '/universes', { body: { slug: 'a'.repeat(40) } })).status).toBe(201);
    expectError(await s.api('POST', '/universes', { body: { slug: '-bad-' } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/universes', { body: { slug: 'Upper' } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/universes', { body: { slug: 'name-81', name: 'n'.repeat(81) } }), 400, 'invalid_request');
    expect((await s.api('POST', '/universes', { body: { slug: 'name-80', name: 'n'.repeat(80) } })).status).toBe(201);
    expectError(await s.api('POST', '/universes', { body: { slug: 'extra', nope: 1 } }), 400, 'invalid_request');
  });

  it('a read token cannot create (403 insufficient_scope); a universe-scoped token cannot create (403 forbidden)', async () => {
    const read = await s.mintToken('read');
    expectError(await s.api('POST', '/universes', { token: read, body: { slug: 'from-read' } }), 403, 'insufficient_scope');
    await s.api('POST', '/universes', { body: { slug: 'scoped-home' } });
    const scoped = await s.mintToken('write', { universe: 'scoped-home' });
    expectError(await s.api('POST', '/universes', { token: scoped, body: { slug: 'from-scoped' } }), 403, 'forbidden');
  });

  it('X-Universe switches the acting universe; a conflicting scoped token gets universe_mismatch; unknown slugs 404', async () => {
    await s.api('POST', '/universes', { body: { slug: 'switch-to' } });
    const who = await s.api('GET', '/whoami', { headers: { 'x-universe': 'switch-to' } });
    expect(who.body.universe).toEqual({ slug: 'switch-to', name: 'switch-to', isPersonal: false });
    const scoped = await s.mintToken('read', { universe: 'switch-to' });
    expect((await s.api('GET', '/whoami', { token: scoped })).body.universe.slug).toBe('switch-to');
    expectError(await s.api('GET', '/whoami', { token: scoped, headers: { 'x-universe': 'team-a' } }), 403, 'universe_mismatch');
    expectError(await s.api('GET', '/whoami', { headers: { 'x-universe': 'no-such-universe' } }), 404, 'not_found');
    expectError(await s.api('GET', '/universes/no-such-universe'), 404, 'not_found');
  });

  it("another user's universe is 404, never 403", async () => {
    const { createUser } = await import('../../src/auth/bootstrap.js');
    const other = await createUser('other@example.test', 'another password', false);
    const { prisma } = await import('../../src/db/client.js');
    const theirs = await prisma.universe.findFirstOrThrow({ where: { ownerId: other.id } });
    expectError(await s.api('GET', `/universes/${theirs.slug}`), 404, 'not_found');
    expectError(await s.api('GET', '/whoami', { headers: { 'x-universe': theirs.slug } }), 404, 'not_found');
  });
});

describe('errors in the envelope', () => {
  it('malformed JSON is 400 invalid_request', async () => {
    expectError(await s.api('POST', '/universes', { raw: '{"slug": ' }), 400, 'invalid_request');
  });
  it('an unknown route is 404 and a wrong method 405, in the envelope', async () => {
    expectError(await s.api('GET', '/no-such-thing'), 404, 'not_found');
    const res = await s.api('DELETE', '/whoami');
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toBe('GET');
  });
  it('a body over the size limit is 413', async () => {
    const res = await s.api('POST', '/universes', { raw: JSON.stringify({ slug: 'big', name: 'x'.repeat(2 * 1024 * 1024) }) });
    expectError(res, 413, 'payload_too_large');
  });
  it('GraphQL errors carry the same code in extensions', async () => {
    const res = await s.gql<any>(`{ universe(slug: "missing-one") { slug } }`);
    expect(res.body.errors![0].extensions.code).toBe('not_found');
  });
});

describe('device login', () => {
  it('code → approve in the browser → the CLI poll receives a token once', async () => {
    const start = await s.api('POST', '/auth/device', { token: null, body: { scope: 'read', name: 'laptop' } });
    expect(start.status).toBe(200);
    expect(start.body).toMatchObject({
      device_code: expect.any(String),
      user_code: expect.stringMatching(/^[A-Z]{4}-[A-Z]{4}$/),
      verification_uri: expect.stringContaining('/auth/device/verify'),
      interval: expect.any(Number),
    });
    const pending = await s.api('POST', '/auth/device/token', { token: null, body: { device_code: start.body.device_code } });
    expect(pending.status).toBe(400);
    expect(pending.body.error.code).toBe('authorization_pending');
    const cookie = await s.login();
    const page = await fetch(`${s.url}/auth/device/verify?user_code=${start.body.user_code}`, { headers: { cookie } });
    expect(await page.text()).toContain('Approve');
    const approve = await s.api('POST', '/auth/device/approve', { token: null, cookie, body: { user_code: start.body.user_code.toLowerCase() } });
    expect(approve.status).toBe(200);
    const got = await s.api('POST', '/auth/device/token', { token: null, body: { device_code: start.body.device_code } });
    expect(got.status).toBe(200);
    expect(got.body.token).toMatch(/^ast_/);
    expect((await s.api('GET', '/whoami', { token: got.body.token })).body.scopes).toEqual(['read']);
    const again = await s.api('POST', '/auth/device/token', { token: null, body: { device_code: start.body.device_code } });
    expect(again.body.error.code).toBe('invalid_grant');
  });

  it('approval needs a signed-in browser', async () => {
    const start = await s.api('POST', '/auth/device', { token: null, body: {} });
    const res = await s.api('POST', '/auth/device/approve', { body: { user_code: start.body.user_code } });
    expect(res.status).toBe(401);
  });
});

describe('health', () => {
  it('healthz and readyz', async () => {
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${s.url}/readyz`);
    expect(ready.status).toBe(200);
  });
});
