// Settings of the Kubernetes sandbox driver (SANDBOX_DRIVER=kubernetes), from the environment.
// The cluster itself comes from the kubeconfig (KUBECONFIG, ~/.kube/config) or, inside a
// cluster, the pod's service account (@kubernetes/client-node's loadFromDefault).
//
// K8S_NAMESPACE            namespace of the sandbox pods (default agent-sandboxes)
// SANDBOX_IMAGE            sandbox image (default agent-service-sandbox:latest; docker/sandbox.Dockerfile)
// SANDBOX_IMAGE_PULL_POLICY IfNotPresent (default), Always, Never
// K8S_WARM_POOL_SIZE       ready unassigned pods kept per API deployment (default 2; 0 = cold only)
// SANDBOX_DEFAULT_VCPUS    shape of a session that names none, and of warm pods (default 1)
// SANDBOX_DEFAULT_MEMORY_MB (default 2048)
// SANDBOX_MAX_VCPUS        larger requests are lowered to this (default 8)
// SANDBOX_MAX_MEMORY_MB    (default 16384)
// SANDBOX_CPU_REQUEST_RATIO CPU request = limit × this (default 0.25: pods may burst to the limit)
// SANDBOX_WORKSPACE_SIZE   sizeLimit of the /workspace emptyDir (default 10Gi)
// SANDBOX_RUN_AS_USER      uid (and gid) of the sandbox user (default 1000)
// K8S_RUNTIME_CLASS        runtimeClassName for sandbox pods (e.g. gvisor), unset by default
// K8S_POD_READY_TIMEOUT_MS how long a cold pod may take to be ready (default 120000)
// SANDBOX_SNAPSHOT_IDLE_MS workspace snapshot after this much quiet (default 2000)
// SANDBOX_SNAPSHOT_MAX_MB  larger workspaces are not snapshotted (default 512)
import { environment } from '../../config.js';
export interface KubernetesSettings {
  namespace: string;
  image: string;
  imagePullPolicy: string;
  warmPoolSize: number;
  defaultVcpus: number;
  defaultMemoryMb: number;
  maxVcpus: number;
  maxMemoryMb: number;
  cpuRequestRatio: number;
  workspaceSize: string;
  runAsUser: number;
  runtimeClass: string | null;
  readyTimeoutMs: number;
  snapshotIdleMs: number;
  snapshotMaxBytes: number;
}

function num(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return n;
}

export function loadKubernetesSettings(env: NodeJS.ProcessEnv = environment()): KubernetesSettings {
  return {
    namespace: env.K8S_NAMESPACE || 'agent-sandboxes',
    image: env.SANDBOX_IMAGE || 'agent-service-sandbox:latest',
    imagePullPolicy: env.SANDBOX_IMAGE_PULL_POLICY || 'IfNotPresent',
    warmPoolSize: Math.floor(num(env, 'K8S_WARM_POOL_SIZE', 2)),
    defaultVcpus: num(env, 'SANDBOX_DEFAULT_VCPUS', 1),
    defaultMemoryMb: Math.floor(num(env, 'SANDBOX_DEFAULT_MEMORY_MB', 2048)),
    maxVcpus: num(env, 'SANDBOX_MAX_VCPUS', 8),
    maxMemoryMb: Math.floor(num(env, 'SANDBOX_MAX_MEMORY_MB', 16384)),
    cpuRequestRatio: Math.min(1, num(env, 'SANDBOX_CPU_REQUEST_RATIO', 0.25)),
    workspaceSize: env.SANDBOX_WORKSPACE_SIZE || '10Gi',
    runAsUser: Math.floor(num(env, 'SANDBOX_RUN_AS_USER', 1000)),
    runtimeClass: env.K8S_RUNTIME_CLASS || null,
    readyTimeoutMs: num(env, 'K8S_POD_READY_TIMEOUT_MS', 120_000),
    snapshotIdleMs: num(env, 'SANDBOX_SNAPSHOT_IDLE_MS', 2000),
    snapshotMaxBytes: num(env, 'SANDBOX_SNAPSHOT_MAX_MB', 512) * 1024 * 1024,
  };
}

export interface Shape {
  vcpus: number;
  memoryMb: number;
}

/** A session's machine shape: its request, else the defaults, within the maxima. */
export function shapeOf(settings: KubernetesSettings, requested: { vcpus?: number | null; memoryMb?: number | null }): Shape {
  return {
    vcpus: Math.min(requested.vcpus ?? settings.defaultVcpus, settings.maxVcpus),
    memoryMb: Math.min(requested.memoryMb ?? settings.defaultMemoryMb, settings.maxMemoryMb),
  };
}
