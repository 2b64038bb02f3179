// The `kubernetes` sandbox driver: one pod per session, everything through the API server
// (create/list/patch/delete pods, exec over WebSocket). A session gets a warm pod of the default
// shape when one is ready (claimed atomically, see warm-pool.ts), else a pod made for it.
// Reattachment after a restart finds the pod by its session label. When the pod dies under a
// command, the session gets a new pod with the last workspace snapshot, is told so
// (hooks.podLost → session.error pod_unavailable, retrying) and the command runs again once.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import readline from 'node:readline';
import { PassThrough, Readable, Writable } from 'node:stream';
import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import {
  SandboxPathError,
  SandboxUnavailableError,
  WORKSPACE,
  type ExecOptions,
  type ExecResult,
  type FileStat,
  type Sandbox,
  type SandboxDriver,
  type SandboxEgress,
  type SandboxMount,
  type SandboxProcess,
  type SandboxSpec,
  type SpawnOptions,
} from '../driver.js';
import { DEFAULT_STDERR_TAIL, TailBuffer } from '../stream-process.js';
import { shQuote } from '../unshare-jail.js';
import { placeMounts, rewriteMounts } from './pod-mounts.js';
import { withEnvironmentPaths } from '../environment-mount.js';
import { relativeToWorkspace } from '../paths.js';
import { ANNOTATION, LABEL, poolId, sandboxPod } from './pod-spec.js';
import { apiStatus, isReady, podGone } from './pod-state.js';
import { podExec, PodExecError, type PodExecRequest, type PodExecResult } from './pod-exec.js';
import { FILE_EXIT, fileArgv, killArgv, readOnlyArgv, RESTORE_ARGV, runArgv, SNAPSHOT_ARGV, spawnArgv } from './pod-scripts.js';
import { shapeOf, type KubernetesSettings, type Shape } from './settings.js';
import { createWarmPool, type WarmPool } from './warm-pool.js';
import type { SnapshotStore } from './snapshots.js';

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_OUTPUT = 64 * 1024;
const MAX_FILE_BYTES = 256 * 1024 * 1024;
const KILLED = 137;

export interface KubernetesHooks {
  /** Owner annotations for a session's pod (universe, agent). */
  annotations?(sessionId: string): Promise<Record<string, string>>;
  /** The session's pod died under a command; a new one is being made. */
  podLost?(sessionId: string, message: string): Promise<void>;
  /** The new pod is ready (with the last snapshot when `restored`): give it what the session needs. */
  podReplaced?(sessionId: string, sandbox: Sandbox, restored: boolean): Promise<void>;
  /** No new pod could be made: the session's command cannot run. */
  replaceFailed?(sessionId: string, message: string): Promise<void>;
}

