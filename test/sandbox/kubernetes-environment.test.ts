// A session environment on the Kubernetes driver, against the fake API server whose pods are real
// jailed processes: the version prepared on the API host (a real npm install, cached like the
// local driver's) is copied into the pod once (pods cannot bind the host's directory), and
// commands — exec and streamed processes — find its programs and modules through the search
// paths, rewritten to where the copy is.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driverOnFakeCluster, type DriverOnFakeCluster } from '../helpers/fake-cluster.js';
import { prepareEnvironment } from '../../src/environments/install.js';
import { environmentMount } from '../../src/environments/install-layout.js';
import type { Sandbox } from '../../src/sandbox/driver.js';

const NS = 'sandboxes-environment-test';

describe('kubernetes driver: session environments', () => {
  let cluster: DriverOnFakeCluster;
  let sb: Sandbox;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-environments-'));

  beforeAll(async () => {
    cluster = await driverOnFakeCluster({ namespace: NS, instanceId: 'api-env' });
    const prepared = await prepareEnvironment({ root, environmentId: 'env_k8stest', version: 1, packages: { apt: [], npm: ['left-pad@1.3.0'], pip: [] } });
    expect(prepared.failures).toEqual([]);
    sb = await cluster.driver.provision({ sessionId: 'sess_k8senv', environment: environmentMount(prepared.dir) });
  }, 180_000);

  afterAll(async () => {
    await cluster?.driver.destroy('sess_k8senv').catch(() => undefined);
    await cluster?.close();
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
