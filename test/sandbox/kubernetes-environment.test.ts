// A session environment on the Kubernetes driver, against the fake API server whose pods are real
// jailed processes: the version prepared on the API host (a real npm install, cached like the
// local driver's) is copied into the pod once (pods cannot bind the host's directory), and
// commands — exec and streamed processes — find its programs and modules through the search
// paths, rewritten to where the copy is.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeKubernetes, type FakeKubernetes } from '../fake-kubernetes/server.js';
import { createKubernetesDriver, type KubernetesDriver } from '../../src/sandbox/kubernetes/driver.js';
import { loadKubernetesSettings } from '../../src/sandbox/kubernetes/settings.js';
import { bwrapAvailable } from '../../src/sandbox/local.js';
import { prepareEnvironment } from '../../src/environments/install.js';
import { environmentMount } from '../../src/environments/install-layout.js';
import type { Sandbox } from '../../src/sandbox/driver.js';

const NS = 'sandboxes-environment-test';

describe('kubernetes driver: session environments', () => {
  let fake: FakeKubernetes;
  let upstream: http.Server;
  let driver: KubernetesDriver;
  let sb: Sandbox;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-environments-'));

  beforeAll(async () => {
    if (!bwrapAvailable()) throw new Error('bubblewrap is missing or cannot create namespaces here: apt-get install bubblewrap');
    if (process.getuid?.() !== 0) throw new Error('the fake Kubernetes API server joins pod namespaces with nsenter: run the tests as root');
    fake = await startFakeKubernetes();
    upstream = http.createServer((_req, res) => res.end('egress'));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const kc = new KubeConfig();
    kc.loadFromFile(fake.kubeconfig);
    driver = createKubernetesDriver({
      kubeConfig: kc,
      settings: loadKubernetesSettings({ K8S_NAMESPACE: NS, K8S_WARM_POOL_SIZE: '0', K8S_POD_READY_TIMEOUT_MS: '30000' }),
      egress: { env: (id) => ({ AGENT_SERVICE_TOKEN: `tok-${id}` }), caPem: '-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----' },
      egressUpstream: `127.0.0.1:${(upstream.address() as AddressInfo).port}`,
      instanceId: 'api-env',
      snapshots: null,
      logger: { warn: () => undefined, info: () => undefined },
    });
    const prepared = await prepareEnvironment({ root, environmentId: 'env_k8stest', version: 1, packages: { apt: [], npm: ['left-pad@1.3.0'], pip: [] } });
    expect(prepared.failures).toEqual([]);
    sb = await driver.provision({ sessionId: 'sess_k8senv', environment: environmentMount(prepared.dir) });
  }, 180_000);

  afterAll(async () => {
    await driver?.destroy('sess_k8senv').catch(() => undefined);
    await driver?.close();
    await fake?.close();
    upstream?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('exec finds the npm package through NODE_PATH, the copy read from the pod', async () => {
    const r = await sb.exec(`node -e "process.stdout.write(require('left-pad')('k', 4, '*'))"; echo; echo "$NODE_PATH"`, { timeoutMs: 60_000 });
    expect(r.exitCode, r.stderr).toBe(0);
    const [padded, nodePath] = r.stdout.split('\n');
    expect(padded).toBe('***k');
    expect(nodePath).toMatch(/\/opt\/environment\/npm\/node_modules/);
    // Placed in the pod itself: the host's directory is not visible there.
    expect((await sb.exec(`test -e ${root} && echo host-visible || echo pod-only`)).stdout.trim()).toBe('pod-only');
  });

  it('streamed processes get the same search paths, with their own PATH kept after them', async () => {
    const p = await sb.spawn!({ command: 'echo "$PATH"; node -e "console.log(typeof require(\'left-pad\'))"', env: { PATH: '/custom/bin:/usr/bin:/bin' } });
    const lines: string[] = [];
    for await (const l of p.lines) lines.push(l);
    expect(await p.exited).toBe(0);
    expect(lines[0]).toMatch(/\/opt\/environment\/npm\/node_modules\/\.bin:.*:\/custom\/bin:\/usr\/bin:\/bin$/);
    expect(lines[1]).toBe('function');
  });
});