export interface KubernetesDriverOptions {
  kubeConfig: KubeConfig;
  settings: KubernetesSettings;
  egress: Pick<SandboxEgress, 'env'> & { caPem: string };
  /** host:port pods forward their traffic to (the API's egress listener). */
  egressUpstream: string;
  /** Written on claimed pods (which process claimed them). */
  instanceId: string;
  snapshots: SnapshotStore | null;
  hooks?: KubernetesHooks;
  logger: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

export interface KubernetesDriver extends SandboxDriver {
  readonly pool: WarmPool;
  /** The pod a session's sandbox is on now (tests, diagnostics). */
  podOf(sessionId: string): string | null;
  close(): Promise<void>;
}

const errno = (code: string, message: string) => Object.assign(new Error(message), { code });
const abortError = () => new DOMException('the process was not started: its start was given up', 'AbortError');

/** `p`'s value, or an AbortError as soon as `signal` aborts (`p` goes on). */
function untilAborted<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(abortError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError());
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function shapeOfPod(pod: V1Pod, fallback: Shape): Shape {
  const limits = pod.spec?.containers?.[0]?.resources?.limits ?? {};
  const cpu = limits.cpu ? (limits.cpu.endsWith('m') ? Number(limits.cpu.slice(0, -1)) / 1000 : Number(limits.cpu)) : fallback.vcpus;
  const mem = limits.memory ? Number(limits.memory.replace(/Mi$/, '')) : fallback.memoryMb;
  return { vcpus: cpu, memoryMb: Number.isFinite(mem) ? mem : fallback.memoryMb };
}

export function createKubernetesDriver(opts: KubernetesDriverOptions): KubernetesDriver {
  const { settings } = opts;
  const api = opts.kubeConfig.makeApiClient(CoreV1Api);
  const ns = settings.namespace;
  const defaultShape = shapeOf(settings, {});
  const sandboxes = new Map<string, PodSandbox>();
  const replacing = new Map<string, Promise<void>>();
  const log = opts.logger;

  const newPod = (shape: Shape, session?: { id: string; annotations: Record<string, string> }) =>
    sandboxPod({ settings, shape, egressUpstream: opts.egressUpstream, caPem: opts.egress.caPem, session });

  const pool = createWarmPool({
    api,
    settings,
    shape: defaultShape,
    id: poolId(settings, defaultShape),
    pod: () => newPod(defaultShape),
    onError: (err, what) => log.warn({ err }, `${what} failed`),
  });

  const exec = (req: Omit<PodExecRequest, 'namespace'>) => podExec(opts.kubeConfig, { namespace: ns, ...req });

  async function readPod(name: string): Promise<V1Pod | null> {
    try {
      return await api.readNamespacedPod({ name, namespace: ns });
    } catch (err) {
      if (apiStatus(err) === 404) return null;
      throw err;
    }
  }

  async function waitReady(name: string): Promise<V1Pod> {
    const deadline = Date.now() + settings.readyTimeoutMs;
    let delay = 50;
    for (;;) {
      const pod = await readPod(name);
      if (!pod) throw new Error(`sandbox pod ${name} disappeared while starting`);
      if (isReady(pod)) return pod;
      if (podGone(pod)) throw new Error(`sandbox pod ${name} failed to start (${pod.status?.phase ?? 'unknown'})`);
      if (Date.now() > deadline) throw new Error(`sandbox pod ${name} was not ready within ${settings.readyTimeoutMs} ms`);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 1000);
    }
  }

  async function sessionPods(sessionId: string): Promise<V1Pod[]> {
    return (await api.listNamespacedPod({ namespace: ns, labelSelector: `${LABEL.session}=${sessionId}` })).items;
  }

  async function annotationsFor(sessionId: string): Promise<Record<string, string>> {
    return {
      ...(await opts.hooks?.annotations?.(sessionId).catch(() => ({}))),
      [ANNOTATION.claimedBy]: opts.instanceId,
      [ANNOTATION.claimedAt]: new Date().toISOString(),
    };
  }

  /** A ready pod for the session: a warm one of its shape, else one made for it. */
  async function acquire(sessionId: string, shape: Shape, known?: Record<string, string>): Promise<V1Pod> {
    const annotations = known ?? (await annotationsFor(sessionId));
    if (shape.vcpus === defaultShape.vcpus && shape.memoryMb === defaultShape.memoryMb) {
      const warm = await pool.claim(sessionId, annotations);
      if (warm) return warm;
    }
    const created = await api.createNamespacedPod({
      namespace: ns,
      body: newPod(shape, { id: sessionId, annotations: { ...annotations, [ANNOTATION.session]: sessionId } }),
    });
    return waitReady(created.metadata!.name!);
  }

  /** Is the pod dead? A command ending with SIGKILL may just be the command; the pod decides. */
  async function podLost(name: string): Promise<boolean> {
    for (let i = 0; i < 5; i++) {
      const pod = await readPod(name).catch(() => undefined);
      if (pod === null) return true;
      if (pod && podGone(pod)) return true;
      if (pod && isReady(pod) && i >= 2) return false;
      await new Promise((r) => setTimeout(r, 200));
    }
    return false;
  }

