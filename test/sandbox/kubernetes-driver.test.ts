// The Kubernetes sandbox driver against the fake API server (real REST and exec WebSocket
// protocols; its pods are real jailed processes): the pod it asks for, the warm pool and its
// atomic claims from two "API processes", exec (exit codes, stdin, timeouts that kill the tree,
// output caps), files, the pod's only way out, machine shapes, reattachment after a restart,
// a pod killed under a command (new pod, workspace restored, command run again), teardown.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeKubernetes, type FakeKubernetes } from '../fake-kubernetes/server.js';
import { createKubernetesDriver, type KubernetesDriver, type KubernetesHooks } from '../../src/sandbox/kubernetes/driver.js';
import { loadKubernetesSettings } from '../../src/sandbox/kubernetes/settings.js';
import { blobSnapshots } from '../../src/sandbox/kubernetes/snapshots.js';
import { fsBlobStore } from '../../src/blobs/blob-store.js';
import { SandboxPathError } from '../../src/sandbox/driver.js';
import { bwrapAvailable } from '../../src/sandbox/local.js';

const NS = 'sandboxes-test';
const usable = bwrapAvailable() && process.getuid?.() === 0;
const blobDir = fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-snapshots-'));
const blobs = fsBlobStore(blobDir);
const settings = loadKubernetesSettings({ K8S_NAMESPACE: NS, K8S_WARM_POOL_SIZE: '3', SANDBOX_SNAPSHOT_IDLE_MS: '150', K8S_POD_READY_TIMEOUT_MS: '30000' });

