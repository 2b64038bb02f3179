// An environment's packages over HTTP with the local driver and bubblewrap: a session stays
// provisioning while they install (npm and a Debian package the host lacks), then idles, and
// the model's bash finds them (read-only at /opt/environment); sessions of the same version
// reuse the cached directory — two starting at once install once, a later one not at all
// (counted in the installer's log, not timed); a packages change installs the new version; bad
// packages give a session.error naming each (pip fails cleanly here: no package index) and the
// session idles, usable with what did install.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { history, sendText, waitFor, waitForEvents } from '../helpers/sessions.js';
import { bwrapAvailable } from '../../src/sandbox/local.js';
import { sandboxDriver } from '../../src/sandbox/current-driver.js';
import { config } from '../../src/config.js';

const INSTALL_MS = 180_000;
let s: TestServer;
let fake: FakeProvider;
let agentId: string;

beforeAll(async () => {
  fake = await startFakeProvider();
  s = await startTestServer({ anthropicApiKey: 'sk', anthropicBaseUrl: fake.anthropicBaseUrl });
  agentId = (await s.api('POST', '/agents', { body: {} })).body.agent.id;
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});
beforeEach(() => fake.reset());

const installsLog = () => path.join(config().dataDir, 'environments', 'installs.log');
const installsOf = (envId: string) =>
  (fs.existsSync(installsLog()) ? fs.readFileSync(installsLog(), 'utf8') : '').split('\n').filter((l) => l.includes(` ${envId} `));

