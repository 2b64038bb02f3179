// A fake Kubernetes API server for tests: the real REST shapes for pods (list with label
// selectors, create with generateName, get, delete, JSON Patch and merge patch with
// resourceVersion, Status errors) and the real exec WebSocket protocol (v5.channel.k8s.io and
// v4: channel-prefixed binary frames, stdin close on v5, the Status document on channel 3).
// Its pods are real jailed processes on this machine (pod-runtime.ts).
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { startPod, type RunningPod } from './pod-runtime.js';

type Json = Record<string, unknown>;
interface Pod {
  apiVersion: 'v1';
  kind: 'Pod';
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
    creationTimestamp: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
    generateName?: string;
    deletionTimestamp?: string;
  };
  spec: Json;
  status: Json;
}

export interface FakeKubernetes {
  url: string;
  token: string;
  /** A kubeconfig file pointing at this server. */
  kubeconfig: string;
  pods(namespace?: string): Pod[];
  /** The container dies (as if OOM-killed or its node failed): processes gone, phase Failed. */
  killPod(name: string): void;
  /**
   * Host processes of a pod (its container and whatever was exec'd into it), with their argv and,
   * for those of an exec, the argv of the exec that started them (null: the container's own).
   */
  podProcesses(name: string): { pid: number; args: string; exec: string | null }[];
  /** Counts of requests by `METHOD kind` (e.g. `PATCH pod`). */
  requests: Map<string, number>;
  close(): Promise<void>;
}

function status(code: number, reason: string, message: string): Json {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

function send(res: http.ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

/** `a=b,c!=d,e,!f` as Kubernetes parses equality-based selectors. */
function selectorMatches(selector: string | null, labels: Record<string, string>): boolean {
  if (!selector) return true;
  return selector
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .every((term) => {
      let m: RegExpExecArray | null;
      if ((m = /^([^!=]+)!=(.*)$/.exec(term))) return labels[m[1]!] !== m[2];
      if ((m = /^([^!=]+)==?(.*)$/.exec(term))) return labels[m[1]!] === m[2];
      if (term.startsWith('!')) return !(term.slice(1) in labels);
      return term in labels;
    });
}

const pointer = (p: string) =>
  p
    .split('/')
    .slice(1)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));

/** RFC 6902 on a copy; throws a 422 Status on a failed `test`. */
function jsonPatch(doc: Json, ops: { op: string; path: string; value?: unknown }[]): Json {
  const out = structuredClone(doc);
  for (const op of ops) {
    const keys = pointer(op.path);
    const last = keys.pop()!;
    let parent: Json = out;
    for (const k of keys) {
      if (typeof parent[k] !== 'object' || parent[k] === null) {
        if (op.op === 'add') parent[k] = {};
        else throw status(422, 'Invalid', `the path ${op.path} does not exist`);
      }
      parent = parent[k] as Json;
    }
    if (op.op === 'test') {
      if (JSON.stringify(parent[last]) !== JSON.stringify(op.value))
        throw status(422, 'Invalid', `the server rejected our request due to an error in our request: testing value ${op.path} failed`);
    } else if (op.op === 'add' || op.op === 'replace') {
      if (op.op === 'replace' && !(last in parent)) throw status(422, 'Invalid', `the path ${op.path} does not exist`);
      parent[last] = op.value;
    } else if (op.op === 'remove') delete parent[last];
    else throw status(422, 'Invalid', `unsupported op ${op.op}`);
  }
  return out;
}

function mergePatch(doc: Json, patch: Json): Json {
  const out = structuredClone(doc);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (typeof v === 'object' && !Array.isArray(v) && typeof out[k] === 'object' && out[k] !== null) out[k] = mergePatch(out[k] as Json, v as Json);
    else out[k] = v;
  }
  return out;
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

/**
 * `image`: directories the sandbox image has beyond the host's system directories (path in the
 * pod → host directory, read-only), e.g. engines pre-installed under /opt/engines.
 */
