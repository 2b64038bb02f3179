// The CLI (bin/agent-service.mjs) without a browser: help exits 0, an unknown command exits 2
// with the usage, logout never crashes, and an unreachable service is explained in plain words;
// against a started service, `login` mints a write token unless --scope asks otherwise (the
// approval made with a browser session's cookie) and `logout` revokes it at the service.
// (The device login approved in a real page is in test/web/web.test.ts.)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

const CLI = path.resolve(import.meta.dirname, '../../bin/agent-service.mjs');

/** Runs the CLI; `onOut` sees its stdout as it grows (to act on a prompt while it waits). */
function run(args: string[], env: Record<string, string> = {}, onOut?: (out: string) => void): Promise<{ code: number | null; out: string; err: string }> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-'));
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: home, AGENT_SERVICE_CONFIG: path.join(home, 'config.json'), ...env },
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (c) => {
      out += c;
      onOut?.(out);
    });
    p.stderr.on('data', (c) => (err += c));
    p.on('close', (code) => resolve({ code, out, err }));
  });
}

describe('agent-service CLI', () => {
  it('--help, -h, help and no command print the usage and exit 0', async () => {
    for (const args of [['--help'], ['-h'], ['help'], [], ['login', '--help']]) {
      const r = await run(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.out, args.join(' ')).toContain('usage: agent-service <command>');
      expect(r.out).toContain('ADMIN_PASSWORD');
    }
  });

  it('an unknown command names itself and exits 2', async () => {
    const r = await run(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^unknown command "frobnicate"\n\nusage:/);
  });

  it('logout with nothing saved exits 0; with the service unreachable it forgets the token and says it is still valid', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-'));
    const config = path.join(home, 'config.json');
    expect(await run(['logout'], { AGENT_SERVICE_CONFIG: config })).toMatchObject({ code: 0, out: 'Not logged in on this machine; nothing to do.\n' });
    fs.writeFileSync(config, JSON.stringify({ url: 'http://127.0.0.1:9', token: 'ast_saved' }));
    const r = await run(['logout'], { AGENT_SERVICE_CONFIG: config });
    expect(r.code).toBe(1);
    expect(r.err).toContain('cannot reach the service at http://127.0.0.1:9');
    expect(r.err).toContain('The token was forgotten on this machine but is still valid: revoke it at http://127.0.0.1:9/#/tokens');
    expect(JSON.parse(fs.readFileSync(config, 'utf8'))).toEqual({ url: 'http://127.0.0.1:9' });
  });

  it('login refuses a scope that does not exist', async () => {
    const r = await run(['login', '--url', 'http://127.0.0.1:65500', '--scope', 'root']);
    expect(r).toMatchObject({ code: 1, err: 'error: --scope must be one of read, write, admin (got "root")\n' });
  });

  it('whoami and login explain a service that cannot be reached', async () => {
    const who = await run(['whoami', '--url', 'http://127.0.0.1:65500'], { AGENT_SERVICE_TOKEN: 'ast_x' });
    expect(who.code).toBe(1);
    expect(who.err).toBe(
      'error: cannot reach the service at http://127.0.0.1:65500 (connection refused). Is it running? Start it with `npm start`, or pass --url.\n',
    );
    const login = await run(['login', '--url', 'http://127.0.0.1:65500']);
    expect(login.code).toBe(1);
    expect(login.err).toContain('cannot reach the service at http://127.0.0.1:65500 (connection refused)');
    const notLoggedIn = await run(['whoami']);
    expect(notLoggedIn).toMatchObject({ code: 1, err: 'error: not logged in: run `agent-service login` (or set AGENT_SERVICE_TOKEN)\n' });
    const badUrl = await run(['whoami', '--url', 'ftp://x'], { AGENT_SERVICE_TOKEN: 'ast_x' });
    expect(badUrl.err).toBe('error: "ftp://x" is not an http(s) URL\n');
  });
});

describe('agent-service CLI against a service', () => {
  let s: TestServer;
  let cookie: string;
  beforeAll(async () => {
    s = await startTestServer();
    cookie = await s.login();
  });
  afterAll(() => s?.stop());

  /** `login` with these flags, approved in the "browser" (a cookie session) once it shows the code. */
  async function login(config: string, flags: string[] = []) {
    let approving: Promise<unknown> | null = null;
    const r = await run(['login', '--url', s.url, ...flags], { AGENT_SERVICE_CONFIG: config }, (out) => {
      const code = /confirm the code ([A-Z]{4}-[A-Z]{4})/.exec(out)?.[1];
      if (code && !approving) approving = s.api('POST', '/auth/device/approve', { token: null, cookie, body: { user_code: code } });
    });
    expect(approving).not.toBeNull();
    expect((await approving!) as { status: number }).toMatchObject({ status: 200 });
    const saved = JSON.parse(fs.readFileSync(config, 'utf8'));
    return { r, token: saved.token as string };
  }

  it('login mints a write token by default; logout revokes it at the service', async () => {
    const config = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cli-')), 'config.json');
    const { r, token } = await login(config);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('Logged in (write token)');
    expect((await s.api('GET', '/whoami', { token })).body.scopes).toEqual(['read', 'write']);

    const out = await run(['logout'], { AGENT_SERVICE_CONFIG: config });
    expect(out.code, out.err).toBe(0);
    expect(out.out).toBe(`Logged out: the token is revoked at ${s.url} and forgotten on this machine.\n`);
    expect(JSON.parse(fs.readFileSync(config, 'utf8')).token).toBeUndefined();
    const after = await s.api('GET', '/whoami', { token });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('invalid_token');
  });

  it('login --scope admin and --scope read mint what they ask for', async () => {
    for (const scope of ['admin', 'read'] as const) {
      const config = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cli-')), 'config.json');
      const { r, token } = await login(config, ['--scope', scope]);
      expect(r.code, r.err).toBe(0);
      expect((await s.api('GET', '/whoami', { token })).body.scopes.at(-1)).toBe(scope);
    }
  });

  it('a device login that names no scope gets write', async () => {
    const start = await s.api('POST', '/auth/device', { token: null, body: {} });
    await s.api('POST', '/auth/device/approve', { token: null, cookie, body: { user_code: start.body.user_code } });
    const got = await s.api('POST', '/auth/device/token', { token: null, body: { device_code: start.body.device_code } });
    expect(got.body.scope).toBe('write');
  });

  it('/auth/revoke revokes only the token presented, and says so; an unknown token is not an error', async () => {
    const keep = await s.mintToken('read', { name: 'kept' });
    const drop = await s.mintToken('read', { name: 'dropped' });
    const first = await s.api('POST', '/auth/revoke', { token: null, body: { token: drop } });
    expect(first).toMatchObject({ status: 200, body: { ok: true, revoked: true } });
    expect((await s.api('POST', '/auth/revoke', { token: null, body: { token: drop } })).body).toEqual({ ok: true, revoked: false });
    expect((await s.api('POST', '/auth/revoke', { token: null, body: { token: 'ast_unknown' } })).body).toEqual({ ok: true, revoked: false });
    expect((await s.api('GET', '/whoami', { token: drop })).status).toBe(401);
    expect((await s.api('GET', '/whoami', { token: keep })).status).toBe(200);
    expect((await s.api('POST', '/auth/revoke', { token: null, body: {} })).status).toBe(400);
  });
});
