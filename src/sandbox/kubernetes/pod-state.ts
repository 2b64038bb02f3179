// Reading pods and API errors.
import type { V1Pod } from '@kubernetes/client-node';

/** The HTTP status of a client-node ApiException (or a Status-shaped error), else null. */
export function apiStatus(err: unknown): number | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : null;
}

export function isReady(pod: V1Pod): boolean {
  return pod.status?.phase === 'Running' && !pod.metadata?.deletionTimestamp && !!pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
}

/** A pod that will not run commands again. */
export function podGone(pod: V1Pod): boolean {
  const phase = pod.status?.phase;
  return !!pod.metadata?.deletionTimestamp || phase === 'Failed' || phase === 'Succeeded' || !!pod.status?.containerStatuses?.some((c) => c.state?.terminated);
}
