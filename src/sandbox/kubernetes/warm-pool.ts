// The warm pool: ready, unassigned sandbox pods of the default shape, labelled
// `agent-service/state=warm`. A session claims one with a JSON Patch whose first operation
// tests that the pod is still warm: the API server applies it atomically, so of several API
// processes racing for one pod exactly one wins (the others get 409/422 and try the next pod).
// A background loop keeps the pool at its size (several processes may briefly overshoot; the
// surplus is trimmed) and removes warm pods that died.
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { ANNOTATION, LABEL } from './pod-spec.js';
import type { KubernetesSettings, Shape } from './settings.js';
import { apiStatus, isReady, podGone } from './pod-state.js';

const REFILL_INTERVAL_MS = 5_000;
const esc = (label: string) => label.replace('~', '~0').replaceAll('/', '~1');

export interface WarmPool {
  readonly id: string;
  readonly shape: Shape;
  /** A warm pod now the session's, or null when none is ready. */
  claim(sessionId: string, annotations: Record<string, string>): Promise<V1Pod | null>;
  /** Brings the pool to its size now (also runs in the background). */
  refill(): Promise<void>;
  /** Resolves once `n` warm pods are ready (tests, benchmarks). */
  ready(n?: number, timeoutMs?: number): Promise<void>;
  stop(): void;
}

export function createWarmPool(opts: {
  api: CoreV1Api;
  settings: KubernetesSettings;
  shape: Shape;
  id: string;
  pod: () => V1Pod;
  onError: (err: unknown, what: string) => void;
}): WarmPool {
  const { api, settings } = opts;
  const selector = `${LABEL.pool}=${opts.id},${LABEL.state}=warm`;
  let timer: NodeJS.Timeout | undefined;
  let refilling: Promise<void> | null = null;
  let stopped = false;
  // The warm pods seen by the last listing: a claim tries them first (one PATCH, no list);
  // stale entries (claimed by another process, gone) just fail their test and are skipped.
  let known: V1Pod[] = [];

  const warmPods = async () => {
    const items = (await api.listNamespacedPod({ namespace: settings.namespace, labelSelector: selector })).items;
    known = items.filter((p) => isReady(p));
    return items;
  };

  /** Takes `pod` for the session if it is still warm; null when another process got it first or it went away. */
  const tryClaim = async (pod: V1Pod, sessionId: string, annotations: Record<string, string>): Promise<V1Pod | null> => {
    const name = pod.metadata!.name!;
    known = known.filter((p) => p.metadata!.name !== name);
    try {
      return await api.patchNamespacedPod({
        name,
        namespace: settings.namespace,
        body: [
          { op: 'test', path: `/metadata/labels/${esc(LABEL.state)}`, value: 'warm' },
          { op: 'replace', path: `/metadata/labels/${esc(LABEL.state)}`, value: 'claimed' },
          { op: 'add', path: `/metadata/labels/${esc(LABEL.session)}`, value: sessionId },
          ...Object.entries({ ...annotations, [ANNOTATION.session]: sessionId }).map(([k, v]) => ({
            op: 'add',
            path: `/metadata/annotations/${esc(k)}`,
            value: v,
          })),
        ],
      });
    } catch (err) {
      const code = apiStatus(err);
      if (code === 409 || code === 422 || code === 404) return null; // another process got it first, or it went away
      throw err;
    }
  };

  const shuffled = <T>(items: T[]): T[] => {
    // Different processes start at different pods: fewer lost races.
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };

  const refillOnce = async () => {
    const pods = await warmPods();
    const dead = pods.filter((p) => podGone(p));
    for (const p of dead)
      await api.deleteNamespacedPod({ name: p.metadata!.name!, namespace: settings.namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
    const alive = pods.filter((p) => !podGone(p));
    const missing = settings.warmPoolSize - alive.length;
    for (let i = 0; i < missing && !stopped; i++) await api.createNamespacedPod({ namespace: settings.namespace, body: opts.pod() });
    // Several processes refilling at once may overshoot: the newest surplus goes.
    if (missing < 0) {
      const surplus = alive.sort((a, b) => String(b.metadata?.creationTimestamp).localeCompare(String(a.metadata?.creationTimestamp))).slice(0, -missing);
      for (const p of surplus)
        await api.deleteNamespacedPod({ name: p.metadata!.name!, namespace: settings.namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
    }
  };

  const pool: WarmPool = {
    id: opts.id,
    shape: opts.shape,
    async claim(sessionId, annotations) {
      if (settings.warmPoolSize <= 0) return null;
      const refillSoon = () => void pool.refill().catch((err) => opts.onError(err, 'warm pool refill'));
      for (const candidate of shuffled(known)) {
        const claimed = await tryClaim(candidate, sessionId, annotations);
        if (claimed) {
          refillSoon();
          return claimed;
        }
      }
      for (const candidate of shuffled((await warmPods()).filter((p) => isReady(p)))) {
        const claimed = await tryClaim(candidate, sessionId, annotations);
        if (claimed) {
          refillSoon();
          return claimed;
        }
      }
      refillSoon();
      return null;
    },
    refill() {
      if (stopped) return Promise.resolve();
      refilling ??= refillOnce().finally(() => (refilling = null));
      return refilling;
    },
    async ready(n = settings.warmPoolSize, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while ((await warmPods()).filter((p) => isReady(p)).length < n) {
        if (Date.now() > deadline) throw new Error(`the warm pool did not reach ${n} ready pods in ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
  if (settings.warmPoolSize > 0) {
    timer = setInterval(() => void pool.refill().catch((err) => opts.onError(err, 'warm pool refill')), REFILL_INTERVAL_MS);
    timer.unref();
  }
  return pool;
}
