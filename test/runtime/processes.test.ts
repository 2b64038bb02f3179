// Several processes and crashes: two API processes on one PostgreSQL + Redis serve one stream
// (a turn run by one process reaches a stream on the other), and a process killed mid-turn
// leaves no session stuck in `running` (recovery on restart; queued inputs still run). Two worker
// processes split 20 sessions sent at once, each stream on the process that did not run its turn.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startChildServer, api, type ChildServer } from '../helpers/child-server.js';
import { collectSse, type SseFrame } from '../helpers/sessions.js';
import { streamedIds, watchStream } from '../helpers/streams.js';

const DB = process.env.TEST_DATABASE_URL;
const REDIS = process.env.TEST_REDIS_URL;

let fake: FakeProvider;
const children: ChildServer[] = [];
const schemas: string[] = [];
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await Promise.all(children.map((c) => c.kill('SIGKILL')));
  await fake?.close();
  if (DB && schemas.length) {
    const client = new pg.Client({ connectionString: DB });
    await client.connect();
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
});

function baseEnv(extra: Record<string, string> = {}) {
  return {
    ADMIN_EMAIL: 'owner@example.test',
    ADMIN_PASSWORD: 'a long enough password',
    SECRET_KEY: randomBytes(32).toString('hex'),
    ANTHROPIC_API_KEY: 'sk-ant-test',
    ANTHROPIC_BASE_URL: fake.anthropicBaseUrl,
    RATE_LIMIT_PER_MINUTE: '100000',
    ...extra,
  };
}

async function waitForHistory(base: string, token: string, sessionId: string, pred: (events: any[]) => boolean, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api(base, token, 'GET', `/sessions/${sessionId}/events?limit=1000`);
    if (pred(res.body.events)) return res.body.events as any[];
    if (Date.now() > deadline) throw new Error(`history never matched: ${JSON.stringify(res.body.events.map((e: any) => e.type))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!DB || !REDIS)('two processes on one PostgreSQL and Redis', () => {
  it('a turn run by the worker process reaches a stream on the API-only process', async () => {
    const schema = `proc_${randomBytes(5).toString('hex')}`;
    schemas.push(schema);
    const token = `ast_proc_${randomBytes(16).toString('hex')}`;
    const shared: Record<string, string> = baseEnv({
      DATABASE_URL: `${DB}?schema=${schema}`,
      REDIS_URL: REDIS!,
      ADMIN_TOKEN: token,
      QUEUE_PREFIX: schema,
      DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'proc-a-')),
    });
    const apiOnly = await startChildServer({ ...shared, TURN_WORKER: '0' });
    children.push(apiOnly);
    const workerDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'proc-b-'));
    const worker = await startChildServer({ ...shared, DATA_DIR: workerDataDir });
    children.push(worker);

    const agent = (await api(apiOnly.base, token, 'POST', '/agents', {})).body.agent;
    const session = (await api(worker.base, token, 'POST', '/sessions', { agent: agent.id })).body.session;
    await waitForHistory(worker.base, token, session.id, () => true);
    for (let i = 0; i < 100; i++) {
      if ((await api(worker.base, token, 'GET', `/sessions/${session.id}`)).body.session.status === 'idle') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: 'echo $$ > pid.txt; hostname' } }, { kind: 'text', text: 'ran elsewhere' });
    const frames: SseFrame[] = await collectSse(
      `${apiOnly.base}/sessions/${session.id}/events/stream`,
      token,
      (f) => f.some((x) => x.event === 'session.status_idle'),
      {
        timeoutMs: 20_000,
        onOpen: () =>
          void api(apiOnly.base, token, 'POST', `/sessions/${session.id}/events`, {
            events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }],
          }),
      },
    );
    expect(frames.map((f) => f.event)).toEqual(
      expect.arrayContaining(['session.status_running', 'agent.tool_use', 'agent.tool_result', 'agent.message', 'session.status_idle']),
    );
    expect(frames.find((f) => f.event === 'agent.message' && f.data.final)!.data.text).toBe('ran elsewhere');
    // The API-only process has no sandbox for the session: the worker ran the turn.
    expect(fs.existsSync(path.join(shared.DATA_DIR!, 'sandboxes', session.id, 'workspace', 'pid.txt'))).toBe(false);
    expect(fs.existsSync(path.join(workerDataDir, 'sandboxes', session.id, 'workspace', 'pid.txt'))).toBe(true);
  }, 60_000);
});

describe.skipIf(!DB || !REDIS)('two worker processes splitting many sessions (issue #29)', () => {
  it('turns sent to either process all end end_turn; each stream, on the other process, equals its history', async () => {
    const schema = `split_${randomBytes(5).toString('hex')}`;
    schemas.push(schema);
    const token = `ast_split_${randomBytes(16).toString('hex')}`;
    const shared: Record<string, string> = baseEnv({
      DATABASE_URL: `${DB}?schema=${schema}`,
      REDIS_URL: REDIS!,
      ADMIN_TOKEN: token,
      QUEUE_PREFIX: schema,
      STARTING_CREDITS_CENTS: '1000000',
    });
    const first = await startChildServer({ ...shared, DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'split-a-')) });
    children.push(first);
    const second = await startChildServer({ ...shared, DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'split-b-')) });
    children.push(second);
    const procs = [first, second];
    const N = 20;
    const agent = (await api(first.base, token, 'POST', '/agents', {})).body.agent;
    const sessions: string[] = [];
    for (let i = 0; i < N; i++) sessions.push((await api(procs[i % 2]!.base, token, 'POST', '/sessions', { agent: agent.id })).body.session.id);
    for (const id of sessions) await waitForHistory(first.base, token, id, () => true);
    for (const id of sessions)
      for (let i = 0; i < 200 && (await api(first.base, token, 'GET', `/sessions/${id}`)).body.session.status !== 'idle'; i++)
        await new Promise((r) => setTimeout(r, 50));
    // Session i is sent to process i % 2 and watched on the other one.
    const streams = await Promise.all(sessions.map((id, i) => watchStream(procs[(i + 1) % 2]!.base, token, id)));
    const idlesBefore = await Promise.all(
      sessions.map(
        async (id) =>
          (await api(first.base, token, 'GET', `/sessions/${id}/events?limit=1000`)).body.events.filter((e: any) => e.type === 'session.status_idle').length,
      ),
    );
    await Promise.all(streams.map((w, i) => w.idles(idlesBefore[i]!)));
    for (let i = 0; i < N; i++) fake.enqueue({ kind: 'text', text: `split answer ${i}`, chunks: 4, delayMs: 20 });
    const sent = await Promise.all(
      sessions.map((id, i) =>
        api(procs[i % 2]!.base, token, 'POST', `/sessions/${id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }] }),
      ),
    );
    expect(sent.map((r) => r.status)).toEqual(sessions.map(() => 202));
    await Promise.all(streams.map((w, i) => w.idles(idlesBefore[i]! + 1)));
    const answers = new Set<string>();
    for (let i = 0; i < N; i++) {
      const events = (await api(procs[i % 2]!.base, token, 'GET', `/sessions/${sessions[i]}/events?limit=1000`)).body.events;
      const w = streams[i]!;
      expect(w.frames.map((f) => f.id)).toEqual(streamedIds(events));
      expect(w.frames.at(-1)!.data.stop_reason).toEqual({ type: 'end_turn' });
      answers.add(events.find((e: any) => e.type === 'agent.message' && e.final).text);
      w.close();
    }
    expect(answers.size).toBe(N);
  }, 180_000);
});

