// The sandbox pod: one container whose main process is the egress forwarder (127.0.0.1:3128 →
// the API's egress port, the pod's only permitted destination), everything else arrives by exec.
// Locked down: non-root, read-only root filesystem, no privilege escalation, no capabilities,
// seccomp RuntimeDefault, no service-account token, no service links; writable places are
// emptyDir volumes (/workspace, /tmp, /run/agent-service). Resources from the session's shape.
import type { V1Pod } from '@kubernetes/client-node';
import type { KubernetesSettings, Shape } from './settings.js';

export const LABEL = {
  name: 'app.kubernetes.io/name',
  managedBy: 'app.kubernetes.io/managed-by',
  pool: 'agent-service/pool',
  state: 'agent-service/state',
  session: 'agent-service/session',
} as const;
export const ANNOTATION = {
  session: 'agent-service/session-id',
  universe: 'agent-service/universe-id',
  agent: 'agent-service/agent-id',
  claimedBy: 'agent-service/claimed-by',
  claimedAt: 'agent-service/claimed-at',
  shape: 'agent-service/shape',
} as const;

export const CONTAINER = 'sandbox';
const AGENT_DIR = '/run/agent-service';

// Writes the egress CA files the sandbox trusts, then forwards 127.0.0.1:3128 to the upstream
// (host:port over the cluster network, or a Unix socket path).
const MAIN = `D=${AGENT_DIR}
printf '%s\\n' "$AGENT_SERVICE_CA" > $D/ca.crt
cat /etc/ssl/certs/ca-certificates.crt $D/ca.crt > $D/ca-bundle.crt 2>/dev/null || cp $D/ca.crt $D/ca-bundle.crt
case "$AGENT_SERVICE_EGRESS_UPSTREAM" in /*) up="UNIX-CONNECT:$AGENT_SERVICE_EGRESS_UPSTREAM";; *) up="TCP:$AGENT_SERVICE_EGRESS_UPSTREAM";; esac
exec socat TCP-LISTEN:3128,bind=127.0.0.1,reuseaddr,fork "$up"`;

/** `1.5` vCPUs → `1500m`. */
export const cpuQuantity = (vcpus: number) => `${Math.max(1, Math.round(vcpus * 1000))}m`;

/** The pool id of a shape and image: warm pods are only handed to sessions of that shape. */
export function poolId(settings: KubernetesSettings, shape: Shape): string {
  const image = settings.image
    .replace(/[^A-Za-z0-9.-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '')
    .slice(-40);
  return `${shape.vcpus * 1000}m-${shape.memoryMb}mi-${image}`.slice(0, 63).replace(/[^A-Za-z0-9]+$/, '');
}

export function sandboxPod(opts: {
  settings: KubernetesSettings;
  shape: Shape;
  egressUpstream: string;
  caPem: string;
  /** Warm pods: the pool; a cold pod made for a session: its labels and annotations already. */
  session?: { id: string; annotations: Record<string, string> };
}): V1Pod {
  const { settings, shape } = opts;
  const uid = settings.runAsUser;
  const labels: Record<string, string> = {
    [LABEL.name]: 'agent-sandbox',
    [LABEL.managedBy]: 'agent-service',
    [LABEL.pool]: poolId(settings, shape),
    [LABEL.state]: opts.session ? 'claimed' : 'warm',
    ...(opts.session ? { [LABEL.session]: opts.session.id } : {}),
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: 'agent-sandbox-',
      namespace: settings.namespace,
      labels,
      annotations: { [ANNOTATION.shape]: `${shape.vcpus} vCPU, ${shape.memoryMb} MiB`, ...(opts.session?.annotations ?? {}) },
    },
    spec: {
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 0,
      ...(settings.runtimeClass ? { runtimeClassName: settings.runtimeClass } : {}),
      securityContext: {
        runAsNonRoot: true,
        runAsUser: uid,
        runAsGroup: uid,
        fsGroup: uid,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: CONTAINER,
          image: settings.image,
          imagePullPolicy: settings.imagePullPolicy,
          command: ['/bin/sh', '-c', MAIN],
          workingDir: '/workspace',
          env: [
            { name: 'AGENT_SERVICE_EGRESS_UPSTREAM', value: opts.egressUpstream },
            { name: 'AGENT_SERVICE_CA', value: opts.caPem },
            { name: 'HOME', value: '/workspace' },
            { name: 'LANG', value: 'C.UTF-8' },
          ],
          resources: {
            requests: { cpu: cpuQuantity(shape.vcpus * settings.cpuRequestRatio), memory: `${shape.memoryMb}Mi` },
            limits: { cpu: cpuQuantity(shape.vcpus), memory: `${shape.memoryMb}Mi` },
          },
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            runAsNonRoot: true,
            runAsUser: uid,
            capabilities: { drop: ['ALL'] },
            seccompProfile: { type: 'RuntimeDefault' },
          },
          readinessProbe: { exec: { command: ['/bin/sh', '-c', "grep -q '0100007F:0C38 00000000:0000 0A' /proc/net/tcp"] }, periodSeconds: 1 },
          volumeMounts: [
            { name: 'workspace', mountPath: '/workspace' },
            { name: 'tmp', mountPath: '/tmp' },
            { name: 'agent', mountPath: AGENT_DIR },
          ],
        },
      ],
      volumes: [
        { name: 'workspace', emptyDir: { sizeLimit: settings.workspaceSize } },
        { name: 'tmp', emptyDir: {} },
        { name: 'agent', emptyDir: { medium: 'Memory', sizeLimit: '16Mi' } },
      ],
    },
  };
}
