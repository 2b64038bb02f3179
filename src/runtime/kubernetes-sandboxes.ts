// SANDBOX_DRIVER=kubernetes: the Kubernetes driver wired to the rest of the service: the
// cluster from the kubeconfig (or the in-cluster service account), the egress CA and session
// variables from the egress service, workspace snapshots in the blob store, and what a lost pod
// means for the session (session.error pod_unavailable, then its resources and skills again).
import { environment } from '../config.js';
import { KubeConfig } from '@kubernetes/client-node';
import type { Sandbox, SandboxDriver } from '../sandbox/driver.js';
import { createKubernetesDriver, type KubernetesDriver } from '../sandbox/kubernetes/driver.js';
import { loadKubernetesSettings } from '../sandbox/kubernetes/settings.js';
import { blobSnapshots } from '../sandbox/kubernetes/snapshots.js';
import { ANNOTATION } from '../sandbox/kubernetes/pod-spec.js';
import type { EgressService } from '../egress/service.js';
import { blobStore } from '../blobs/blob-store.js';
import { prisma } from '../db/client.js';
import { commitEvent } from '../events/store.js';
import { sandboxFilling } from './sandbox-filling.js';
import { logger } from '../logger.js';

/** Where pods send their traffic: EGRESS_UPSTREAM (`host` or `host:port`), else the egress Service. */
export function egressUpstream(env: NodeJS.ProcessEnv, boundPort: number): string {
  const raw = env.EGRESS_UPSTREAM;
  if (raw) return /:\d+$/.test(raw) ? raw : `${raw}:${boundPort}`;
  return `agent-service-egress.${env.POD_NAMESPACE || 'agent-service'}.svc:3128`;
}

async function sessionError(sessionId: string, message: string, retry: 'retrying' | 'exhausted'): Promise<void> {
  await commitEvent(sessionId, { type: 'session.error', fields: { error: { type: 'pod_unavailable', message, retry_status: retry } } });
}

/** A replacement pod gets what the snapshot may lack: resources not in it, skills when there was none. */
async function refill(sessionId: string, sandbox: Sandbox, restored: boolean): Promise<void> {
  const resources = await prisma.sessionResource.findMany({ where: { sessionId } });
  const missing: string[] = [];
  for (const r of resources) if (!restored || !(await sandbox.stat(r.mountPath))) missing.push(r.id);
  if (missing.length) await prisma.sessionResource.updateMany({ where: { id: { in: missing } }, data: { syncedAt: null } });
  await sandboxFilling().syncResources(sessionId, sandbox);
  if (!restored) await sandboxFilling().materializeSkills(sessionId, sandbox);
}

let current: KubernetesDriver | null = null;
/** The running Kubernetes driver (its warm pool and pods: tests, benchmarks), or null. */
export function kubernetesDriver(): KubernetesDriver | null {
  return current;
}

export async function startKubernetesSandboxes(opts: {
  egress: EgressService;
  egressPort: number;
  ownerId: string;
}): Promise<{ driver: SandboxDriver; stop(): Promise<void> }> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  const settings = loadKubernetesSettings();
  const driver = createKubernetesDriver({
    kubeConfig,
    settings,
    egress: { env: (id, endpoint, caDir) => opts.egress.env(id, endpoint, caDir), caPem: opts.egress.ca.certPem },
    egressUpstream: egressUpstream(environment(), opts.egressPort),
    instanceId: opts.ownerId,
    snapshots: blobSnapshots(blobStore),
    logger,
    hooks: {
      async annotations(sessionId) {
        const s = await prisma.session.findUnique({ where: { id: sessionId }, select: { universeId: true, agentId: true } });
        return s ? { [ANNOTATION.universe]: s.universeId, ...(s.agentId ? { [ANNOTATION.agent]: s.agentId } : {}) } : {};
      },
      podLost: (sessionId, message) => sessionError(sessionId, message, 'retrying'),
      podReplaced: refill,
      replaceFailed: (sessionId, message) => sessionError(sessionId, message, 'exhausted'),
    },
  });
  current = driver;
  void driver.pool.refill().catch((err) => logger.warn({ err }, 'warm pool: first fill failed'));
  logger.info({ namespace: settings.namespace, image: settings.image, warmPool: settings.warmPoolSize }, 'kubernetes sandboxes');
  return {
    driver,
    stop: async () => {
      if (current === driver) current = null;
      await driver.close();
    },
  };
}
