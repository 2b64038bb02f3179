// The whole service on SANDBOX_DRIVER=kubernetes against the fake API server: sessions take
// pods from the warm pool (their files and repositories placed before idle), a hermes turn
// runs its tools in the pod, the pod's traffic leaves only through the service's egress proxy
// (authenticated by the session credential, headers added there), a pod killed mid-turn gives
// session.error pod_unavailable (retrying) and the turn finishes on a new pod with the
// workspace restored, archive deletes the pod.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeKubernetes, type FakeKubernetes } from '../fake-kubernetes/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startGitServer, type GitServer } from '../helpers/git-server.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { sendText, waitFor, waitForEvents } from '../helpers/sessions.js';
import { fakeClusterUsable, setProcessEnv } from '../helpers/fake-cluster.js';
import { kubernetesDriver } from '../../src/runtime/kubernetes-sandboxes.js';

const NS = 'agent-sandboxes-svc';
const TOKEN = 'ghp_k8s_repo_token_never_in_the_pod';
const SECRET = 'sk_k8s_secret_never_in_the_pod';
const ENV = {
  K8S_NAMESPACE: NS,
  K8S_WARM_POOL_SIZE: '2',
  EGRESS_LISTEN: '127.0.0.1:0',
  EGRESS_UPSTREAM: '127.0.0.1',
  SANDBOX_SNAPSHOT_IDLE_MS: '200',
  OUTBOUND_ALLOW: '127.0.0.1/32',
};

describe.skipIf(!fakeClusterUsable())('the service on the kubernetes driver', () => {
  let k8s: FakeKubernetes;
  let provider: FakeProvider;
  let git: GitServer;
  let s: TestServer;
  let upstream: http.Server;
  const seen: http.IncomingHttpHeaders[] = [];
  let restoreEnv = () => {};
  let agentId: string;
  let sessionId: string;

  beforeAll(async () => {
    k8s = await startFakeKubernetes();
    restoreEnv = setProcessEnv({ ...ENV, KUBECONFIG: k8s.kubeconfig });
    provider = await startFakeProvider();
    git = await startGitServer({ token: TOKEN });
    upstream = http.createServer((req, res) => {
      seen.push(req.headers);
      res.end('upstream reached from the pod');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    s = await startTestServer({ sandboxDriver: 'kubernetes', anthropicApiKey: 'sk-ant-platform', anthropicBaseUrl: provider.anthropicBaseUrl });
    await kubernetesDriver()!.pool.ready(2);
  }, 120_000);

  afterAll(async () => {
    await s?.stop();
    await k8s?.close();
    await provider?.close();
    await git?.close();
    upstream?.close();
    restoreEnv();
  });

  const podOfSession = (id: string) => k8s.pods(NS).find((p) => p.metadata.labels['agent-service/session'] === id);

  it('a session takes a warm pod; its file and repository are in the pod before it turns idle', async () => {
    const repo = git.createRepo('acme/tools', { 'README.md': 'tools repo\n' });
    const form = new FormData();
    form.append('file', new Blob(['a,b\n1,2\n'], { type: 'text/csv' }), 'in.csv');
    const file = (await s.api('POST', '/files', { form })).body;
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    agentId = agent.id;
    const port = (upstream.address() as AddressInfo).port;
    await s.api('PUT', `/agents/${agentId}/secrets/UPSTREAM_KEY`, { body: { value: SECRET, description: `egress: 127.0.0.1:${port} X-Api-Key: {value}` } });
    const warmBefore = k8s
      .pods(NS)
      .filter((p) => p.metadata.labels['agent-service/state'] === 'warm')
      .map((p) => p.metadata.name);
    const created = await s.api('POST', '/sessions', {
      body: {
        agent: agentId,
        resources: [
          { type: 'file', file_id: file.id, mount_path: '/data/in.csv' },
          { type: 'github_repository', url: repo.url, authorization_token: TOKEN, mount_path: '/tools' },
        ],
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    sessionId = created.body.session.id;
    await waitFor(async () => (await s.api('GET', `/sessions/${sessionId}`)).body.session.status === 'idle', 60_000, 'idle');
    const pod = podOfSession(sessionId)!;
    expect(warmBefore).toContain(pod.metadata.name);
    expect(pod.metadata.annotations).toMatchObject({ 'agent-service/session-id': sessionId, 'agent-service/agent-id': agentId });
  }, 90_000);

  it('a hermes turn runs its tools in the pod, and the pod reaches the outside only through the egress proxy', async () => {
    const port = (upstream.address() as AddressInfo).port;
    const command = [
      'cat /workspace/data/in.csv /workspace/tools/README.md',
      'id -u; hostname',
      'echo from-the-pod > /workspace/out.txt',
      // 127.0.0.1 is the pod's own loopback (NO_PROXY): the test's "remote" host needs the proxy forced.
      `(unset NO_PROXY no_proxy; curl -sS http://127.0.0.1:${port}/hello; echo)`,
      `env | grep -c -e ${TOKEN} -e ${SECRET} || true`,
    ].join('; ');
    provider.enqueue({ kind: 'tool_call', name: 'bash', input: { command } }, { kind: 'text', text: 'done' });
    await sendText(s, sessionId, 'look around');
    const events = await waitForEvents(s, sessionId, 'session.status_idle', 1, 60_000);
    const result = events.find((e) => e.type === 'agent.tool_result')!.part.result;
    expect(result.stdout).toBe(`a,b\n1,2\ntools repo\n1000\nsandbox-pod\nupstream reached from the pod\n0\n`);
    expect(seen.at(-1)!['x-api-key']).toBe(SECRET);
    expect(seen.at(-1)!['proxy-authorization']).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
  }, 90_000);

  it('a pod killed mid-turn: session.error pod_unavailable (retrying), the turn finishes on a new pod with the workspace', async () => {
    await new Promise((r) => setTimeout(r, 1000)); // the workspace snapshot after the last turn
    const oldPod = podOfSession(sessionId)!.metadata.name;
    provider.enqueue({ kind: 'tool_call', name: 'bash', input: { command: 'sleep 3; cat /workspace/out.txt' } }, { kind: 'text', text: 'recovered' });
    await sendText(s, sessionId, 'slow command');
    await waitForEvents(s, sessionId, 'agent.tool_use', 2, 30_000);
    await new Promise((r) => setTimeout(r, 800));
    k8s.killPod(oldPod);
    const events = await waitForEvents(s, sessionId, 'session.status_idle', 2, 90_000);
    const error = events.find((e) => e.type === 'session.error');
    expect(error.error).toMatchObject({ type: 'pod_unavailable', retry_status: 'retrying', message: expect.stringMatching(/sandbox pod stopped/) });
    const results = events.filter((e) => e.type === 'agent.tool_result');
    expect(results.at(-1).part.result.stdout).toBe('from-the-pod\n');
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    const newPod = podOfSession(sessionId)!.metadata.name;
    expect(newPod).not.toBe(oldPod);
    expect(k8s.pods(NS).some((p) => p.metadata.name === oldPod)).toBe(false);
  }, 120_000);

  it('archive deletes the pod', async () => {
    const pod = podOfSession(sessionId)!.metadata.name;
    // The runner releases the session a moment after the idle event of the last turn.
    await waitFor(async () => (await s.api('GET', `/sessions/${sessionId}`)).body.session.status === 'idle', 10_000, 'session idle');
    expect((await s.api('POST', `/sessions/${sessionId}/archive`)).status).toBe(200);
    await waitFor(async () => !k8s.pods(NS).some((p) => p.metadata.name === pod), 20_000, 'pod deleted');
  });
});
