// With Redis, routine schedules run on BullMQ job schedulers: two processes on one PostgreSQL
// and Redis fire an occurrence exactly once. (Waits for a real minute boundary: ~1 minute.)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startChildServer, api, type ChildServer } from '../helpers/child-server.js';

const DB = process.env.TEST_DATABASE_URL;
const REDIS = process.env.TEST_REDIS_URL;
let fake: FakeProvider;
const children: ChildServer[] = [];
const schema = `rtn_${randomBytes(5).toString('hex')}`;

beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await Promise.all(children.map((c) => c.kill('SIGKILL')));
  await fake?.close();
  if (DB) {
    const client = new pg.Client({ connectionString: DB });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
});

describe.skipIf(!DB || !REDIS)('BullMQ job schedulers', () => {
  it('two processes fire a minute-granularity occurrence exactly once', async () => {
    const token = `ast_rtn_${randomBytes(16).toString('hex')}`;
    const env = {
      DATABASE_URL: `${DB}?schema=${schema}`,
      REDIS_URL: REDIS!,
      QUEUE_PREFIX: schema,
      ADMIN_TOKEN: token,
      ADMIN_PASSWORD: 'a long enough password',
      SECRET_KEY: randomBytes(32).toString('hex'),
      ANTHROPIC_API_KEY: 'sk',
      ANTHROPIC_BASE_URL: fake.anthropicBaseUrl,
      RATE_LIMIT_PER_MINUTE: '100000',
    };
    children.push(await startChildServer({ ...env, DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'rtn-a-')) }));
    children.push(await startChildServer({ ...env, DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'rtn-b-')) }));
    const [a, b] = children;
    const agent = (await api(a!.base, token, 'POST', '/agents', {})).body.agent;
    const routine = (
      await api(b!.base, token, 'POST', '/routines', {
        name: 'every minute',
        target: { type: 'new_session', agent: agent.id },
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'tick' }] }],
        schedule: { type: 'cron', expression: '* * * * *', timezone: 'Europe/Berlin' },
      })
    ).body;
    const firstAt = new Date(routine.schedule.upcoming_runs_at[0]).getTime();
    // Wait past the first occurrence and a little into the next minute.
    await new Promise((r) => setTimeout(r, Math.max(0, firstAt - Date.now()) + 8000));
    const runs = (await api(a!.base, token, 'GET', `/routines/${routine.id}/runs`)).body.data;
    const forFirst = runs.filter((r: any) => r.trigger_context.scheduled_at === new Date(firstAt).toISOString());
    expect(forFirst).toHaveLength(1);
    expect(forFirst[0]).toMatchObject({ trigger_context: { type: 'schedule' }, session_id: expect.stringMatching(/^sess_/), error: null });
    // Pausing removes the scheduler: no further fires.
    await api(a!.base, token, 'POST', `/routines/${routine.id}/pause`);
    const count = (await api(a!.base, token, 'GET', `/routines/${routine.id}/runs`)).body.data.length;
    const nextAt = new Date(firstAt + 60_000).getTime();
    if (nextAt - Date.now() < 55_000) {
      await new Promise((r) => setTimeout(r, Math.max(0, nextAt - Date.now()) + 5000));
      expect((await api(a!.base, token, 'GET', `/routines/${routine.id}/runs`)).body.data.length).toBe(count);
    }
  }, 150_000);
});