async function environment(body: Record<string, unknown>) {
  const res = await s.api('POST', '/environments', { body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}
async function startSession(environmentId: string) {
  const res = await s.api('POST', '/sessions', { body: { agent: agentId, environment_id: environmentId } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.session.status).toBe('provisioning');
  return res.body.session.id as string;
}
const idle = (id: string) => waitFor(async () => (await s.api('GET', `/sessions/${id}`)).body.session.status === 'idle', INSTALL_MS, `${id} idle`);
async function sh(sessionId: string, command: string) {
  const box = await sandboxDriver().get(sessionId);
  return box!.exec(command, { timeoutMs: 30_000 });
}

it('needs bubblewrap (apt package bubblewrap) and apt-get with package lists (run apt-get update)', () => {
  expect(bwrapAvailable(), 'install the bubblewrap package').toBe(true);
  expect(spawnSync('apt-get', ['--version']).status, 'apt-get is missing (Debian host)').toBe(0);
});

describe('packages installed at provision, cached per environment version', () => {
  let env: { id: string };
  const sessions: string[] = [];
  // `sl` lives in /usr/games and is not part of a base system: found only through the environment.
  const hostHasSl = spawnSync('dpkg', ['-s', 'sl']).status === 0;

  beforeAll(async () => {
    env = await environment({ name: 'tools', packages: { npm: ['left-pad@1.3.0'], apt: ['sl'] } });
    // Two sessions starting at once: one install between them.
    sessions.push(await startSession(env.id), await startSession(env.id));
    await Promise.all(sessions.map(idle));
  }, INSTALL_MS + 30_000);

  it('the model uses them in a turn: node finds the npm package, PATH the Debian program; the directory is read-only', async () => {
    fake.enqueue(
      {
        kind: 'tool_call',
        name: 'bash',
        input: { command: `node -e "console.log(require('left-pad')('x', 5, '.'))"; command -v sl; touch /opt/environment/mine 2>&1 || echo read-only` },
      },
      { kind: 'text', text: 'done' },
    );
    await sendText(s, sessions[0]!, 'use the tools');
    const events = await waitForEvents(s, sessions[0]!, 'session.status_idle', 1, 60_000);
    const result = events.filter((e) => e.type === 'agent.tool_result')[0].part.result;
    expect(result.stdout).toContain('....x');
    expect(result.stdout).toContain('/opt/environment/apt/usr/games/sl');
    expect(result.stdout).toContain('read-only');
    expect(events.filter((e) => e.type === 'session.error')).toEqual([]);
  });

  it('two sessions provisioning at once installed once; a later session reuses the cache without installing', async () => {
    expect(installsOf(env.id)).toHaveLength(1);
    const later = await startSession(env.id);
    await idle(later);
    expect(installsOf(env.id)).toHaveLength(1);
    const r = await sh(later, `node -e "process.stdout.write(require('left-pad')('y', 3, '-'))"`);
    expect(r.stdout, r.stderr).toBe('--y');
  });

  it('a packages change is a new version: the next session installs it, and gets the new list', async () => {
    const patched = await s.api('PATCH', `/environments/${env.id}`, { body: { packages: { npm: ['left-pad@1.3.0', 'is-number@7.0.0'], apt: [] } } });
    expect(patched.status).toBe(200);
    const next = await startSession(env.id);
    await idle(next);
    expect(installsOf(env.id)).toHaveLength(2);
    const r = await sh(next, `node -e "process.stdout.write(String(require('is-number')(5)))"; command -v sl || echo no-sl`);
    expect(r.stdout).toContain('true');
    if (!hostHasSl) expect(r.stdout).toContain('no-sl');
    // The session made before the change keeps its version.
    expect((await sh(sessions[1]!, 'command -v sl')).stdout).toContain('/opt/environment/');
  });
});

describe('packages that do not install', () => {
  it(
    'a session.error names each failed package; the session idles and has the rest',
    async () => {
      const env = await environment({
        name: 'broken',
        packages: { npm: ['left-pad@1.3.0', 'no-such-package-zz9-env-test'], pip: ['no-such-package-zz9'], apt: ['no-such-package-zz9'] },
      });
      const id = await startSession(env.id);
      await idle(id);
      const errors = (await history(s, id)).filter((e) => e.type === 'session.error').map((e) => e.error);
      expect(errors).toHaveLength(3);
      for (const e of errors) expect(e).toMatchObject({ type: 'environment_install_failed', retry_status: 'exhausted' });
      const messages = errors.map((e) => e.message).join('\n');
      expect(messages).toContain('npm package no-such-package-zz9-env-test');
      expect(messages).toContain('pip package no-such-package-zz9');
      expect(messages).toContain('apt package no-such-package-zz9');
      expect(messages).not.toContain('left-pad');
      // Progress and errors as message parts (agent.status): installing, then done naming the
      // failures; each session.error followed by its `error` part.
      const events = await history(s, id);
      const statuses = events.filter((e) => e.type === 'agent.status' && e.part.type === 'status').map((e) => e.part);
      expect(statuses).toEqual([
        {
          type: 'status',
          index: 0,
          level: 'working',
          text: expect.stringMatching(
            /^installing the environment's packages \(apt: no-such-package-zz9; npm: left-pad@1\.3\.0 no-such-package-zz9-env-test; pip: no-such-package-zz9\)$/,
          ),
        },
        { type: 'status', index: 0, level: 'done', text: expect.stringContaining('except 3') },
      ]);
      for (const [i, e] of events.entries()) {
        if (e.type === 'session.error')
          expect(events[i + 1]).toMatchObject({
            type: 'agent.status',
            part: { type: 'error', code: 'environment_install_failed', message: e.error.message, retryable: false },
          });
      }
      const r = await sh(id, `node -e "process.stdout.write(require('left-pad')('z', 2, '+'))"`);
      expect(r.stdout, r.stderr).toBe('+z');
      // The failure is cached with the version: the next session is told again, without reinstalling.
      const again = await startSession(env.id);
      await idle(again);
      expect(installsOf(env.id)).toHaveLength(1);
      expect((await history(s, again)).filter((e) => e.type === 'session.error')).toHaveLength(3);
    },
    INSTALL_MS,
  );

  it('an environment without packages starts like a session without one (nothing installed)', async () => {
    const env = await environment({ name: 'empty' });
    const id = await startSession(env.id);
    await idle(id);
    expect(installsOf(env.id)).toHaveLength(0);
    expect((await sh(id, 'ls /opt/environment 2>&1 || echo none')).stdout).toContain('none');
  });
});