  async function deletePod(name: string): Promise<void> {
    await api.deleteNamespacedPod({ name, namespace: ns, gracePeriodSeconds: 0 }).catch((err) => {
      if (apiStatus(err) !== 404) throw err;
    });
  }

  async function restore(sb: PodSandbox, opened?: Promise<NodeJS.ReadableStream | null>): Promise<boolean> {
    if (!opts.snapshots) return false;
    const stream = await (opened ?? opts.snapshots.open(sb.sessionId));
    if (!stream) return false;
    const r = await exec({ pod: sb.pod, argv: RESTORE_ARGV, stdin: Readable.from(stream as AsyncIterable<Buffer>), timeoutMs: 300_000 });
    if (r.exitCode !== 0) throw new Error(`restoring the workspace failed: ${r.stderr.text().trim()}`);
    return true;
  }

  async function snapshot(sb: PodSandbox): Promise<void> {
    if (!opts.snapshots) return;
    await opts.snapshots.save(
      sb.sessionId,
      async (out) => {
        const r = await exec({ pod: sb.pod, argv: SNAPSHOT_ARGV, stdoutTo: out, timeoutMs: 300_000 });
        // tar exits 1 when a file changed while it was read: the snapshot is still usable.
        if (r.exitCode !== 0 && r.exitCode !== 1) throw new Error(`workspace snapshot failed: ${r.stderr.text().trim()}`);
      },
      settings.snapshotMaxBytes,
    );
  }

  async function replace(sb: PodSandbox, why: string): Promise<void> {
    const old = sb.pod;
    try {
      await opts.hooks?.podLost?.(sb.sessionId, `the sandbox pod stopped (${why}); a new pod is starting with the workspace as last saved`);
      await deletePod(old).catch(() => undefined);
      const pod = await acquire(sb.sessionId, sb.shape);
      sb.pod = pod.metadata!.name!;
      const restored = await restore(sb);
      await opts.hooks?.podReplaced?.(sb.sessionId, sb, restored);
      log.info({ sessionId: sb.sessionId, from: old, to: sb.pod, restored }, 'sandbox pod replaced');
    } catch (err) {
      const message = `no new sandbox pod could be started: ${(err as Error).message}`;
      await opts.hooks?.replaceFailed?.(sb.sessionId, message).catch(() => undefined);
      throw new SandboxUnavailableError(message);
    }
  }

  class PodSandbox implements Sandbox {
    readonly hostWorkspace = null;
    readonly egressEndpoint = 'http://127.0.0.1:3128';
    private active = 0;
    private dirty = false;
    private timer: NodeJS.Timeout | undefined;
    closed = false;

    constructor(
      readonly sessionId: string,
      public pod: string,
      readonly shape: Shape,
      private readonly env: Record<string, string>,
      private readonly environment: SandboxSpec['environment'] = null,
    ) {}

    /**
     * `extra` with the session environment's search paths first. A pod cannot bind the API
     * host's prepared directory: it is copied into the current pod once (pod-mounts.ts).
     */
    private async withEnvironment(extra: Record<string, string>, signal?: AbortSignal): Promise<Record<string, string>> {
      const environment = this.environment;
      if (!environment) return extra;
      const placed = await this.place([{ host: environment.hostDir, inside: environment.inside }], signal);
      const prepend = Object.fromEntries(Object.entries(environment.prepend).map(([k, v]) => [k, rewriteMounts(v, placed)]));
      return withEnvironmentPaths({ ...environment, prepend }, extra);
    }

    /** Where each mount is in the current pod (pod name → expected path → its placement, shared while under way). */
    private mountsIn = new Map<string, Map<string, Promise<string>>>();

