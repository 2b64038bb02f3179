// kill -9 during a turn that wrote into a mounted memory store (issue #30): the write the tool
// result reported done is in the sandbox's directory, not yet read back; the restart's recovery
// reads it back while it ends the lost turn (before any new turn), so it becomes a version by
// the session and nothing is lost. On PGlite (a data directory) and, when configured, PostgreSQL + Redis.
import { describe, expect, it } from 'vitest';
import { api } from '../helpers/child-server.js';
import { CONFIGS, say, waitForHistory, withCrashDeployments } from '../helpers/durability.js';

const crash = withCrashDeployments();

describe.each(CONFIGS)('kill -9 after a memory write ($name)', ({ postgres }) => {
  it('the write reported done is stored after the restart, attributed to the session', async () => {
    const { fake } = crash;
    const { env, token } = await crash.deployment(postgres);
    const first = await crash.start(env);
    const store = (await api(first.base, token, 'POST', '/memory-stores', { name: 'notes' })).body;
    const agent = (await api(first.base, token, 'POST', '/agents', {})).body.agent;
    const created = await api(first.base, token, 'POST', '/sessions', {
      agent: agent.id,
      resources: [{ type: 'memory_store', memory_store_id: store.id }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const session = created.body.session;
    for (let i = 0; i < 200; i++) {
      if ((await api(first.base, token, 'GET', `/sessions/${session.id}`)).body.session.status === 'idle') break;
      await new Promise((r) => setTimeout(r, 50));
    }

    // The tool writes the note and reports it done; then the model call hangs: the turn never ends.
    fake.enqueue(
      { kind: 'tool_call', name: 'write_file', input: { path: '/workspace/memory/notes/preferences/x.md', content: 'written before the kill' } },
      { kind: 'hang', text: 'thinking' },
    );
    expect((await say(first.base, token, session.id, 'remember this')).status).toBe(202);
    // Killed once the hanging model call has begun (its first words are in history): killed
    // earlier, the hang would still be queued at the fake provider for the next turn.
    const before = await waitForHistory(
      first.base,
      token,
      session.id,
      (ev) =>
        ev.some((e) => e.type === 'agent.tool_result' && e.part.status === 'ok' && e.part.tool_name === 'write_file') &&
        ev.some((e) => e.type === 'agent.message'),
    );
    expect(before.some((e) => e.type === 'session.status_idle' && e !== before[0])).toBe(false);
    await first.kill('SIGKILL');

    // The restart ends the lost turn (its runner was this instance's previous life) and reads
    // the mount back as it does: the memory is there before any new turn.
    const second = await crash.start(env);
    const ended = await waitForHistory(second.base, token, session.id, (ev) => ev.at(-1)?.type === 'session.status_idle', 30_000);
    expect(ended.filter((e) => e.type === 'session.error').map((e) => e.error.type)).toEqual(['runner_lost']);
    expect(ended.filter((e) => e.type === 'session.status_running')).toHaveLength(1);
    const memory = await api(second.base, token, 'GET', `/memory-stores/${store.id}/memory?path=${encodeURIComponent('/preferences/x.md')}`);
    expect(memory.status, JSON.stringify(memory.body)).toBe(200);
    expect(memory.body.content).toBe('written before the kill');
    const versions = (await api(second.base, token, 'GET', `/memory-stores/${store.id}/versions?memory_id=${memory.body.id}`)).body.data;
    expect(versions).toEqual([expect.objectContaining({ operation: 'created', actor: { type: 'session', session_id: session.id } })]);

    // The next turn reads the same directory back: nothing new, no second version.
    fake.enqueue({ kind: 'text', text: 'back' });
    expect((await say(second.base, token, session.id, 'are you there?')).status).toBe(202);
    await waitForHistory(second.base, token, session.id, (ev) => ev.some((e) => e.type === 'agent.message' && e.final && e.text === 'back'), 30_000);
    expect((await api(second.base, token, 'GET', `/memory-stores/${store.id}/versions?memory_id=${memory.body.id}`)).body.data).toHaveLength(1);
    await second.kill('SIGTERM');
  }, 120_000);
});
