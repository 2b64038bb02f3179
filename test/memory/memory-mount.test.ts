// Memory stores mounted into sessions (issue #30), end to end on the fake provider: a turn's
// write_file into the mounted store becomes a memory by the session; a second session of
// another agent reads it in its turn; the system prompt names the mount; a read_only mount
// cannot be written inside the jail; limits at session create (9 stores, archived, not addable
// later); a file breaking the limits is a session.error naming its path, the rest kept.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents } from '../helpers/sessions.js';
import { expectError } from '../helpers/agents.js';

let s: TestServer;
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
  s = await startTestServer({ anthropicApiKey: 'sk-ant-test', anthropicBaseUrl: fake.anthropicBaseUrl });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});
beforeEach(() => fake.reset());

async function store(name: string, description: string | null = null) {
  const res = await s.api('POST', '/memory-stores', { body: { name, description } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}
const mount = (id: string, extra: Record<string, unknown> = {}) => ({ type: 'memory_store', memory_store_id: id, ...extra });

describe('a mounted store across sessions', () => {
  it('a turn writes /preferences/x.md; the memory is the session’s; another agent’s session reads it', async () => {
    const st = await store('User prefs', 'what the user prefers');
    await s.api('POST', `/memory-stores/${st.id}/memories`, { body: { path: '/preferences/style.md', content: 'tabs' } });
    const { session } = await readySession(s, {}, { resources: [mount(st.id, { instructions: 'Keep one file per topic.' })] });
    const resource = session.resources.find((r: any) => r.type === 'memory_store');
    expect(resource).toEqual({
      type: 'memory_store',
      id: expect.stringMatching(/^sesrsc_/),
      memory_store_id: st.id,
      access: 'read_write',
      instructions: 'Keep one file per topic.',
      mount_path: '/workspace/memory/user-prefs',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    fake.enqueue(
      { kind: 'tool_call', name: 'bash', input: { command: 'cat /workspace/memory/user-prefs/preferences/style.md' } },
      { kind: 'tool_call', name: 'write_file', input: { path: '/workspace/memory/user-prefs/preferences/x.md', content: 'likes short answers' } },
      { kind: 'text', text: 'Noted.' },
    );
    await sendText(s, session.id, 'remember that I like short answers');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const results = events.filter((e) => e.type === 'agent.tool_result');
    expect(results[0].part.result.stdout).toBe('tabs');
    expect(results[1].part).toMatchObject({ status: 'ok' });
    // The system prompt named the mount, the description and the instructions.
    const system = JSON.stringify(fake.requests[0]!.body.system);
    expect(system).toContain('/workspace/memory/user-prefs');
    expect(system).toContain('what the user prefers');
    expect(system).toContain('Keep one file per topic.');

    const written = await s.api('GET', `/memory-stores/${st.id}/memory?path=/preferences/x.md`);
    expect(written.status, JSON.stringify(written.body)).toBe(200);
    expect(written.body.content).toBe('likes short answers');
    const versions = (await s.api('GET', `/memory-stores/${st.id}/versions?memory_id=${written.body.id}`)).body.data;
    expect(versions).toEqual([expect.objectContaining({ operation: 'created', actor: { type: 'session', session_id: session.id } })]);

    // A second session of another agent mounts the store and reads the note in its turn.
    const other = await readySession(s, {}, { resources: [mount(st.id, { access: 'read_only' })] });
    fake.reset();
    fake.enqueue({ kind: 'tool_call', name: 'read_file', input: { path: '/workspace/memory/user-prefs/preferences/x.md' } }, { kind: 'text', text: 'ok' });
    await sendText(s, other.session.id, 'what do I like?');
    const seen = await waitForEvents(s, other.session.id, 'session.status_idle');
    expect(seen.find((e) => e.type === 'agent.tool_result').part.result.content).toBe('likes short answers');
    expect(other.agent.id).not.toBe(session.agent);
  });

  it('edits and deletions in a later turn are versions; a file over the limits is a session.error naming it, the rest kept', async () => {
    const st = await store('work');
    await s.api('POST', `/memory-stores/${st.id}/memories`, { body: { path: '/a.md', content: 'a' } });
    await s.api('POST', `/memory-stores/${st.id}/memories`, { body: { path: '/b.md', content: 'b' } });
    const { session } = await readySession(s, {}, { resources: [mount(st.id)] });
    fake.enqueue(
      {
        kind: 'tool_call',
        name: 'bash',
        input: { command: 'cd /workspace/memory/work && echo -n a2 > a.md && rm b.md && echo -n c > c.md && head -c 103000 /dev/zero | tr "\\0" x > big.md' },
      },
      { kind: 'text', text: 'done' },
    );
    await sendText(s, session.id, 'tidy up');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const errors = events.filter((e) => e.type === 'session.error');
    expect(errors).toHaveLength(1);
    expect(errors[0].error).toMatchObject({ type: 'memory_write_refused', message: expect.stringContaining('/workspace/memory/work/big.md') });
    const paths = (await s.api('GET', `/memory-stores/${st.id}/memories`)).body.data.map((m: any) => m.path);
    expect(paths).toEqual(['/a.md', '/c.md']);
    expect((await s.api('GET', `/memory-stores/${st.id}/memory?path=/a.md`)).body.content).toBe('a2');
    const ops = (await s.api('GET', `/memory-stores/${st.id}/versions?limit=100`)).body.data.filter((v: any) => v.actor.type === 'session');
    expect(ops.map((v: any) => `${v.operation} ${v.path}`).sort()).toEqual(['created /c.md', 'deleted /b.md', 'modified /a.md']);

    // Changes made outside the session reach its next turn (only those are written in); a path
    // that cannot be a file next to another (/c.md/x under the file /c.md) is left out, the turn runs.
    const a = (await s.api('GET', `/memory-stores/${st.id}/memory?path=/a.md`)).body;
    await s.api('PATCH', `/memory-stores/${st.id}/memories/${a.id}`, { body: { content: 'a3', expected_content_sha256: a.content_sha256 } });
    const c = (await s.api('GET', `/memory-stores/${st.id}/memory?path=/c.md`)).body;
    await s.api('DELETE', `/memory-stores/${st.id}/memories/${c.id}`);
    await s.api('POST', `/memory-stores/${st.id}/memories`, { body: { path: '/d.md', content: 'd' } });
    await s.api('POST', `/memory-stores/${st.id}/memories`, { body: { path: '/d.md/x', content: 'x' } });
    fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: 'cd /workspace/memory/work && ls && cat a.md' } }, { kind: 'text', text: 'seen' });
    await sendText(s, session.id, 'look');
    const next = await waitForEvents(s, session.id, 'session.status_idle', 2);
    expect(next.filter((e) => e.type === 'agent.tool_result').at(-1).part.result.stdout).toBe('a.md\nd.md\na3');
    // big.md was reported once; the write-in replaced the directory (it is gone).
    expect(next.filter((e) => e.type === 'session.error')).toHaveLength(1);
    const paths2 = (await s.api('GET', `/memory-stores/${st.id}/memories`)).body.data.map((m: any) => m.path);
    expect(paths2).toEqual(['/a.md', '/d.md', '/d.md/x']);
  });
});

describe('a missing directory', () => {
  it('removing the whole mount deletes nothing; the next turn has it back', async () => {
    const st = await store('gone');
    await s.api('POST', `/memory-stores/${st.id}/memories`, { body: { path: '/stay.md', content: 'stay' } });
    const { session } = await readySession(s, {}, { resources: [mount(st.id)] });
    fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: 'rm -rf /workspace/memory/gone' } }, { kind: 'text', text: 'removed' });
    await sendText(s, session.id, 'remove it');
    await waitForEvents(s, session.id, 'session.status_idle');
    expect((await s.api('GET', `/memory-stores/${st.id}/memories`)).body.data.map((m: any) => m.path)).toEqual(['/stay.md']);
    fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: 'cat /workspace/memory/gone/stay.md' } }, { kind: 'text', text: 'back' });
    await sendText(s, session.id, 'look again');
    const events = await waitForEvents(s, session.id, 'session.status_idle', 2);
    expect(events.filter((e) => e.type === 'agent.tool_result').at(-1).part.result.stdout).toBe('stay');
  });
});

