// Memory stores on SANDBOX_DRIVER=kubernetes against the fake API server (issue #30): the
// stores are copied into the session's pod before a turn and read back after it. A turn writes
// /preferences/x.md into a read_write mount → a memory by the session. A read_only mount: the
// pod's user has no write bits there (a plain write fails), the file tools are refused by the
// driver (also through a symbolic link, resolved in the pod), and what the agent changes anyway
// after chmod-ing the files back is refused at the read-back (session.error naming the path),
// never stored, and overwritten before the next turn.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeKubernetes, type FakeKubernetes } from '../fake-kubernetes/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { sendText, waitFor, waitForEvents } from '../helpers/sessions.js';
import { fakeClusterUsable, setProcessEnv } from '../helpers/fake-cluster.js';

const NS = 'agent-sandboxes-memory';
const ENV = { K8S_NAMESPACE: NS, K8S_WARM_POOL_SIZE: '0', EGRESS_LISTEN: '127.0.0.1:0', EGRESS_UPSTREAM: '127.0.0.1', K8S_POD_READY_TIMEOUT_MS: '30000' };

describe.skipIf(!fakeClusterUsable())('memory stores in a Kubernetes pod', () => {
  let k8s: FakeKubernetes;
  let fake: FakeProvider;
  let s: TestServer;
  let restoreEnv = () => {};

  beforeAll(async () => {
    k8s = await startFakeKubernetes();
    restoreEnv = setProcessEnv({ ...ENV, KUBECONFIG: k8s.kubeconfig });
    fake = await startFakeProvider();
    s = await startTestServer({ sandboxDriver: 'kubernetes', anthropicApiKey: 'sk-ant-test', anthropicBaseUrl: fake.anthropicBaseUrl });
  }, 120_000);
  afterAll(async () => {
    await s?.stop();
    await k8s?.close();
    await fake?.close();
    restoreEnv();
  });
  beforeEach(() => fake.reset());

  const store = async (name: string, memories: Record<string, string>) => {
    const st = (await s.api('POST', '/memory-stores', { body: { name } })).body;
    for (const [path, content] of Object.entries(memories)) {
      expect((await s.api('POST', `/memory-stores/${st.id}/memories`, { body: { path, content } })).status).toBe(201);
    }
    return st;
  };
  const memory = async (storeId: string, path: string) => (await s.api('GET', `/memory-stores/${storeId}/memory?path=${encodeURIComponent(path)}`)).body;

  it('a turn in the pod writes /preferences/x.md (a memory by the session); read_only is refused and restored', async () => {
    const prefs = await store('prefs', { '/preferences/style.md': 'tabs' });
    const rules = await store('rules', { '/keep.md': 'keep' });
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const created = await s.api('POST', '/sessions', {
      body: {
        agent: agent.id,
        resources: [
          { type: 'memory_store', memory_store_id: prefs.id },
          { type: 'memory_store', memory_store_id: rules.id, access: 'read_only' },
        ],
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const sessionId = created.body.session.id;
    await waitFor(async () => (await s.api('GET', `/sessions/${sessionId}`)).body.session.status === 'idle', 60_000, 'idle');
    expect(k8s.pods(NS).some((p) => p.metadata.labels['agent-service/session'] === sessionId)).toBe(true);

    const RO = '/workspace/memory/rules';
    fake.enqueue(
      { kind: 'tool_call', name: 'bash', input: { command: 'cat /workspace/memory/prefs/preferences/style.md; echo; id -u' } },
      { kind: 'tool_call', name: 'write_file', input: { path: '/workspace/memory/prefs/preferences/x.md', content: 'likes short answers' } },
      { kind: 'tool_call', name: 'bash', input: { command: `echo -n changed > ${RO}/keep.md; echo -n new > ${RO}/new.md` } },
      { kind: 'tool_call', name: 'write_file', input: { path: `${RO}/keep.md`, content: 'by the file tool' } },
      { kind: 'tool_call', name: 'bash', input: { command: `ln -s ${RO} /workspace/ro-link` } },
      { kind: 'tool_call', name: 'write_file', input: { path: '/workspace/ro-link/keep.md', content: 'through a link' } },
      // The pod's user owns the files: it can give itself the write bit back and write.
      { kind: 'tool_call', name: 'bash', input: { command: `chmod -R u+w ${RO} && echo -n forced > ${RO}/keep.md && cat ${RO}/keep.md` } },
      { kind: 'text', text: 'done' },
    );
    await sendText(s, sessionId, 'remember that I like short answers');
    const events = await waitForEvents(s, sessionId, 'session.status_idle', 1, 60_000);
    const results = events.filter((e) => e.type === 'agent.tool_result').map((e) => e.part);
    expect(results[0].result.stdout).toBe('tabs\n1000\n');
    expect(results[1]).toMatchObject({ tool_name: 'write_file', status: 'ok' });
    expect(results[2].status).toBe('error');
    expect(results[2].result.stderr).toMatch(/Permission denied/);
    expect(results[3]).toMatchObject({ tool_name: 'write_file', status: 'error' });
    expect(JSON.stringify(results[3].result)).toMatch(/read-only/);
    expect(results[4]).toMatchObject({ tool_name: 'bash', status: 'ok' });
    expect(results[5]).toMatchObject({ tool_name: 'write_file', status: 'error' });
    expect(JSON.stringify(results[5].result)).toMatch(/read-only/);
    expect(results[6].result.stdout).toBe('forced');

    // The read_write write is a memory by the session.
    const x = await memory(prefs.id, '/preferences/x.md');
    expect(x.content).toBe('likes short answers');
    const versions = (await s.api('GET', `/memory-stores/${prefs.id}/versions?memory_id=${x.id}`)).body.data;
    expect(versions).toEqual([expect.objectContaining({ operation: 'created', actor: { type: 'session', session_id: sessionId } })]);
    // The forced read_only write: a session.error naming the path, nothing stored.
    const errors = events.filter((e) => e.type === 'session.error');
    expect(errors).toHaveLength(1);
    expect(errors[0].error).toMatchObject({ type: 'memory_write_refused', message: expect.stringContaining(`${RO}/keep.md`) });
    expect((await memory(rules.id, '/keep.md')).content).toBe('keep');
    expect((await s.api('GET', `/memory-stores/${rules.id}/versions`)).body.data).toHaveLength(1);

    // The next turn finds the store's content again, read-only again; the user's edit of the
    // read_write store reaches the pod too.
    await s.api('PATCH', `/memory-stores/${prefs.id}/memories/${x.id}`, { body: { content: 'likes tables', expected_content_sha256: x.content_sha256 } });
    fake.enqueue(
      {
        kind: 'tool_call',
        name: 'bash',
        input: { command: `cat ${RO}/keep.md; echo; ls ${RO}; cat /workspace/memory/prefs/preferences/x.md; echo; echo -n again > ${RO}/keep.md` },
      },
      { kind: 'text', text: 'seen' },
    );
    await sendText(s, sessionId, 'look again');
    const next = await waitForEvents(s, sessionId, 'session.status_idle', 2, 60_000);
    const last = next.filter((e) => e.type === 'agent.tool_result').at(-1).part;
    expect(last.result.stdout).toBe('keep\nkeep.md\nlikes tables\n');
    expect(last.result.stderr).toMatch(/Permission denied/);
    expect(next.filter((e) => e.type === 'session.error')).toHaveLength(1);
    expect((await s.api('GET', `/memory-stores/${prefs.id}/versions?memory_id=${x.id}`)).body.data).toHaveLength(2);
  }, 150_000);
});
