// Routines that carry memory stores (issue #30), over HTTP: a fire's new session mounts the
// routine's stores (its resources list the mount) and its turn reads them; the stores are checked
// when the routine is saved as session create checks them (unknown / another universe's 404,
// archived 409, twice 400, 9 → 400); a store archived after the save fails the fire with
// run_rejected_error naming it and pauses the routine, as an archived environment does.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type ApiResponse } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { waitForEvents } from '../helpers/sessions.js';

let s: TestServer;
let fake: FakeProvider;
beforeAll(async () => {
  process.env.SCHEDULER_TICK_MS = '3600000'; // runs are fired by hand here
  process.env.ROUTINE_SCHEDULER = 'inprocess';
  fake = await startFakeProvider();
  s = await startTestServer({ anthropicApiKey: 'sk', anthropicBaseUrl: fake.anthropicBaseUrl });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});
beforeEach(() => fake.reset());

const expectError = (res: ApiResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
};
const hello = [{ type: 'user.message', content: [{ type: 'text', text: 'what do I prefer?' }] }];
async function newAgent() {
  return (await s.api('POST', '/agents', { body: {} })).body.agent;
}
async function store(name: string) {
  const res = await s.api('POST', '/memory-stores', { body: { name, description: `${name} notes` } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}
const lastRun = async (id: string) => (await s.api('GET', `/routines/${id}/runs`)).body.data[0];

describe('a routine with memory stores', () => {
  it('each fire’s session mounts them: the resources list the mounts, the turn reads the store', async () => {
    const agent = await newAgent();
    const prefs = await store('Routine prefs');
    const log = await store('routine-log');
    await s.api('POST', `/memory-stores/${prefs.id}/memories`, { body: { path: '/style.md', content: 'short answers' } });
    const created = await s.api('POST', '/routines', {
      body: {
        name: 'with memory',
        target: {
          type: 'new_session',
          agent: agent.id,
          memory_stores: [{ memory_store_id: prefs.id, access: 'read_only', instructions: 'Read before answering.' }, { memory_store_id: log.id }],
        },
        initial_events: hello,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // access and instructions are filled in when saved, so the routine always names them.
    expect(created.body.target.memory_stores).toEqual([
      { memory_store_id: prefs.id, access: 'read_only', instructions: 'Read before answering.' },
      { memory_store_id: log.id, access: 'read_write', instructions: null },
    ]);
    expect((await s.api('GET', `/routines/${created.body.id}`)).body.target).toEqual(created.body.target);
    // GraphQL reads the same target.
    const read = await s.gql(
      `query($id: String!) { routine(id: $id) { target { ... on NewSessionTarget { memoryStores { memoryStoreId access instructions } } } } }`,
      { id: created.body.id },
    );
    expect(read.body.data?.routine.target.memoryStores, JSON.stringify(read.body)).toEqual([
      { memoryStoreId: prefs.id, access: 'read_only', instructions: 'Read before answering.' },
      { memoryStoreId: log.id, access: 'read_write', instructions: null },
    ]);

    fake.enqueue({ kind: 'tool_call', name: 'read_file', input: { path: '/workspace/memory/routine-prefs/style.md' } }, { kind: 'text', text: 'short' });
    const run = await s.api('POST', `/routines/${created.body.id}/run`);
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body).toMatchObject({ error: null, session_id: expect.stringMatching(/^sess_/) });
    const session = (await s.api('GET', `/sessions/${run.body.session_id}`)).body.session;
    expect(session.resources).toEqual([
      expect.objectContaining({
        type: 'memory_store',
        memory_store_id: prefs.id,
        access: 'read_only',
        instructions: 'Read before answering.',
        mount_path: '/workspace/memory/routine-prefs',
      }),
      expect.objectContaining({
        type: 'memory_store',
        memory_store_id: log.id,
        access: 'read_write',
        instructions: null,
        mount_path: '/workspace/memory/routine-log',
      }),
    ]);
    const events = await waitForEvents(s, run.body.session_id, 'session.status_idle');
    expect(events.find((e) => e.type === 'agent.tool_result').part.result.content).toBe('short answers');
    expect(JSON.stringify(fake.requests[0]!.body.system)).toContain('Read before answering.');
  });

  it('saved only with stores session create would mount: unknown or another universe’s 404, archived 409, twice 400, 9 → 400', async () => {
    const agent = await newAgent();
    const target = (memory_stores: unknown[]) => ({ type: 'new_session', agent: agent.id, memory_stores });
    const create = (memory_stores: unknown[]) => s.api('POST', '/routines', { body: { name: 'm', target: target(memory_stores), initial_events: hello } });
    expectError(await create([{ memory_store_id: 'memstore_nope' }]), 404, 'not_found');
    expect((await s.api('POST', '/universes', { body: { slug: 'rtn-mem-b', name: 'B' } })).status).toBe(201);
    const scopedB = await s.mintToken('admin', { universe: 'rtn-mem-b' });
    const theirs = (await s.api('POST', '/memory-stores', { token: scopedB, body: { name: 'theirs' } })).body;
    expectError(await create([{ memory_store_id: theirs.id }]), 404, 'not_found');
    // The same code session create gives for that store.
    expectError(
      await s.api('POST', '/sessions', { body: { agent: agent.id, resources: [{ type: 'memory_store', memory_store_id: theirs.id }] } }),
      404,
      'not_found',
    );

    const stores = [];
    for (let i = 0; i < 9; i++) stores.push(await store(`r${i}`));
    expectError(await create(stores.map((x) => ({ memory_store_id: x.id }))), 400, 'invalid_request');
    expectError(await create([{ memory_store_id: stores[0].id }, { memory_store_id: stores[0].id }]), 400, 'invalid_request');
    expectError(await create([{ memory_store_id: stores[0].id, access: 'write_only' }]), 400, 'invalid_request');
    const eight = await create(stores.slice(0, 8).map((x) => ({ memory_store_id: x.id })));
    expect(eight.status, JSON.stringify(eight.body)).toBe(201);

    await s.api('POST', `/memory-stores/${stores[8].id}/archive`);
    expectError(await create([{ memory_store_id: stores[8].id }]), 409, 'conflict');
    // A patch of the target is checked the same way.
    expectError(await s.api('PATCH', `/routines/${eight.body.id}`, { body: { target: target([{ memory_store_id: stores[8].id }]) } }), 409, 'conflict');
    const patched = await s.api('PATCH', `/routines/${eight.body.id}`, { body: { target: target([{ memory_store_id: stores[1].id }]) } });
    expect(patched.body.target.memory_stores).toEqual([{ memory_store_id: stores[1].id, access: 'read_write', instructions: null }]);
  });

  it('a store archived after the save: the fire fails with run_rejected_error naming it, no session, the routine pauses', async () => {
    const agent = await newAgent();
    const st = await store('archived-after');
    const r = (
      await s.api('POST', '/routines', {
        body: { name: 'later', target: { type: 'new_session', agent: agent.id, memory_stores: [{ memory_store_id: st.id }] }, initial_events: hello },
      })
    ).body;
    await s.api('POST', `/memory-stores/${st.id}/archive`);
    const run = await s.api('POST', `/routines/${r.id}/run`);
    expect(run.body).toMatchObject({ session_id: null, error: { type: 'run_rejected_error' }, agent: { id: agent.id } });
    expect(run.body.error.message).toContain(st.id);
    expect((await lastRun(r.id)).id).toBe(run.body.id);
    expect((await s.api('GET', `/routines/${r.id}`)).body).toMatchObject({
      status: 'paused',
      paused_reason: { type: 'error', error: { type: 'run_rejected_error' } },
    });
  });
});