describe('an archived store', () => {
  it('a session that mounts it still reads it; its writes are refused', async () => {
    const st = await store('archived-later');
    await s.api('POST', `/memory-stores/${st.id}/memories`, { body: { path: '/old.md', content: 'old' } });
    const { session } = await readySession(s, {}, { resources: [mount(st.id)] });
    await s.api('POST', `/memory-stores/${st.id}/archive`);
    fake.enqueue(
      {
        kind: 'tool_call',
        name: 'bash',
        input: { command: 'cat /workspace/memory/archived-later/old.md; echo -n x > /workspace/memory/archived-later/new.md' },
      },
      { kind: 'text', text: 'ok' },
    );
    await sendText(s, session.id, 'read and write');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const bash = events.find((e) => e.type === 'agent.tool_result').part;
    expect(bash.result.stdout).toBe('old');
    expect(bash.result.stderr).toMatch(/Read-only file system/);
    expect((await s.api('GET', `/memory-stores/${st.id}/memories`)).body.data.map((m: any) => m.path)).toEqual(['/old.md']);
  });
});

describe('read_only', () => {
  it('the jail refuses writes; nothing reaches the store', async () => {
    const st = await store('readonly');
    await s.api('POST', `/memory-stores/${st.id}/memories`, { body: { path: '/keep.md', content: 'keep' } });
    const { session } = await readySession(s, {}, { resources: [mount(st.id, { access: 'read_only' })] });
    fake.enqueue(
      {
        kind: 'tool_call',
        name: 'bash',
        input: { command: 'echo -n changed > /workspace/memory/readonly/keep.md; echo -n new > /workspace/memory/readonly/new.md' },
      },
      { kind: 'tool_call', name: 'write_file', input: { path: '/workspace/memory/readonly/keep.md', content: 'by the file tool' } },
      { kind: 'tool_call', name: 'bash', input: { command: 'ln -s /workspace/memory/readonly /workspace/ro-link' } },
      { kind: 'tool_call', name: 'write_file', input: { path: '/workspace/ro-link/keep.md', content: 'through a link' } },
      { kind: 'text', text: 'tried' },
    );
    await sendText(s, session.id, 'try to write');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const results = events.filter((e) => e.type === 'agent.tool_result').map((e) => e.part);
    expect(results[0].status).toBe('error');
    expect(results[0].result.stderr).toMatch(/Read-only file system/);
    // The file tools write from outside the jail: they are refused too, also through a symbolic link.
    expect(results[1]).toMatchObject({ tool_name: 'write_file', status: 'error' });
    expect(JSON.stringify(results[1].result)).toMatch(/read-only/);
    expect(results[2]).toMatchObject({ tool_name: 'bash', status: 'ok' });
    expect(results[3]).toMatchObject({ tool_name: 'write_file', status: 'error' });
    expect(events.filter((e) => e.type === 'session.error')).toEqual([]);
    const memories = (await s.api('GET', `/memory-stores/${st.id}/memories`)).body.data;
    expect(memories.map((m: any) => m.path)).toEqual(['/keep.md']);
    expect((await s.api('GET', `/memory-stores/${st.id}/memory?path=/keep.md`)).body.content).toBe('keep');
  });
});