export async function startFakeKubernetes(opts: { coldStartMs?: number; image?: Record<string, string> } = {}): Promise<FakeKubernetes> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-k8s-'));
  const token = `fake-token-${process.pid}`;
  const pods = new Map<string, Pod>();
  const runtimes = new Map<string, RunningPod>();
  const sockets = new Map<string, Set<WebSocket>>();
  const requests = new Map<string, number>();
  let rv = 1000;
  let seq = 0;
  const key = (ns: string, name: string) => `${ns}/${name}`;
  const touch = (pod: Pod) => (pod.metadata.resourceVersion = String(++rv));

  const markRunning = (pod: Pod, runtime: RunningPod) => {
    const now = new Date().toISOString();
    pod.status = {
      phase: 'Running',
      startTime: now,
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: now },
        { type: 'ContainersReady', status: 'True', lastTransitionTime: now },
      ],
      containerStatuses: [
        { name: 'sandbox', ready: true, started: true, restartCount: 0, image: 'fake', imageID: 'fake', state: { running: { startedAt: now } } },
      ],
    };
    touch(pod);
    void runtime.exited.then(() => {
      if (!pods.has(key(pod.metadata.namespace, pod.metadata.name))) return;
      pod.status = {
        ...pod.status,
        phase: 'Failed',
        conditions: [{ type: 'Ready', status: 'False' }],
        containerStatuses: [{ name: 'sandbox', ready: false, state: { terminated: { exitCode: 137, reason: 'Error' } } }],
      };
      touch(pod);
    });
  };

  const boot = async (pod: Pod) => {
    const spec = pod.spec as { containers: Json[]; securityContext?: Json };
    const c = spec.containers[0] as {
      command?: string[];
      args?: string[];
      env?: { name: string; value: string }[];
      workingDir?: string;
      volumeMounts?: { name: string; mountPath: string }[];
      resources?: { limits?: Record<string, string> };
      securityContext?: Json;
    };
    const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));
    const limits = c.resources?.limits ?? {};
    const cpu = limits.cpu ? (limits.cpu.endsWith('m') ? Number(limits.cpu.slice(0, -1)) / 1000 : Number(limits.cpu)) : null;
    const memoryMb = limits.memory ? Number(limits.memory.replace(/Mi$/, '')) : null;
    const runAsUser = Number((c.securityContext?.runAsUser ?? spec.securityContext?.runAsUser ?? 0) as number);
    if (opts.coldStartMs) await new Promise((r) => setTimeout(r, opts.coldStartMs));
    if (!pods.has(key(pod.metadata.namespace, pod.metadata.name))) return;
    const dir = path.join(root, pod.metadata.name);
    fs.mkdirSync(dir, { recursive: true });
    const runtime = await startPod({
      dir,
      container: {
        command: [...(c.command ?? []), ...(c.args ?? [])],
        env,
        workingDir: c.workingDir ?? '/',
        mounts: c.volumeMounts ?? [],
        runAsUser,
        cpu,
        memoryMb,
      },
      upstream: env.AGENT_SERVICE_EGRESS_UPSTREAM ?? null,
      image: opts.image,
    });
    runtimes.set(key(pod.metadata.namespace, pod.metadata.name), runtime);
    for (let i = 0; i < 500 && !runtime.ready(); i++) await new Promise((r) => setTimeout(r, 10));
    markRunning(pod, runtime);
  };

  const remove = (ns: string, name: string) => {
    const k = key(ns, name);
    runtimes.get(k)?.kill();
    runtimes.delete(k);
    for (const ws of sockets.get(k) ?? []) ws.terminate();
    sockets.delete(k);
    pods.delete(k);
    fs.rmSync(path.join(root, name), { recursive: true, force: true });
  };

  const server = http.createServer((req, res) => {
    void (async () => {
      if (req.headers.authorization !== `Bearer ${token}`) return send(res, 401, status(401, 'Unauthorized', 'Unauthorized'));
      const url = new URL(req.url ?? '/', 'http://fake');
      const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods(?:\/([^/]+))?$/.exec(url.pathname);
      if (!m) return send(res, 404, status(404, 'NotFound', `the server could not find the requested resource ${url.pathname}`));
      const [, ns, name] = m as unknown as [string, string, string | undefined];
      requests.set(`${req.method} ${name ? 'pod' : 'pods'}`, (requests.get(`${req.method} ${name ? 'pod' : 'pods'}`) ?? 0) + 1);
      if (!name && req.method === 'GET') {
        const selector = url.searchParams.get('labelSelector');
        const items = [...pods.values()].filter((p) => p.metadata.namespace === ns && selectorMatches(selector, p.metadata.labels));
        return send(res, 200, { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: String(rv) }, items });
      }
      if (!name && req.method === 'POST') {
        const body = JSON.parse(await readBody(req)) as { metadata?: Partial<Pod['metadata']>; spec: Json };
        const podName = body.metadata?.name ?? `${body.metadata?.generateName ?? 'pod-'}${(++seq).toString(36).padStart(5, '0')}`;
        if (pods.has(key(ns, podName))) return send(res, 409, status(409, 'AlreadyExists', `pods "${podName}" already exists`));
        const pod: Pod = {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: {
            ...body.metadata,
            name: podName,
            namespace: ns,
            uid: `uid-${seq}-${Date.now()}`,
            resourceVersion: String(++rv),
            creationTimestamp: new Date().toISOString(),
            labels: body.metadata?.labels ?? {},
            annotations: body.metadata?.annotations ?? {},
          },
          spec: body.spec,
          status: { phase: 'Pending' },
        };
        pods.set(key(ns, podName), pod);
        void boot(pod).catch((err) => {
          pod.status = { phase: 'Failed', message: String(err) };
          touch(pod);
        });
        return send(res, 201, pod);
      }
      const pod = name ? pods.get(key(ns, name)) : undefined;
      if (!pod) return send(res, 404, status(404, 'NotFound', `pods "${name}" not found`));
      if (req.method === 'GET') return send(res, 200, pod);
      if (req.method === 'DELETE') {
        remove(ns, name!);
        return send(res, 200, { ...pod, metadata: { ...pod.metadata, deletionTimestamp: new Date().toISOString() } });
      }
      if (req.method === 'PATCH') {
        const type = req.headers['content-type'] ?? '';
        const body = JSON.parse(await readBody(req));
        let next: Json;
        try {
          next = type.includes('json-patch') ? jsonPatch(pod as unknown as Json, body) : mergePatch(pod as unknown as Json, body);
        } catch (err) {
          return send(res, (err as { code?: number }).code ?? 500, err);
        }
        const meta = next.metadata as Pod['metadata'];
        if (meta.resourceVersion !== pod.metadata.resourceVersion)
          return send(res, 409, status(409, 'Conflict', 'the object has been modified; please apply your changes to the latest version and try again'));
        Object.assign(pod.metadata, { labels: meta.labels ?? {}, annotations: meta.annotations ?? {} });
        touch(pod);
        return send(res, 200, pod);
      }
      send(res, 405, status(405, 'MethodNotAllowed', 'method not allowed'));
    })().catch((err) => send(res, 500, status(500, 'InternalError', String(err))));
  });

  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => (offered.has('v5.channel.k8s.io') ? 'v5.channel.k8s.io' : offered.has('v4.channel.k8s.io') ? 'v4.channel.k8s.io' : false),
  });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/exec$/.exec(url.pathname);
    const fail = (code: number, text: string) =>
      socket.end(`HTTP/1.1 ${code} ${http.STATUS_CODES[code]}\r\ncontent-type: application/json\r\n\r\n${JSON.stringify(status(code, 'Failure', text))}`);
    if (req.headers.authorization !== `Bearer ${token}`) return fail(401, 'Unauthorized');
    if (!m) return fail(404, 'not found');
    const k = key(m[1]!, m[2]!);
    const runtime = runtimes.get(k);
    const pod = pods.get(k);
    if (!pod) return fail(404, `pods "${m[2]}" not found`);
    if (!runtime || pod.status.phase !== 'Running') return fail(400, `container sandbox is not valid for pod ${m[2]}`);
    const argv = url.searchParams.getAll('command');
    requests.set('EXEC pod', (requests.get('EXEC pod') ?? 0) + 1);
    wss.handleUpgrade(req, socket, head, (ws) => {
      let set = sockets.get(k);
      if (!set) sockets.set(k, (set = new Set()));
      set.add(ws);
      ws.on('close', () => set!.delete(ws));
      let child;
      try {
        child = runtime.exec(argv);
      } catch (err) {
        ws.send(Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify(status(500, 'InternalError', String(err))))]));
        return ws.close();
      }
      const out = (channel: number) => (chunk: Buffer) => ws.readyState === ws.OPEN && ws.send(Buffer.concat([Buffer.from([channel]), chunk]));
      child.stdout!.on('data', out(1));
      child.stderr!.on('data', out(2));
      child.stdin!.on('error', () => undefined);
      if (url.searchParams.get('stdin') !== 'true') child.stdin!.end();
      ws.on('message', (data: Buffer) => {
        if (data[0] === 0) child.stdin!.write(data.subarray(1));
        else if (data[0] === 255 && data[1] === 0) child.stdin!.end();
      });
      ws.on('close', () => {
        if (ws.protocol !== 'v5.channel.k8s.io') child.stdin!.end();
      });
      child.on('close', (code, signal) => {
        if (ws.readyState !== ws.OPEN) return;
        const exit = code ?? (signal ? 137 : 1);
        const doc =
          exit === 0
            ? { metadata: {}, status: 'Success' }
            : {
                metadata: {},
                status: 'Failure',
                message: `command terminated with non-zero exit code: error executing command ${JSON.stringify(argv)}, exit code ${exit}`,
                reason: 'NonZeroExitCode',
                details: { causes: [{ reason: 'ExitCode', message: String(exit) }] },
              };
        ws.send(Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify(doc))]));
        ws.close(1000);
      });
    });
  });

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeconfig = path.join(root, 'kubeconfig.yaml');
  fs.writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'current-context: fake',
      'clusters:',
      '- name: fake',
      '  cluster:',
      `    server: ${url}`,
      '    insecure-skip-tls-verify: true',
      'users:',
      '- name: fake',
      '  user:',
      `    token: ${token}`,
      'contexts:',
      '- name: fake',
      '  context:',
      '    cluster: fake',
      '    user: fake',
      '',
    ].join('\n'),
  );

  return {
    url,
    token,
    kubeconfig,
    requests,
    pods: (ns) => [...pods.values()].filter((p) => !ns || p.metadata.namespace === ns),
    podProcesses(name) {
      // A pod's processes are those that see its volumes (the jail binds them for each of them).
      // (mountinfo names a bind's source relative to its filesystem: /tmp may be its own.)
      const mark = `/${path.basename(root)}/${name}/volumes/`;
      const args = (pid: number) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      const parent = (pid: number) => {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8'); // "pid (comm) state ppid …"; comm may hold anything
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) || 0;
      };
      const roots = new Set([...runtimes].filter(([k]) => k.endsWith(`/${name}`)).flatMap(([, r]) => r.execPids()));
      const found: { pid: number; args: string; exec: string | null }[] = [];
      for (const entry of fs.readdirSync('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        try {
          if (!fs.readFileSync(`/proc/${entry}/mountinfo`, 'utf8').includes(mark)) continue;
          let root = Number(entry);
          while (root > 1 && !roots.has(root)) root = parent(root);
          found.push({ pid: Number(entry), args: args(Number(entry)), exec: roots.has(root) ? args(root) : null });
        } catch {
          /* gone meanwhile */
        }
      }
      return found;
    },
    killPod(name) {
      for (const [k, runtime] of runtimes) if (k.endsWith(`/${name}`)) runtime.kill();
    },
    async close() {
      for (const p of [...pods.values()]) remove(p.metadata.namespace, p.metadata.name);
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
