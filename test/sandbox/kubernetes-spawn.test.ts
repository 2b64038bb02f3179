// Streaming processes in a sandbox pod (what CLI engine turns run on with SANDBOX_DRIVER=kubernetes),
// against the fake API server whose pods are real jailed processes: stdout lines arrive while the
// process runs, stdin, the exit code, stderr's end kept; SIGTERM and SIGKILL reach the whole tree;
// a host directory (the engine cache) that the pod's image lacks is copied into the pod once and
// the process is given its path there.
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
import { POD_COPIES_DIR } from '../../src/sandbox/kubernetes/pod-mounts.js';
import { bwrapAvailable } from '../../src/sandbox/local.js';
import type { Sandbox, SandboxProcess } from '../../src/sandbox/driver.js';

const NS = 'sandboxes-spawn-test';

async function drain(p: SandboxProcess): Promise<string[]> {
  const out: string[] = [];
  for await (const l of p.lines) out.push(l);
  return out;
}

describe('kubernetes driver: streaming processes', () => {
  let fake: FakeKubernetes;
  let upstream: http.Server;
  let driver: KubernetesDriver;
  let sb: Sandbox;
  const hostDir = fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-mount-'));

  beforeAll(async () => {
    // The fake's pods are bubblewrap jails joined with nsenter: bwrap and root are required.
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
      instanceId: 'api-spawn',
      snapshots: null,
      logger: { warn: () => undefined, info: () => undefined },
    });
    sb = await driver.provision({ sessionId: 'sess_spawn' });
    fs.mkdirSync(path.join(hostDir, 'bin'));
    fs.writeFileSync(path.join(hostDir, 'bin/tool'), '#!/bin/sh\necho "tool ran from $(dirname "$0")"\n', { mode: 0o755 });
  }, 60_000);

  afterAll(async () => {
    await driver?.destroy('sess_spawn').catch(() => undefined);
    await driver?.close();
    await fake?.close();
    upstream?.close();
    fs.rmSync(hostDir, { recursive: true, force: true });
  });

  it('stdout lines arrive while the process runs; stdin, exit code, the session variables, stderr\'s end', async () => {
    const p = await sb.spawn!({ command: 'echo first; read x; echo "got $x in $(pwd) as $AGENT_SERVICE_TOKEN $EXTRA"; sleep 0.5; echo oops >&2; exit 4', stdin: 'input\n', env: { EXTRA: 'extra' } });
    const it = p.lines[Symbol.asyncIterator]();
    expect((await it.next()).value).toBe('first');
    let exitedYet = false;
    void p.exited.then(() => (exitedYet = true));
    expect((await it.next()).value).toBe('got input in /workspace as tok-sess_spawn extra');
    expect(exitedYet).toBe(false); // the line came while the process was still running
    expect((await it.next()).done).toBe(true);
    expect(await p.exited).toBe(4);
    expect(p.stderrTail()).toContain('oops');
  });

  it('a host directory the image lacks is copied into the pod once; argv and env get its path there', async () => {
    const inside = '/opt/engines/tool@1.0.0';
    const run = async () => {
      const p = await sb.spawn!({ argv: [`${inside}/bin/tool`], mounts: [{ host: hostDir, inside }] });
      return { lines: await drain(p), code: await p.exited };
    };
    expect(await run()).toEqual({ lines: [`tool ran from ${POD_COPIES_DIR}${inside}/bin`], code: 0 });
    const env = await sb.spawn!({ command: 'echo "$TOOL"', env: { TOOL: `${inside}/bin/tool` }, mounts: [{ host: hostDir, inside }] });
    expect(await drain(env)).toEqual([`${POD_COPIES_DIR}${inside}/bin/tool`]);
    expect((await sb.exec(`ls ${POD_COPIES_DIR}/opt/engines`)).stdout.trim()).toBe('tool@1.0.0');
  });

  it('SIGTERM ends the whole tree; SIGKILL ends a process that ignores SIGTERM', async () => {
    const term = await sb.spawn!({ command: 'echo up; sleep 100.7 & sleep 100.7; wait' });
    const lines = term.lines[Symbol.asyncIterator]();
    expect((await lines.next()).value).toBe('up');
    term.kill('SIGTERM');
    // The exec ends only once every holder of its stdout is gone: the background sleep included.
    await term.exited;
    expect((await sb.exec('ps -eo args | grep -c "^sleep 100.7"')).stdout.trim()).toBe('0');

    const stubborn = await sb.spawn!({ command: "trap '' TERM; echo up; sleep 100.8 & sleep 100.8; wait" });
    expect((await stubborn.lines[Symbol.asyncIterator]().next()).value).toBe('up');
    stubborn.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    stubborn.kill('SIGKILL');
    expect(await stubborn.exited).toBeNull();
    expect((await sb.exec('ps -eo args | grep -c "^sleep 100.8"')).stdout.trim()).toBe('0');
  });
});
