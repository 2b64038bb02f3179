// Stopping: `npm start` is one process that SIGTERM stops (exit 0, port free, no orphan), and a
// SIGTERM during a turn drains: the turn ends with its partial message made final and
// session.status_idle `end_turn`, the open SSE stream gets the last events and then a reconnect
// hint before it ends, the process exits 0 and frees its port, and a message queued during the
// turn runs after the restart. On PGlite and, when configured, on PostgreSQL + Redis.
import { spawn, execFileSync, type ChildProcess, spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startChildServer, api, type ChildServer } from '../helpers/child-server.js';
import {
  CONFIGS,
  deploymentEnv,
  dropSchemas,
  freePort,
  history,
  idleSession,
  portIsFree,
  readStreamUntilEnd,
  say,
  sseFrames,
  waitForHistory,
} from '../helpers/durability.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
let fake: FakeProvider;
const children: ChildProcess[] = [];

beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await fake?.close();
  await dropSchemas();
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
  });

/** `npm start` as a user runs it; resolves once the service printed its URL. `detached`: its own
 * process group, as a terminal gives it (Ctrl-C signals the whole group). */
async function npmStart(env: Record<string, string>, detached = false): Promise<{ npm: ChildProcess; url: string; output: () => string }> {
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    env: { ...process.env, VITEST: '', LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached,
  });
  children.push(npm);
  let out = '';
  const collect = (c: Buffer) => (out += c.toString());
  npm.stdout!.on('data', collect);
  npm.stderr!.on('data', collect);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not print its URL:\n${out}`)), 90_000);
    const onData = () => {
      const m = /REST (http:\/\/[^\s]+)\/v1/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    npm.stdout!.on('data', onData);
    npm.stderr!.on('data', onData);
    npm.once('exit', (code) => reject(new Error(`npm start exited (${code}):\n${out}`)));
  });
  return { npm, url, output: () => out };
}

/** The processes whose parent is `pid`. */
const childrenOf = (pid: number) =>
  // ps exits 1 when the process has no children: that is an empty list, not an error.
  (spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout ?? '')
    .split('\n')
    .map((x) => Number(x.trim()))
    .filter(Boolean);

describe('npm start is one process that SIGTERM stops', () => {
  it.each([
    ['the process npm start launched', 'service'],
    ['npm itself', 'npm'],
  ])(
    'SIGTERM to %s: exit 0, no process left, the port is free',
    async (_label, target) => {
      const port = await freePort();
      const { env, token } = deploymentEnv({ postgres: false, providerUrl: fake.anthropicBaseUrl });
      const { npm, url } = await npmStart({ ...env, PORT: String(port) });
      expect((await api(`${url}/v1`, token, 'GET', '/whoami')).status).toBe(200);
      // `npm start` → node (exec: no shell in between, no tsx wrapper process).
      const [service, ...others] = childrenOf(npm.pid!);
      expect(others).toEqual([]);
      expect(execFileSync('ps', ['-o', 'args=', '-p', String(service)], { encoding: 'utf8' })).toMatch(/^node .*--import tsx src\/main\.ts/);
      expect(childrenOf(service!).filter((pid) => !/esbuild/.test(execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' })))).toEqual([]);

      process.kill(target === 'npm' ? npm.pid! : service!, 'SIGTERM');
      expect(await exited(npm)).toBe(0);
      for (let i = 0; i < 40 && alive(service!); i++) await new Promise((r) => setTimeout(r, 50));
      expect(alive(service!)).toBe(false);
      expect(await portIsFree(port)).toBe(true);
    },
    120_000,
  );
});

describe("Ctrl-C: SIGINT to npm start's whole process group", () => {
  // The group signal reaches node twice ~1 ms apart (directly and forwarded by npm); the copy must
  // not count as a person's second Ctrl-C, which exits without draining.
  it("drains and exits 0 (npm's forwarded copy is not a second signal)", async () => {
    const port = await freePort();
    const { env, token } = deploymentEnv({ postgres: false, providerUrl: fake.anthropicBaseUrl });
    const { npm, url, output } = await npmStart({ ...env, PORT: String(port), LOG_LEVEL: 'info', LOG_FORMAT: 'json' }, true);
    expect((await api(`${url}/v1`, token, 'GET', '/whoami')).status).toBe(200);
    process.kill(-npm.pid!, 'SIGINT');
    expect(await exited(npm)).toBe(0);
    expect(output()).toContain('draining');
    expect(output()).not.toContain('second signal');
    expect(await portIsFree(port)).toBe(true);
  }, 120_000);
});

describe.each(CONFIGS)('SIGTERM during a turn drains ($name)', ({ postgres }) => {
  let first: ChildServer | undefined;
  let second: ChildServer | undefined;
  afterAll(async () => {
    await first?.kill('SIGKILL');
    await second?.kill('SIGKILL');
  });

  it('the turn ends idle with its final message, the stream gets them and a reconnect hint, exit 0, the port is free; the queued message runs after the restart', async () => {
    const port = await freePort();
    const { env, token } = deploymentEnv({ postgres, providerUrl: fake.anthropicBaseUrl, extra: { PORT: String(port), SHUTDOWN_DRAIN_MS: '300' } });
    first = await startChildServer(env);
    const { session } = await idleSession(first.base, token);

    fake.enqueue({ kind: 'hang', text: 'partial answer' });
    let resolveChunk!: () => void;
    const chunkSeen = new Promise<void>((r) => (resolveChunk = r));
    const stream = readStreamUntilEnd(`${first.base}/sessions/${session.id}/events/stream`, token, (text) => {
      if (text.includes('event: agent.message')) resolveChunk();
    });
    stream.catch(() => undefined); // awaited below; a failed test must not leave it unhandled
    await new Promise((r) => setTimeout(r, 300)); // the stream is subscribed
    expect((await say(first.base, token, session.id, 'long job')).status).toBe(202);
    await chunkSeen;
    expect((await say(first.base, token, session.id, 'queued during the turn')).status).toBe(202);

    const stoppedAt = Date.now();
    await first.kill('SIGTERM');
    expect(first.process.exitCode).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(15_000);
    expect(await portIsFree(port)).toBe(true);

    // The stream saw the end of the turn, then the shutdown comment, then its end.
    const raw = await stream;
    const frames = sseFrames(raw);
    const final = frames.find((f) => f.event === 'agent.message' && f.data.final);
    expect(final?.data.text).toBe('partial answer');
    const idle = frames.find((f) => f.event === 'session.status_idle');
    expect(idle?.data.stop_reason).toEqual({ type: 'end_turn' });
    expect(raw).toMatch(/: server shutting down; reconnect with Last-Event-ID\nretry: 1000\n\n$/);
    expect(frames.some((f) => f.event === 'session.error')).toBe(false);

    // Restart: nothing to recover (no runner_lost), the queued message runs at once.
    fake.enqueue({ kind: 'text', text: 'after the restart' });
    second = await startChildServer(env);
    const events = await waitForHistory(
      second.base,
      token,
      session.id,
      (ev) =>
        ev.some((e) => e.type === 'agent.message' && e.final && e.text === 'after the restart') &&
        ev.filter((e) => e.type === 'session.status_idle').length >= 2,
      30_000,
    );
    expect(events.filter((e) => e.type === 'user.message').map((e) => e.content[0].text)).toEqual(['long job', 'queued during the turn']);
    expect(events.filter((e) => e.type === 'agent.message' && e.final).map((e) => e.text)).toEqual(['partial answer', 'after the restart']);
    expect(events.some((e) => e.type === 'session.error')).toBe(false);
    const idles = events.filter((e) => e.type === 'session.status_idle').map((e) => e.stop_reason.type);
    expect(idles).toEqual(['end_turn', 'end_turn']);
    await second.kill('SIGTERM');
    expect(second.process.exitCode).toBe(0);
  }, 180_000);
});