describe('restart recovery', () => {
  it('a process killed mid-turn: on restart the session gets a session.error and goes idle; a queued message still runs', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'recovery-'));
    const schema = `rec_${randomBytes(5).toString('hex')}`;
    if (DB) schemas.push(schema);
    const token = `ast_rec_${randomBytes(16).toString('hex')}`;
    const env = baseEnv({
      DATA_DIR: dataDir,
      ADMIN_TOKEN: token,
      RUNNER_STALE_MS: '300',
      ...(DB ? { DATABASE_URL: `${DB}?schema=${schema}` } : {}),
      ...(REDIS ? { REDIS_URL: REDIS, QUEUE_PREFIX: schema } : {}),
    });
    const first = await startChildServer(env);
    children.push(first);
    const agent = (await api(first.base, token, 'POST', '/agents', {})).body.agent;
    const session = (await api(first.base, token, 'POST', '/sessions', { agent: agent.id })).body.session;
    for (let i = 0; i < 100; i++) {
      if ((await api(first.base, token, 'GET', `/sessions/${session.id}`)).body.session.status === 'idle') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    fake.enqueue({ kind: 'hang', text: 'working on it' });
    await api(first.base, token, 'POST', `/sessions/${session.id}/events`, {
      events: [{ type: 'user.message', content: [{ type: 'text', text: 'long job' }] }],
    });
    await waitForHistory(first.base, token, session.id, (ev) => ev.some((e) => e.type === 'agent.message'));
    const queued = await api(first.base, token, 'POST', `/sessions/${session.id}/events`, {
      events: [{ type: 'user.message', content: [{ type: 'text', text: 'queued while running' }] }],
    });
    expect(queued.status).toBe(202);
    await first.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 500));

    fake.enqueue({ kind: 'text', text: 'after the restart' });
    const second = await startChildServer(env);
    children.push(second);
    const events = await waitForHistory(second.base, token, session.id, (ev) => ev.filter((e) => e.type === 'session.status_idle').length >= 2, 30_000);
    const kinds = events.map((e) => e.type);
    const lost = events.find((e) => e.type === 'session.error');
    expect(lost.error).toMatchObject({ type: 'runner_lost', retry_status: 'exhausted' });
    expect(kinds.indexOf('session.error')).toBeLessThan(kinds.indexOf('session.status_idle'));
    expect(events.filter((e) => e.type === 'user.message').map((e) => e.content[0].text)).toEqual(['long job', 'queued while running']);
    // The lost turn's streamed words become its complete message; then the queued turn's answer.
    expect(events.filter((e) => e.type === 'agent.message' && e.final).map((e) => e.text)).toEqual(['working on it', 'after the restart']);
    const final = await api(second.base, token, 'GET', `/sessions/${session.id}`);
    expect(final.body.session.status).toBe('idle');
  }, 90_000);
});
