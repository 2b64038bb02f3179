// The fake Kubernetes cluster as test files use it: what the host must offer (its pods are
// bubblewrap jails joined with nsenter), the Kubernetes driver wired to it directly (egress
// upstream a plain HTTP server), and the service's process variables for SANDBOX_DRIVER=kubernetes.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { startFakeKubernetes, type FakeKubernetes } from '../fake-kubernetes/server.js';
import { createKubernetesDriver, type KubernetesDriver } from '../../src/sandbox/kubernetes/driver.js';
import { loadKubernetesSettings } from '../../src/sandbox/kubernetes/settings.js';
import { bwrapAvailable } from '../../src/sandbox/local.js';

/** Can the fake cluster run its pods here (bubblewrap, and root for nsenter)? */
export const fakeClusterUsable = (): boolean => bwrapAvailable() && process.getuid?.() === 0;

/** Its absence is a failure that says what is missing. */
export function requireFakeCluster(): void {
  if (!bwrapAvailable()) throw new Error('bubblewrap is missing or cannot create namespaces here: apt-get install bubblewrap');
  if (process.getuid?.() !== 0) throw new Error('the fake Kubernetes API server joins pod namespaces with nsenter: run the tests as root');
}

export interface DriverOnFakeCluster {
  fake: FakeKubernetes;
  driver: KubernetesDriver;
  close(): Promise<void>;
}

/**
 * A fake cluster and a Kubernetes driver on it: no warm pool, no snapshots, the session
 * credential `tok-<session id>`, pod traffic to a server answering `egress`.
 */
export async function driverOnFakeCluster(opts: { namespace: string; instanceId: string; image?: Record<string, string> }): Promise<DriverOnFakeCluster> {
  requireFakeCluster();
  const fake = await startFakeKubernetes({ image: opts.image });
  const upstream = http.createServer((_req, res) => res.end('egress'));
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const kc = new KubeConfig();
  kc.loadFromFile(fake.kubeconfig);
  const driver = createKubernetesDriver({
    kubeConfig: kc,
    settings: loadKubernetesSettings({ K8S_NAMESPACE: opts.namespace, K8S_WARM_POOL_SIZE: '0', K8S_POD_READY_TIMEOUT_MS: '30000' }),
    egress: { env: (id) => ({ AGENT_SERVICE_TOKEN: `tok-${id}` }), caPem: '-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----' },
    egressUpstream: `127.0.0.1:${(upstream.address() as AddressInfo).port}`,
    instanceId: opts.instanceId,
    snapshots: null,
    logger: { warn: () => undefined, info: () => undefined },
  });
  return {
    fake,
    driver,
    async close() {
      await driver.close();
      await fake.close();
      upstream.close();
    },
  };
}

/** Sets process variables (the service reads its Kubernetes settings from them); returns the undo. */
export function setProcessEnv(vars: Record<string, string>): () => void {
  const saved: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(vars)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}