describe('limits at session create', () => {
  it('9 stores → 400; a store twice → 400; archived → 409; another universe’s → 404; not addable later → 400', async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const stores = [];
    for (let i = 0; i < 9; i++) stores.push(await store(`s${i}`));
    const create = (resources: unknown[]) => s.api('POST', '/sessions', { body: { agent: agent.id, resources } });
    expectError(await create(stores.map((x) => mount(x.id))), 400, 'too_many_resources');
    expectError(await create([mount(stores[0].id), mount(stores[0].id)]), 400, 'invalid_request');
    const eight = await create(stores.slice(0, 8).map((x) => mount(x.id)));
    expect(eight.status, JSON.stringify(eight.body)).toBe(201);
    const paths = eight.body.session.resources.map((r: any) => r.mount_path);
    expect(new Set(paths).size).toBe(8);
    // Two stores of the same name get distinct mount paths.
    const twin = await store('s0');
    const twins = await create([mount(stores[0].id), mount(twin.id)]);
    expect(twins.body.session.resources.map((r: any) => r.mount_path)).toEqual(['/workspace/memory/s0', `/workspace/memory/s0-${twin.id.slice(-6)}`]);
    const added = await s.api('POST', `/sessions/${eight.body.session.id}/resources`, { body: mount(stores[8].id) });
    expectError(added, 400, 'invalid_request');
    expect(added.body.error.message).toMatch(/memory stores attach at session create only|cannot be added/);
    await s.api('POST', `/memory-stores/${stores[8].id}/archive`);
    expectError(await create([mount(stores[8].id)]), 409, 'conflict');
    expect((await s.api('POST', '/universes', { body: { slug: 'mount-b', name: 'B' } })).status).toBe(201);
    const scopedB = await s.mintToken('admin', { universe: 'mount-b' });
    const theirs = (await s.api('POST', '/memory-stores', { token: scopedB, body: { name: 'theirs' } })).body;
    expectError(await create([mount(theirs.id)]), 404, 'not_found');
  });
});