describe.skipIf(!usable)('kubernetes driver', () => {
  let fake: FakeKubernetes;
  let upstream: http.Server;
  const upstreamSeen: string[] = [];
  let one: KubernetesDriver;
  let two: KubernetesDriver;
  const events: string[] = [];

  const driver = (name: string, hooks: KubernetesHooks = {}) => {
    const kc = new KubeConfig();
    kc.loadFromFile(fake.kubeconfig);
    return createKubernetesDriver({
      kubeConfig: kc,
      settings,
      egress: {
        env: (id) => ({ AGENT_SERVICE_TOKEN: `tok-${id}`, AGENT_SERVICE_EGRESS: 'http://127.0.0.1:3128' }),
        caPem: '-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----',
      },
      egressUpstream: `127.0.0.1:${(upstream.address() as AddressInfo).port}`,
      instanceId: name,
      snapshots: blobSnapshots(() => blobs),
      hooks,
      logger: { warn: () => undefined, info: () => undefined },
    });
  };
  const hooks: KubernetesHooks = {
    annotations: async (id) => ({ 'agent-service/universe-id': `uni-of-${id}` }),
    podLost: async (id, message) => void events.push(`lost ${id}: ${message}`),
    podReplaced: async (id, _sb, restored) => void events.push(`replaced ${id} restored=${restored}`),
    replaceFailed: async (id, message) => void events.push(`failed ${id}: ${message}`),
  };

  beforeAll(async () => {
    fake = await startFakeKubernetes();
    upstream = http.createServer((req, res) => {
      upstreamSeen.push(`${req.method} ${req.url} ${req.headers['proxy-authorization'] ?? ''}`);
      res.end('reached the API egress');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    one = driver('api-1', hooks);
    two = driver('api-2', hooks);
    await one.pool.refill();
    await one.pool.ready(3);
  }, 60_000);

  afterAll(async () => {
    await one?.close();
    await two?.close();
    await fake?.close();
    upstream?.close();
    fs.rmSync(blobDir, { recursive: true, force: true });
  });

  it('warm pods are locked down and shaped from the defaults', () => {
    const pod = fake.pods(NS)[0]!;
    expect(pod.metadata.labels).toMatchObject({
      'app.kubernetes.io/name': 'agent-sandbox',
      'app.kubernetes.io/managed-by': 'agent-service',
      'agent-service/state': 'warm',
    });
    const spec = pod.spec as any;
    expect(spec).toMatchObject({
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      restartPolicy: 'Never',
      securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
    });
    expect(spec.containers[0].securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: 1000,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(spec.containers[0].resources).toEqual({ requests: { cpu: '250m', memory: '2048Mi' }, limits: { cpu: '1000m', memory: '2048Mi' } });
  });

  it('a session claims a warm pod at once and runs commands in it as the non-root user', async () => {
    const started = Date.now();
    const sb = await one.provision({ sessionId: 'sess_k8s_a' });
    const claimMs = Date.now() - started;
    const pod = fake.pods(NS).find((p) => p.metadata.name === one.podOf('sess_k8s_a'))!;
    expect(pod.metadata.labels).toMatchObject({ 'agent-service/state': 'claimed', 'agent-service/session': 'sess_k8s_a' });
    expect(pod.metadata.annotations).toMatchObject({
      'agent-service/session-id': 'sess_k8s_a',
      'agent-service/universe-id': 'uni-of-sess_k8s_a',
      'agent-service/claimed-by': 'api-1',
    });
    expect(claimMs).toBeLessThan(2000);
    const r = await sb.exec('id -u; pwd; echo "$AGENT_SERVICE_TOKEN"; echo err >&2; exit 3');
    expect(r).toEqual({ exitCode: 3, stdout: '1000\n/workspace\ntok-sess_k8s_a\n', stderr: 'err\n', timedOut: false, aborted: false, truncated: false });
    expect((await sb.exec('cat', { stdin: 'fed through stdin' })).stdout).toBe('fed through stdin');
    expect((await sb.exec('touch /usr/x 2>&1; touch /etc/x 2>&1 || true')).stdout).toMatch(/Read-only file system/);
  });

  it('timeouts kill the whole tree; output is capped', async () => {
    const sb = (await one.get('sess_k8s_a'))!;
    const started = Date.now();
    const slow = await sb.exec('sleep 100.3 & sleep 100.4; wait', { timeoutMs: 800 });
    expect(slow.timedOut).toBe(true);
    expect(slow.exitCode).toBeNull();
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await sb.exec('ps -eo args | grep -c "^sleep 100"')).stdout.trim()).toBe('0');
    const big = await sb.exec('head -c 200000 /dev/zero | tr "\\0" a', { maxOutputBytes: 1000 });
    expect(big.stdout).toHaveLength(1000);
    expect(big.truncated).toBe(true);
  });

  it('files: write, read (binary), stat, read-only rewrite, remove, refuse escapes, import a tree', async () => {
    const sb = (await one.get('sess_k8s_a'))!;
    const bytes = Buffer.from([0, 1, 2, 255, 10, 13, 0]);
    await sb.writeFile('/workspace/bin/data.bin', bytes);
    expect(Buffer.compare(await sb.readFile('bin/data.bin'), bytes)).toBe(0);
    expect(await sb.stat('/workspace/bin')).toEqual({ size: expect.any(Number), isFile: false, isDirectory: true });
    expect(await sb.stat('/workspace/bin/data.bin')).toEqual({ size: 7, isFile: true, isDirectory: false });
    expect(await sb.stat('/workspace/nope')).toBeNull();
    await sb.writeFile('/workspace/ro.txt', 'one', { readOnly: true });
    expect((await sb.exec('stat -c %a ro.txt')).stdout).toBe('444\n');
    await sb.writeFile('/workspace/ro.txt', 'two', { readOnly: true });
    expect((await sb.readFile('/workspace/ro.txt')).toString()).toBe('two');
    await sb.exec('ln -s /etc /workspace/escape');
    await expect(sb.readFile('/workspace/escape/passwd')).rejects.toBeInstanceOf(SandboxPathError);
    await expect(sb.readFile('/etc/passwd')).rejects.toBeInstanceOf(SandboxPathError);
    await expect(sb.readFile('/workspace/bin')).rejects.toMatchObject({ code: 'EISDIR' });
    await sb.remove('/workspace/bin');
    expect(await sb.stat('/workspace/bin')).toBeNull();
    const tree = fs.mkdtempSync(path.join(os.tmpdir(), 'tree-'));
    fs.mkdirSync(path.join(tree, 'src'));
    fs.writeFileSync(path.join(tree, 'src', 'main.py'), 'print(1)\n');
    await sb.importTree(tree, '/workspace/repo');
    expect((await sb.exec('cat repo/src/main.py; stat -c %u repo/src/main.py')).stdout).toBe('print(1)\n1000\n');
    fs.rmSync(tree, { recursive: true, force: true });
  });

  it("the pod's one way out is the API's egress port; nothing else", async () => {
    const sb = (await one.get('sess_k8s_a'))!;
    const r = await sb.exec('curl -sS -x http://session:tok@127.0.0.1:3128 http://example.test/through-the-pod', { timeoutMs: 20_000 });
    expect(r.stdout).toBe('reached the API egress');
    expect(upstreamSeen.at(-1)).toBe(`GET http://example.test/through-the-pod Basic ${Buffer.from('session:tok').toString('base64')}`);
    const direct = await sb.exec('(exec 3<>/dev/tcp/127.0.0.1/5432 && echo CONNECTED) 2>&1; ls /run/agent-service', { timeoutMs: 5000 });
    expect(direct.stdout).not.toContain('CONNECTED');
    expect(direct.stdout).toContain('ca-bundle.crt');
  });

  it('a session asking for another shape gets a pod of its own with those resources', async () => {
    const sb = await one.provision({ sessionId: 'sess_k8s_big', vcpus: 2, memoryMb: 4096 });
    const pod = fake.pods(NS).find((p) => p.metadata.name === one.podOf('sess_k8s_big'))!;
    expect((pod.spec as any).containers[0].resources).toEqual({ requests: { cpu: '500m', memory: '4096Mi' }, limits: { cpu: '2000m', memory: '4096Mi' } });
    expect(pod.metadata.labels['agent-service/session']).toBe('sess_k8s_big');
    expect((await sb.exec('echo big')).stdout).toBe('big\n');
    await one.destroy('sess_k8s_big');
  });

  it('two API processes claiming from one pool never share a pod', async () => {
    await one.pool.ready(3);
    const ids = Array.from({ length: 6 }, (_, i) => `sess_race_${i}`);
    const boxes = await Promise.all(ids.map((id, i) => (i % 2 ? two : one).provision({ sessionId: id })));
    const pods = ids.map((id, i) => (i % 2 ? two : one).podOf(id));
    expect(new Set(pods).size).toBe(6);
    for (const id of ids) expect(fake.pods(NS).filter((p) => p.metadata.labels['agent-service/session'] === id)).toHaveLength(1);
    expect((await boxes[5]!.exec('echo ok')).stdout).toBe('ok\n');
    await Promise.all(ids.map((id) => one.destroy(id)));
  }, 60_000);

  it('after a restart the session finds its pod by label, files intact', async () => {
    const restarted = driver('api-1-restarted');
    const sb = (await restarted.get('sess_k8s_a'))!;
    expect(restarted.podOf('sess_k8s_a')).toBe(one.podOf('sess_k8s_a'));
    expect((await sb.readFile('/workspace/ro.txt')).toString()).toBe('two');
    expect(await restarted.get('sess_never_made')).toBeNull();
    await restarted.close();
  });

  it('a pod killed under a command: new pod, workspace restored from the snapshot, command run again', async () => {
    const sb = (await one.get('sess_k8s_a'))!;
    await sb.writeFile('/workspace/before.txt', 'written before the crash');
    await new Promise((r) => setTimeout(r, 800)); // quiet: the snapshot is taken
    const oldPod = one.podOf('sess_k8s_a')!;
    const running = sb.exec('sleep 1.5; cat /workspace/before.txt', { timeoutMs: 30_000 });
    await new Promise((r) => setTimeout(r, 500));
    fake.killPod(oldPod);
    const r = await running;
    expect(r.stdout).toBe('written before the crash');
    expect(one.podOf('sess_k8s_a')).not.toBe(oldPod);
    expect(events).toEqual([expect.stringMatching(/^lost sess_k8s_a: the sandbox pod stopped/), 'replaced sess_k8s_a restored=true']);
    expect(fake.pods(NS).some((p) => p.metadata.name === oldPod)).toBe(false);
  }, 60_000);

  it('copyWorkspace (a fork): streamed into a pod, or as the snapshot a session without a pod is provisioned with', async () => {
    const from = (await one.get('sess_k8s_a'))!;
    await from.exec('mkdir -p deep/dir && printf fork-me > deep/dir/f.txt && ln -s deep/dir/f.txt link');
    // The target has a pod: the source's tar is piped into it.
    const into = await one.provision({ sessionId: 'sess_k8s_fork_a' });
    expect(await one.copyWorkspace('sess_k8s_a', 'sess_k8s_fork_a')).toBe(true);
    expect((await into.exec('cat deep/dir/f.txt; echo; readlink link; cat before.txt')).stdout).toBe('fork-me\ndeep/dir/f.txt\nwritten before the crash');
    // No pod yet: the copy is its snapshot, which provisioning restores.
    expect(await one.copyWorkspace('sess_k8s_a', 'sess_k8s_fork_b')).toBe(true);
    expect(one.podOf('sess_k8s_fork_b')).toBeNull();
    const later = await one.provision({ sessionId: 'sess_k8s_fork_b' });
    expect((await later.readFile('/workspace/deep/dir/f.txt')).toString()).toBe('fork-me');
    // The copies are their own: a change in one is not in the source.
    await later.writeFile('/workspace/deep/dir/f.txt', 'changed in the fork');
    expect((await from.readFile('/workspace/deep/dir/f.txt')).toString()).toBe('fork-me');
    expect(await one.copyWorkspace('sess_never_made', 'sess_k8s_fork_c')).toBe(false);
    await one.destroy('sess_k8s_fork_a');
    await one.destroy('sess_k8s_fork_b');
  }, 60_000);

  it('destroy deletes the pod and the snapshot', async () => {
    const pod = one.podOf('sess_k8s_a')!;
    await one.destroy('sess_k8s_a');
    expect(fake.pods(NS).some((p) => p.metadata.name === pod)).toBe(false);
    expect(await blobSnapshots(() => blobs).open('sess_k8s_a')).toBeNull();
    expect(await one.get('sess_k8s_a')).toBeNull();
  });
});
