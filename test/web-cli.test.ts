// The CLI (bin/agent-service.mjs) without a browser: help exits 0, an unknown command exits 2
// with the usage, logout never crashes, and an unreachable service is explained in plain words.
// (The device login approved in a real page is in test/web.test.ts.)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const CLI = path.resolve(import.meta.dirname, '../bin/agent-service.mjs');

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-'));
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: home, AGENT_SERVICE_CONFIG: path.join(home, 'config.json'), ...env },
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (c) => (out += c));
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

  it('logout exits 0 whether or not a token was saved, and forgets it', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-'));
    const config = path.join(home, 'config.json');
    expect(await run(['logout'], { AGENT_SERVICE_CONFIG: config })).toMatchObject({ code: 0, out: 'Not logged in on this machine; nothing to do.\n' });
    fs.writeFileSync(config, JSON.stringify({ url: 'http://127.0.0.1:9', token: 'ast_saved' }));
    const r = await run(['logout'], { AGENT_SERVICE_CONFIG: config });
    expect(r.code).toBe(0);
    expect(r.out).toContain('Logged out on this machine. The token itself stays valid until revoked: http://127.0.0.1:9/#/tokens');
    expect(JSON.parse(fs.readFileSync(config, 'utf8'))).toEqual({ url: 'http://127.0.0.1:9' });
  });

  it('whoami and login explain a service that cannot be reached', async () => {
    const who = await run(['whoami', '--url', 'http://127.0.0.1:65500'], { AGENT_SERVICE_TOKEN: 'ast_x' });
    expect(who.code).toBe(1);
    expect(who.err).toBe('error: cannot reach the service at http://127.0.0.1:65500 (connection refused). Is it running? Start it with `npm start`, or pass --url.\n');
    const login = await run(['login', '--url', 'http://127.0.0.1:65500']);
    expect(login.code).toBe(1);
    expect(login.err).toContain('cannot reach the service at http://127.0.0.1:65500 (connection refused)');
    const notLoggedIn = await run(['whoami']);
    expect(notLoggedIn).toMatchObject({ code: 1, err: 'error: not logged in: run `agent-service login` (or set AGENT_SERVICE_TOKEN)\n' });
    const badUrl = await run(['whoami', '--url', 'ftp://x'], { AGENT_SERVICE_TOKEN: 'ast_x' });
    expect(badUrl.err).toBe('error: "ftp://x" is not an http(s) URL\n');
  });
});
