// Child process of bench/sandboxes.ts: the service on SANDBOX_DRIVER=kubernetes against the fake
// API server; session create → idle while a warm pod is ready (one claim each), and once with a
// shape outside the pool (a cold pod). Prints one JSON line.
import { startFakeKubernetes } from '../test/fake-kubernetes/server.js';
import { startTestServer } from '../test/helpers/server.js';
import { kubernetesDriver } from '../src/runtime/kubernetes-sandboxes.js';
import { createToIdle } from './sandboxes.js';

const N = Number(process.env.BENCH_SANDBOX_SESSIONS || 20);
const k8s = await startFakeKubernetes();
Object.assign(process.env, {
  KUBECONFIG: k8s.kubeconfig,
  K8S_NAMESPACE: 'bench-sandboxes',
  K8S_WARM_POOL_SIZE: '3',
  EGRESS_LISTEN: '127.0.0.1:0',
  EGRESS_UPSTREAM: '127.0.0.1',
  LOG_LEVEL: 'warn',
});
const s = await startTestServer({ sandboxDriver: 'kubernetes' });
const pool = kubernetesDriver()!.pool;
await pool.ready(3, 120_000);
const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
const times: number[] = [];
for (let i = 0; i < N + 1; i++) {
  await pool.ready(1, 120_000);
  const { id, ms } = await createToIdle(s, agent.id);
  if (i > 0) times.push(ms); // the first is a warm-up
  await s.api('DELETE', `/sessions/${id}`);
}
// The driver's part alone: claiming a warm pod (list-free when the pool's last listing is fresh).
const claims: number[] = [];
for (let i = 0; i < N; i++) {
  await pool.ready(1, 120_000);
  const t = performance.now();
  await kubernetesDriver()!.provision({ sessionId: `bench_claim_${i}` });
  claims.push(performance.now() - t);
  await kubernetesDriver()!.destroy(`bench_claim_${i}`);
}
const cold = await createToIdle({ api: (m, p, o) => s.api(m, p, o && p === '/sessions' ? { ...o, body: { ...(o.body as object), vcpus: 2 } } : o) }, agent.id);
const sorted = [...times].sort((a, b) => a - b);
const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const claimSorted = claims.sort((a, b) => a - b);
console.log(JSON.stringify({ n: times.length, p50: at(50), p99: at(99), claimP50: claimSorted[Math.floor(claimSorted.length / 2)], podReady: cold.ms }));
await s.stop();
await k8s.close();
process.exit(0);