    /**
     * Where `mounts` are in the current pod, placing what is missing (once per pod: a placement
     * under way is shared). An abort stops the waiting, not the placement, which the next
     * process of this session will want.
     */
    private async place(mounts: SandboxMount[], signal?: AbortSignal): Promise<Map<string, string>> {
      const pod = this.pod;
      let known = this.mountsIn.get(pod);
      if (!known) this.mountsIn = new Map([[pod, (known = new Map())]]);
      const missing = mounts.filter((m) => !known.has(m.inside));
      if (missing.length) {
        const batch = placeMounts(exec, pod, missing);
        for (const m of missing) {
          const one = batch.then((placed) => placed.get(m.inside)!);
          one.catch(() => known.get(m.inside) === one && known.delete(m.inside)); // a failed copy is tried again next time
          known.set(m.inside, one);
        }
      }
      const all = Promise.all(mounts.map(async (m) => [m.inside, await known.get(m.inside)!] as const));
      return new Map(await untilAborted(all, signal));
    }

    /** Runs `op` on the current pod; if the pod died under it, on a new pod once more. */
    private async guarded<T>(op: () => Promise<PodExecResult>, finish: (r: PodExecResult) => T, mutates: boolean): Promise<T> {
      if (this.closed) throw new SandboxUnavailableError(`the sandbox of session ${this.sessionId} was destroyed`);
      this.active++;
      try {
        let result: PodExecResult;
        const pod = this.pod;
        try {
          result = await op();
          if ((result.broken || result.exitCode === KILLED) && (await podLost(pod))) throw new SandboxUnavailableError('pod lost');
        } catch (err) {
          if (!(err instanceof SandboxUnavailableError) && !(err instanceof PodExecError && (await podLost(pod)))) throw err;
          // One replacement per session at a time; an op that finds it already done just retries.
          if (this.pod === pod) {
            let pending = replacing.get(this.sessionId);
            if (!pending) {
              pending = replace(this, err instanceof PodExecError ? err.message : 'its container was killed').finally(() => replacing.delete(this.sessionId));
              replacing.set(this.sessionId, pending);
            }
            await pending;
          }
          result = await op();
        }
        if (mutates) this.dirty = true;
        return finish(result);
      } finally {
        this.active--;
        this.scheduleSnapshot();
      }
    }

