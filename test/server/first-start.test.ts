// The first ten minutes, as a stranger meets them: `npm start` as a child process with an empty
// DATA_DIR and none of the optional variables; everything after uses only what it printed
// (the sign-in line's password), signs in through the browser's sign-in endpoint, mints a token
// the way the dashboard does, and calls the REST API with it.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

// Variables a newcomer's shell does not have: the suite's own (vitest.config.ts sets some) and
// every optional one the service reads.
const OPTIONAL =
  /^(VITEST|TEST_|ADMIN_|DATABASE_URL|REDIS_URL|OUTBOUND_ALLOW|SHUTDOWN_DRAIN_MS|LOG_|ANTHROPIC_|OPENAI_|SECRET_KEY|PUBLIC_URL|SANDBOX_|NODE_ENV)/;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** `npm start` as a newcomer runs it: none of the optional variables, plus `vars`. */
function npmStart(vars: Record<string, string>, opts: { detached?: boolean } = {}) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !OPTIONAL.test(k)));
  const started = spawn('npm', ['start'], { cwd: ROOT, env: { ...env, ...vars }, stdio: ['ignore', 'pipe', 'pipe'], detached: opts.detached });
  let said = '';
  started.stdout!.on('data', (d: Buffer) => (said += d.toString()));
  started.stderr!.on('data', (d: Buffer) => (said += d.toString()));
  const exit = new Promise<number | null>((resolve) => started.once('exit', resolve));
  return {
    child: started,
    output: () => said,
    exit,
    /** Resolves once the banner's sign-in line is out; rejects when the process exits first or after 90 s. */
    signedIn: () =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`npm start printed no sign-in line in 90 s:\n${said}`)), 90_000);
        const check = () => {
          if (!/Sign in .*\n/.test(said)) return;
          clearTimeout(timer);
          resolve();
        };
        started.stdout!.on('data', check);
        started.stderr!.on('data', check);
        void exit.then((code) => {
          clearTimeout(timer);
          reject(new Error(`npm start exited (${code}):\n${said}`));
        });
        check();
      }),
  };
}

let child: ChildProcess;
let output = '';
let url = '';
let dataDir = '';

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-service-first-start-'));
  // PORT only so that parallel test files do not fight over 8080; DATA_DIR so the clone stays clean.
  // detached: its own process group, as a terminal would give it.
  const started = npmStart({ DATA_DIR: dataDir, PORT: String(await freePort()) }, { detached: true });
  child = started.child;
  await started.signedIn();
  output = started.output();
  url = /Dashboard\s+(http:\/\/\S+?)\/?\s/.exec(output)?.[1] ?? '';
}, 120_000);

afterAll(async () => {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  process.kill(-child.pid!, 'SIGTERM');
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
});

describe('npm start on an empty DATA_DIR with no optional variables', () => {
  it('prints the banner: dashboard URL, API URLs, the owner with a generated password, sandbox, models, data, outbound', () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(output).toContain(`REST ${url}/v1`);
    expect(output).toMatch(/Sign in +admin@localhost {2}password: \S+ {2}\(generated now and shown once/);
    expect(output).toMatch(/Sandbox +\S/);
    expect(output).toContain('no ANTHROPIC_API_KEY or OPENAI_API_KEY');
    expect(output).toContain('demo model demo-echo');
    expect(output).toMatch(/Data +PGlite in /);
    expect(output).toContain('OUTBOUND_ALLOW=127.0.0.0/8,::1');
  });

  it('the printed password signs in, mints a token, and the token calls the REST API', async () => {
    const [, email, password] = /Sign in +(\S+) {2}password: (\S+)/.exec(output)!;
    const login = await fetch(`${url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    expect(login.status).toBe(200);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;

    const minted = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, origin: url },
      body: JSON.stringify({ query: 'mutation { createApiToken(input: {name: "first", scope: write}) { token } }' }),
    });
    const body = (await minted.json()) as { data?: { createApiToken: { token: string } }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    const token = body.data!.createApiToken.token;
    expect(token).toMatch(/^ast_/);

    const whoami = await fetch(`${url}/v1/whoami`, { headers: { authorization: `Bearer ${token}` } });
    expect(whoami.status).toBe(200);
    // The minted token is the printed owner's, write-scoped, in the personal universe.
    expect(await whoami.json()).toMatchObject({ user: { email }, universe: { isPersonal: true }, scopes: ['read', 'write'], auth: 'token' });
    const agents = await fetch(`${url}/v1/agents`, { headers: { authorization: `Bearer ${token}` } });
    expect(agents.status).toBe(200);
    expect(await agents.json()).toMatchObject({ agents: [] }); // an empty DATA_DIR: nothing made yet
  });

  it('a wrong password is refused (the printed one is not a placeholder)', async () => {
    const res = await fetch(`${url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'admin@localhost', password: 'not-the-printed-one' }),
    });
    expect(res.status).toBe(401);
  });
});

describe('a second npm start on the same DATA_DIR', () => {
  it('exits 1 with one plain line naming the running one, and the first keeps serving', async () => {
    const second = npmStart({ DATA_DIR: dataDir, PORT: String(await freePort()) });
    const code = await second.exit;
    const said = second.output();
    expect(code, said).toBe(1);
    expect(said).toMatch(/the data directory \S+ is in use by another running agent service \(pid \d+\)/);
    expect(said).toContain('another DATA_DIR');
    expect(said).not.toMatch(/^\s+at /m);
    expect((await fetch(`${url}/v1/openapi.json`)).status).toBe(200);
  }, 90_000);
});

describe('npm start where the port is taken', () => {
  it('exits 1 with one plain line naming PORT, creates nothing; the next start on a free port shows the generated password', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-service-port-taken-'));
    const taken = net.createServer();
    const port = await new Promise<number>((resolve) => taken.listen(0, '127.0.0.1', () => resolve((taken.address() as net.AddressInfo).port)));
    try {
      const failed = npmStart({ DATA_DIR: dataDir, PORT: String(port) });
      const code = await failed.exit;
      const said = failed.output();
      expect(code, said).toBe(1);
      expect(said).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect(said).toContain('PORT=<a free port>');
      expect(said).not.toMatch(/^\s+at /m); // no stack trace
      expect(said).not.toContain('owner account created'); // nothing was made
    } finally {
      taken.close();
    }
    // The owner is made by the start that succeeds, and its banner shows the password.
    const next = npmStart({ DATA_DIR: dataDir, PORT: String(await freePort()) }, { detached: true });
    try {
      await next.signedIn();
      expect(next.output()).toMatch(/Sign in +admin@localhost {2}password: \S+ {2}\(generated now and shown once/);
    } finally {
      process.kill(-next.child.pid!, 'SIGTERM');
      await next.exit;
    }
  }, 150_000);
});
