// Browser sign-in without a browser: the sign-in page and its form redirects, the CSRF origin
// guard, sign-in rate limiting, device approval through the sign-in page, owner recovery with
// ADMIN_PASSWORD, the start-up banner, and error wording.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { expectError } from '../helpers/agents.js';
import { bootstrapOwner } from '../../src/auth/bootstrap.js';
import { startupBanner } from '../../src/banner.js';
import { LOGIN_FAILURES_PER_EMAIL } from '../../src/ratelimit/login-limiter.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

async function postForm(path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(`${s.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: form(fields),
  });
}

describe('the sign-in page', () => {
  it('GET /auth/login is an HTML form that posts to /auth/login with the next path', async () => {
    const res = await fetch(`${s.url}/auth/login?next=%2Fgraphql`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const html = await res.text();
    expect(html).toContain('<form method="post" action="/auth/login">');
    expect(html).toContain('name="next" value="/graphql"');
    expect(html).toMatch(/<label for="email">Email<\/label><input id="email"/);
  });

  it('a form sign-in sets an HTTP-only SameSite cookie and redirects to next; a wrong password comes back to the form', async () => {
    const ok = await postForm('/auth/login', { email: s.adminEmail, password: s.adminPassword, next: '/#/tokens' });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('/#/tokens');
    const cookie = ok.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^as_session=[^;]+;/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');

    const bad = await postForm('/auth/login', { email: 'someone-else@example.test', password: 'nope', next: '/' });
    expect(bad.status).toBe(303);
    expect(bad.headers.get('location')).toBe('/auth/login?next=%2F&error=invalid_credentials&email=someone-else%40example.test');
    const page = await (await fetch(`${s.url}${bad.headers.get('location')}`)).text();
    expect(page).toContain('Wrong email or password.');
    // The email is kept (only the password is typed again), escaped into the field.
    expect(page).toContain('value="someone-else@example.test"');
    const hostile = await fetch(`${s.url}/auth/login?next=%2F&error=invalid_credentials&email=${encodeURIComponent('"><script>x</script>')}`);
    expect(await hostile.text()).not.toContain('"><script>x');
  });

  it('only same-site paths are followed after sign-in', async () => {
    for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
      const res = await postForm('/auth/login', { email: s.adminEmail, password: s.adminPassword, next });
      expect(res.status, next).toBe(303);
      expect(res.headers.get('location'), next).toBe('/');
    }
  });

  it('a signed-in browser asking for the sign-in page goes on to next', async () => {
    const cookie = await s.login();
    const res = await fetch(`${s.url}/auth/login?next=%2F%23%2Fwallet`, { headers: { cookie }, redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/#/wallet');
  });

  it('the dashboard and GraphiQL are HTML pages; the dashboard sends a visitor without a session to sign in', async () => {
    const anon = await fetch(`${s.url}/`, { redirect: 'manual' });
    expect(anon.status).toBe(303);
    expect(anon.headers.get('location')).toBe('/auth/login?next=%2F');
    const cookie = await s.login();
    const dash = await fetch(`${s.url}/`, { headers: { cookie } });
    expect(dash.status).toBe(200);
    const html = await dash.text();
    expect(html).toContain('<script type="module" src="/assets/app/main.js">');
    expect(JSON.parse(/<script type="application\/json" id="boot">(.*?)<\/script>/.exec(html)![1]!).capabilities).toContain('exa.search');
    expect(dash.headers.get('content-security-policy')).toContain("script-src 'self'");
    const giql = await fetch(`${s.url}/graphql`, { headers: { accept: 'text/html', cookie } });
    const page = await giql.text();
    expect(page).toContain('/assets/graphiql/main.js');
    expect(page).not.toContain('__TITLE__');
    expect(page).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/); // nothing from a CDN
    // A JSON client on the same path still gets GraphQL.
    const gq = await fetch(`${s.url}/graphql?query=${encodeURIComponent('{ __typename }')}`, { headers: { accept: 'application/json' } });
    expect(await gq.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('sign-out from a form ends the session and returns to the sign-in page', async () => {
    const cookie = await s.login();
    const res = await postForm('/auth/logout', {}, { cookie, origin: s.url });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/auth/login?signed_out=1');
    expect(res.headers.get('set-cookie')).toMatch(/^as_session=;/);
    expectError(await s.api('GET', '/whoami', { token: null, cookie }), 401, 'invalid_token');
    expect(await (await fetch(`${s.url}/auth/login?signed_out=1`)).text()).toContain('You are signed out.');
  });
});

describe('CSRF: cookie-authenticated changes only from this origin', () => {
  const mint = JSON.stringify({ query: 'mutation { createApiToken(input: {name: "csrf", scope: admin}) { token } }' });

  it('refuses a cross-origin (or same-site, other-port) browser request carrying the cookie, on /graphql, /v1 and /auth', async () => {
    const cookie = await s.login();
    const evil = { cookie, origin: 'http://127.0.0.1:1', 'content-type': 'application/json' };
    for (const [path, body] of [
      ['/graphql', mint],
      ['/v1/agents', '{}'],
      ['/auth/logout', '{}'],
      ['/graphql/stream', mint],
    ] as const) {
      const res = await fetch(`${s.url}${path}`, { method: 'POST', headers: evil, body });
      expect(res.status, path).toBe(403);
      expect(await res.json(), path).toEqual({ error: { code: 'forbidden', message: expect.stringContaining('cross-origin request refused') } });
    }
    // Sec-Fetch-Site is what a browser sends; same-site (another port) is refused too.
    const sameSite = await fetch(`${s.url}/graphql`, {
      method: 'POST',
      headers: { cookie, 'sec-fetch-site': 'same-site', 'content-type': 'application/json' },
      body: mint,
    });
    expect(sameSite.status).toBe(403);
    // The cookie still works: nothing was signed out, nothing minted.
    const tokens = await s.gql('{ apiTokens(includeRevoked: true) { edges { node { name } } } }', {}, { token: null, cookie });
    expect(tokens.body.data.apiTokens.edges.map((e: any) => e.node.name)).not.toContain('csrf');
  });

  it('a cross-origin form cannot sign a browser in (login CSRF)', async () => {
    const res = await postForm(
      '/auth/login',
      { email: s.adminEmail, password: s.adminPassword },
      { origin: 'http://attacker.example', 'sec-fetch-site': 'cross-site' },
    );
    expect(res.status).toBe(403);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('lets same-origin pages, bearer tokens from anywhere, and non-browser clients through', async () => {
    const cookie = await s.login();
    const own = await fetch(`${s.url}/graphql`, {
      method: 'POST',
      headers: { cookie, origin: s.url, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json' },
      body: mint,
    });
    expect((await own.json()).data.createApiToken.token).toMatch(/^ast_/);
    const curl = await fetch(`${s.url}/graphql`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: mint });
    expect((await curl.json()).data.createApiToken.token).toMatch(/^ast_/);
    const bearer = await fetch(`${s.url}/v1/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.adminToken}`, origin: 'http://elsewhere.example', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(bearer.status).toBe(201);
  });
});

describe('sign-in rate limit', () => {
  it(`after ${LOGIN_FAILURES_PER_EMAIL} wrong passwords for one account from one address, even the right one waits (429, Retry-After)`, async () => {
    const email = 'guess-target@example.test';
    const codes: number[] = [];
    for (let i = 0; i < LOGIN_FAILURES_PER_EMAIL; i++) {
      codes.push((await s.api('POST', '/auth/login', { token: null, body: { email, password: `guess-${i}` } })).status);
    }
    expect(codes).toEqual([...Array(LOGIN_FAILURES_PER_EMAIL - 1).fill(401), 429]);
    const blocked = await s.api('POST', '/auth/login', { token: null, body: { email, password: 'anything' } });
    expectError(blocked, 429, 'rate_limited');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(60);
    // The form gets the same answer in words.
    const viaForm = await postForm('/auth/login', { email, password: 'x', next: '/' });
    const location = viaForm.headers.get('location')!;
    expect(location).toContain('error=rate_limited');
    expect(await (await fetch(`${s.url}${location}`)).text()).toMatch(/Too many failed sign-ins\. Try again in \d+ minutes?\./);
    // Another account is not affected.
    expect((await s.api('POST', '/auth/login', { token: null, body: { email: s.adminEmail, password: s.adminPassword } })).status).toBe(200);
  });
});

describe('device approval', () => {
  it('an approval link opened without a session goes through the sign-in page and back', async () => {
    const start = await s.api('POST', '/auth/device', { token: null, body: { scope: 'admin' } });
    const verify = new URL(start.body.verification_uri_complete);
    const anon = await fetch(`${s.url}${verify.pathname}${verify.search}`, { redirect: 'manual' });
    expect(anon.status).toBe(303);
    const next = new URL(anon.headers.get('location')!, s.url).searchParams.get('next')!;
    expect(next).toBe(`/auth/device/verify?user_code=${start.body.user_code}`);
    const signIn = await (await fetch(`${s.url}${anon.headers.get('location')}`)).text();
    expect(signIn).toContain('Sign in to approve the command-line login.');
    const login = await postForm('/auth/login', { email: s.adminEmail, password: s.adminPassword, next });
    expect(login.headers.get('location')).toBe(next);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const page = await (await fetch(`${s.url}${next}`, { headers: { cookie } })).text();
    expect(page).toContain(`Approve an <b>admin</b> token for the command line showing code <b>${start.body.user_code}</b>?`);
  });
});

describe('owner recovery and start-up', () => {
  it('ADMIN_PASSWORD on a later start replaces a different owner password and signs the owner out', async () => {
    const oldCookie = await s.login();
    await bootstrapOwner({ adminEmail: s.adminEmail, adminPassword: 'a brand new password', adminToken: s.adminToken });
    expect(startupBanner(s.url)).toContain('password: reset to ADMIN_PASSWORD just now');
    expectError(await s.api('GET', '/whoami', { token: null, cookie: oldCookie }), 401, 'invalid_token');
    expect((await s.api('POST', '/auth/login', { token: null, body: { email: s.adminEmail, password: s.adminPassword } })).status).toBe(401);
    const cookie = await s.login(s.adminEmail, 'a brand new password');
    // The same password again changes nothing (no sign-out).
    await bootstrapOwner({ adminEmail: s.adminEmail, adminPassword: 'a brand new password', adminToken: s.adminToken });
    expect((await s.api('GET', '/whoami', { token: null, cookie })).status).toBe(200);
    await bootstrapOwner({ adminEmail: s.adminEmail, adminPassword: s.adminPassword, adminToken: s.adminToken });
  });

  it('the banner names the URLs, the owner and the sandbox isolation (with the install command when missing)', () => {
    const banner = startupBanner(s.url);
    expect(banner).toContain(`Dashboard  ${s.url}/`);
    expect(banner).toMatch(new RegExp(`REST ${s.url.replace(/[.]/g, '\\.')}/v1`)); // test/helpers/child-server.ts reads this
    expect(banner).toContain(`Sign in    ${s.adminEmail}`);
    expect(banner).toMatch(
      /Sandbox {4}(isolated with bubblewrap \(bwrap\)|isolated with util-linux unshare; .*apt-get install bubblewrap|NOT ISOLATED: .* Install it: apt-get install bubblewrap)/,
    );
  });
});

describe('wording', () => {
  it('names the request part once: "body: unknown field model"', async () => {
    const res = await s.api('POST', '/agents', { body: { model: 'x' } });
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.message).toMatch(/^body: unknown field model/);
    const nested = await s.api('POST', '/agents', { body: { name: 5 } });
    expect(nested.body.error.message).toMatch(/^body\.name: /);
  });
});