    private scheduleSnapshot(): void {
      if (!opts.snapshots || !this.dirty || this.closed) return;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        if (this.active > 0 || !this.dirty || this.closed) return;
        this.dirty = false;
        snapshot(this).catch((err) => {
          this.dirty = true;
          log.warn({ err, sessionId: this.sessionId }, 'workspace snapshot failed');
        });
      }, settings.snapshotIdleMs);
      this.timer.unref();
    }

    /** Its files changed outside a command (a fork's copy): the next quiet moment snapshots them. */
    changed(): void {
      this.dirty = true;
      this.scheduleSnapshot();
    }

    stopTimers(): void {
      this.closed = true;
      clearTimeout(this.timer);
    }

    exec(command: string, o: ExecOptions = {}): Promise<ExecResult> {
      const rel = o.cwd ? relativeToWorkspace(o.cwd) : '';
      const cwd = rel ? `${WORKSPACE}/${rel}` : WORKSPACE;
      const id = randomBytes(8).toString('hex');
      return this.guarded(
        async () =>
          exec({
            pod: this.pod,
            argv: runArgv(
              id,
              cwd,
              command,
              await this.withEnvironment({ ...this.env, ...opts.egress.env(this.sessionId, 'http://127.0.0.1:3128', '/run/agent-service') }),
            ),
            stdin: o.stdin === undefined ? undefined : Buffer.from(o.stdin),
            maxOutputBytes: o.maxOutputBytes ?? DEFAULT_MAX_OUTPUT,
            timeoutMs: o.timeoutMs ?? DEFAULT_TIMEOUT_MS,
            signal: o.signal,
            killArgv: killArgv(id),
          }),
        (r) => ({
          exitCode: r.exitCode,
          stdout: r.stdout.text(),
          stderr: r.stderr.text(),
          timedOut: r.timedOut,
          aborted: r.aborted,
          truncated: r.stdout.truncated || r.stderr.truncated,
        }),
        true,
      );
    }

    async spawn(o: SpawnOptions): Promise<SandboxProcess> {
      if (this.closed) throw new SandboxUnavailableError(`the sandbox of session ${this.sessionId} was destroyed`);
      const rel = o.cwd ? relativeToWorkspace(o.cwd) : '';
      const cwd = rel ? `${WORKSPACE}/${rel}` : WORKSPACE;
      const pod = this.pod;
      const placed = await this.place(o.mounts ?? [], o.signal);
      const rewrite = (t: string) => rewriteMounts(t, placed);
      const command = rewrite(o.argv ? `exec ${o.argv.map(shQuote).join(' ')}` : (o.command ?? 'true'));
      const env = { ...this.env, ...opts.egress.env(this.sessionId, 'http://127.0.0.1:3128', '/run/agent-service') };
      for (const [k, v] of Object.entries(o.env ?? {})) env[k] = rewrite(v);
      Object.assign(env, await this.withEnvironment(env, o.signal));
      if (o.signal?.aborted) throw abortError();
      const id = randomBytes(8).toString('hex');
      const stdout = new PassThrough();
      const tail = new TailBuffer(o.stderrTailBytes ?? DEFAULT_STDERR_TAIL);
      const stderr = new Writable({
        write(chunk: Buffer, _enc, done) {
          tail.push(chunk);
          done();
        },
      });
      const kill = new AbortController();
      this.active++;
      const exited = exec({
        pod,
        argv: spawnArgv(id, cwd, command, env),
        stdin: Buffer.from(o.stdin ?? ''),
        stdoutTo: stdout,
        stderrTo: stderr,
        signal: kill.signal,
        killArgv: killArgv(id),
      })
        .then(
          (r) => r.exitCode,
          (err: Error) => {
            tail.push(Buffer.from(`${err.message}\n`));
            return null;
          },
        )
        .finally(() => {
          if (!stdout.writableEnded) stdout.end();
          this.active--;
          this.dirty = true;
          this.scheduleSnapshot();
        });
      return {
        lines: readline.createInterface({ input: stdout, crlfDelay: Infinity }),
        exited,
        kill: (signal) => {
          if (signal === 'SIGKILL') kill.abort();
          else void exec({ pod, argv: killArgv(id, 'TERM'), timeoutMs: 10_000 }).catch(() => undefined);
        },
        stderrTail: () => tail.text(),
      };
    }

    private file(op: 'read' | 'write' | 'stat' | 'remove' | 'untar', p: string, extra: { arg?: string; stdin?: Buffer | Readable; max?: number } = {}) {
      const rel = relativeToWorkspace(p);
      const path = rel ? `${WORKSPACE}/${rel}` : WORKSPACE;
      return this.guarded(
        () =>
          exec({
            pod: this.pod,
            argv: fileArgv(op, path, extra.arg ?? '', this.readOnly),
            stdin: extra.stdin,
            maxOutputBytes: extra.max ?? 4096,
            timeoutMs: 300_000,
          }),
        (r) => {
          if (r.exitCode === 0) return r;
          const why = r.stderr.text().trim();
          if (r.exitCode === FILE_EXIT.outside) throw new SandboxPathError(`path ${p} resolves outside ${WORKSPACE}`);
          if (r.exitCode === FILE_EXIT.missing) throw errno('ENOENT', `${p}: no such file`);
          if (r.exitCode === FILE_EXIT.directory) throw errno('EISDIR', `${p} is a directory`);
          if (r.exitCode === FILE_EXIT.irregular) throw errno('EINVAL', `${p} is not a regular file`);
          if (r.exitCode === FILE_EXIT.readOnly) throw errno('EROFS', `${p} is in a read-only directory`);
          throw new Error(`${op} ${p} failed in the sandbox pod${why ? `: ${why}` : ''}`);
        },
        op !== 'read' && op !== 'stat',
      );
    }

    async readFile(p: string, o: { maxBytes?: number } = {}): Promise<Buffer> {
      const max = o.maxBytes ?? MAX_FILE_BYTES;
      return (await this.file('read', p, { arg: o.maxBytes !== undefined ? String(max) : '', max })).stdout.bytes();
    }

    async writeFile(p: string, data: Buffer | string, o: { mode?: number; readOnly?: boolean } = {}): Promise<void> {
      if (!relativeToWorkspace(p)) throw errno('EISDIR', `${WORKSPACE} is a directory`);
      const mode = o.readOnly ? '444' : o.mode !== undefined ? o.mode.toString(8) : '';
      await this.file('write', p, { arg: mode, stdin: Buffer.from(data) });
    }

    async stat(p: string): Promise<FileStat | null> {
      const [kind, size] = (await this.file('stat', p)).stdout.text().trim().split(' ');
      if (kind === 'none') return null;
      return { size: Number(size) || 0, isFile: kind === 'file', isDirectory: kind === 'dir' };
    }

    async remove(p: string): Promise<void> {
      if (!relativeToWorkspace(p)) throw new SandboxPathError(`refusing to remove ${WORKSPACE} itself`);
      await this.file('remove', p);
    }

    /** Directories under /workspace read-only from now on (read_only memory mounts); see pod-scripts.ts. */
    private readOnly: string[] = [];

    /**
     * The pod's user loses the write bits there, and the driver's own writes and removals
     * (the file tools, from the service's side) are refused there, symbolic links resolved in the
     * pod. The pod's user owns the files and may chmod them back: the memory read-back refuses
     * what changes anyway.
     */
    async setReadOnlyPaths(paths: string[]): Promise<void> {
      const inside = paths.map((p) => `${WORKSPACE}/${relativeToWorkspace(p)}`);
      const previous = this.readOnly;
      await this.guarded(
        () => exec({ pod: this.pod, argv: readOnlyArgv(inside, previous), timeoutMs: 120_000 }),
        (r) => {
          if (r.exitCode !== 0) throw new Error(`making ${inside.join(', ')} read-only failed in the sandbox pod: ${r.stderr.text().trim()}`);
        },
        true,
      );
      this.readOnly = inside;
    }

    async importTree(hostDir: string, p: string): Promise<void> {
      if (!relativeToWorkspace(p)) throw new SandboxPathError(`refusing to replace ${WORKSPACE} itself`);
      // A fresh tar stream per attempt (the first may be cut short by a lost pod).
      // Piped at once: a child's stdout that nobody reads when it exits loses its data.
      const tarOf = () => spawn('tar', ['-c', '-C', hostDir, '.'], { stdio: ['ignore', 'pipe', 'ignore'] }).stdout.pipe(new PassThrough());
      const rel = relativeToWorkspace(p);
      await this.guarded(
        () => exec({ pod: this.pod, argv: fileArgv('untar', `${WORKSPACE}/${rel}`, '', this.readOnly), stdin: tarOf(), timeoutMs: 600_000 }),
        (r) => {
          if (r.exitCode !== 0) throw new Error(`copying into the sandbox pod failed: ${r.stderr.text().trim()}`);
        },
        true,
      );
    }
  }

  const attach = (sessionId: string, pod: V1Pod, shape: Shape, env: Record<string, string>, environment: SandboxSpec['environment'] = null) => {
    const sb = new PodSandbox(sessionId, pod.metadata!.name!, shape, env, environment);
    sandboxes.set(sessionId, sb);
    return sb;
  };

  const provisioning = new Map<string, Promise<PodSandbox>>();

  /** Reattaches to the session's ready pod (e.g. after a restart), or null. */
  const attachLive = async (sessionId: string): Promise<PodSandbox | null> => {
    const live = (await sessionPods(sessionId)).find((p) => isReady(p));
    return live ? attach(sessionId, live, shapeOfPod(live, defaultShape), {}) : null;
  };

  return {
    name: 'kubernetes',
    pool,
    podOf: (sessionId) => sandboxes.get(sessionId)?.pod ?? null,
    provision(spec: SandboxSpec) {
      const existing = sandboxes.get(spec.sessionId);
      if (existing) return Promise.resolve(existing);
      let pending = provisioning.get(spec.sessionId);
      if (!pending) {
        pending = (async () => {
          const shape = shapeOf(settings, spec);
          if (spec.vcpus && spec.vcpus > settings.maxVcpus)
            log.warn({ sessionId: spec.sessionId, asked: spec.vcpus, max: settings.maxVcpus }, 'vcpus lowered to SANDBOX_MAX_VCPUS');
          if (spec.memoryMb && spec.memoryMb > settings.maxMemoryMb)
            log.warn({ sessionId: spec.sessionId, asked: spec.memoryMb, max: settings.maxMemoryMb }, 'memoryMb lowered to SANDBOX_MAX_MEMORY_MB');
          // Idempotent: a pod the session already has (another process made it, or a restart).
          // The lookups a new pod needs run meanwhile: they decide the claim's latency.
          const [pods, annotations] = await Promise.all([sessionPods(spec.sessionId), annotationsFor(spec.sessionId)]);
          const live = pods.find((p) => !podGone(p));
          if (live)
            return attach(
              spec.sessionId,
              isReady(live) ? live : await waitReady(live.metadata!.name!),
              shapeOfPod(live, shape),
              spec.env ?? {},
              spec.environment ?? null,
            );
          const snapshot = opts.snapshots?.open(spec.sessionId);
          snapshot?.catch(() => undefined);
          let pod: V1Pod;
          try {
            pod = await acquire(spec.sessionId, shape, annotations);
          } catch (err) {
            void snapshot?.then((stream) => (stream as Readable | null)?.destroy());
            throw err;
          }
          const sb = attach(spec.sessionId, pod, shape, spec.env ?? {}, spec.environment ?? null);
          await restore(sb, snapshot);
          return sb;
        })().finally(() => provisioning.delete(spec.sessionId));
        provisioning.set(spec.sessionId, pending);
      }
      return pending;
    },
    async get(sessionId: string) {
      return sandboxes.get(sessionId) ?? (await attachLive(sessionId));
    },
    async copyWorkspace(fromSessionId: string, toSessionId: string) {
      const from = sandboxes.get(fromSessionId) ?? (await attachLive(fromSessionId));
      if (!from) return false;
      const takeTar = (out: PassThrough) =>
        exec({ pod: from.pod, argv: SNAPSHOT_ARGV, stdoutTo: out, timeoutMs: 300_000 }).then((r) => {
          // tar exits 1 when a file changed while it was read: the copy is still usable.
          if (r.exitCode !== 0 && r.exitCode !== 1) throw new Error(`reading the source workspace failed: ${r.stderr.text().trim()}`);
        });
      const to = sandboxes.get(toSessionId);
      if (!to) {
        // No pod yet: the source's tar becomes the fork's workspace snapshot, which provisioning
        // its pod restores (as after a lost pod).
        if (!opts.snapshots) throw new Error('copying a workspace into a session without a pod needs the snapshot store');
        await opts.snapshots.save(toSessionId, takeTar, settings.snapshotMaxBytes);
        return true;
      }
      // A pod already: the source pod's tar stream piped straight into it.
      const pipe = new PassThrough();
      const [, given] = await Promise.all([takeTar(pipe), exec({ pod: to.pod, argv: RESTORE_ARGV, stdin: pipe, timeoutMs: 300_000 })]);
      if (given.exitCode !== 0) throw new Error(`writing the fork's workspace failed: ${given.stderr.text().trim()}`);
      to.changed();
      return true;
    },
    async destroy(sessionId: string) {
      sandboxes.get(sessionId)?.stopTimers();
      sandboxes.delete(sessionId);
      for (const pod of await sessionPods(sessionId)) await deletePod(pod.metadata!.name!);
      await opts.snapshots?.remove(sessionId);
    },
    async close() {
      pool.stop();
      for (const sb of sandboxes.values()) sb.stopTimers();
      sandboxes.clear();
    },
  };
}
