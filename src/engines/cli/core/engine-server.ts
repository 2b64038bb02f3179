// A CLI engine's own HTTP server kept running in a session's sandbox (opencode's `serve`,
// OpenClaw's Gateway), so a turn is a request to a process that has already booted instead of a
// new CLI process (which costs opencode seconds, OpenClaw ~15 s, of start-up before the first
// model call). A turn may also read what the server prints (OpenClaw's events plugin: output()).
// The server runs under the engine bridge (src/sandbox/assets/engine-bridge.mjs), which makes its
// loopback port reachable from the host as a Unix socket in the session's storage; the service
// speaks HTTP over it.
// One server per sandbox, started on a turn's demand and killed with the sandbox, or once no
// turn has used it for ENGINE_SERVER_IDLE_MS (default 5 min: an idle opencode server holds
// ~600 MB); one that exited is started again by the next turn (its conversation is on disk).
import { settings } from '../../../config.js';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import fsp from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import readline from 'node:readline';
import os from 'node:os';
import crypto from 'node:crypto';
import type { Sandbox, SandboxMount, SandboxProcess } from '../../../sandbox/driver.js';

const BRIDGE_SCRIPT = fileURLToPath(new URL('../../../sandbox/assets/engine-bridge.mjs', import.meta.url));
/** Where the bridge and the Node that runs it are seen inside the sandbox. */
const BRIDGE_DIR = '/run/agent-service-bridge';
/**
 * How long a server may take to say it listens. OpenClaw's Gateway needs ≈ 9 s on an idle core,
 * but started again where one was killed it took 30–60 s, and over a minute on a loaded CI
 * machine (cause not found; docs/engines.md, "Known issue"): a slow start is waited for, only a hung one fails.
 */
const START_TIMEOUT_MS = 180_000;
const MAX_SOCKET_PATH = 100;
/** How long the liveness probe of a running server's socket may take. */
const REACHABLE_TIMEOUT_MS = 2000;

export interface EngineServerSpec {
  /** What identifies a compatible running server (engine, version): another key restarts it. */
  key: string;
  /**
   * The server's command line inside the sandbox: it prints `http://127.0.0.1:<port>` once it
   * listens, or an argument `{{port}}` lets the bridge choose the port (engine-bridge.mjs).
   */
  argv: string[];
  env: Record<string, string>;
  mounts: SandboxMount[];
  /** The Unix socket's path inside the sandbox, under /workspace (the host reaches it there). */
  socket: string;
}

export interface EngineServer {
  readonly key: string;
  readonly process: SandboxProcess;
  /** JSON request over the socket; rejects on a status ≥ 400 with the server's words. */
  request<T>(method: string, urlPath: string, body?: unknown, signal?: AbortSignal): Promise<T>;
  /** An open stream of the server's server-sent events (each `data:` as parsed JSON); close() ends it. */
  events(urlPath: string, request?: StreamRequest): Promise<EventStream>;
  /** Calls `listener` with each line the server prints on stdout from now on; returns the unsubscribe. */
  output(listener: (line: string) => void): () => void;
  /** Calls `listener` once the server has exited (a turn on it ends then); returns the unsubscribe. */
  onExit(listener: (code: number | null) => void): () => void;
  readonly alive: boolean;
  /** Whether its socket takes a connection now (a server that just died may not be known as exited yet). */
  reachable(): Promise<boolean>;
  /** Keeps the server from its idle stop until the returned release is called (a turn, a spare). */
  use(): () => void;
}

/** A request whose answer is a stream of server-sent events (default: GET). */
export interface StreamRequest {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface EventStream {
  events: AsyncIterable<unknown>;
  close(): void;
}

const DEFAULT_IDLE_MS = 5 * 60 * 1000;
const idleMs = () => settings.engineServerIdleMs(DEFAULT_IDLE_MS);
/**
 * How long a request waits for the server's answer (a stream: its headers; both engines answer
 * at once and stream the work after). A server that takes connections but answers nothing (hung,
 * stopped) fails the request and is stopped, so that the next turn starts a new one.
 */
const DEFAULT_ANSWER_MS = 60_000;
const answerMs = () => settings.engineServerAnswerMs(DEFAULT_ANSWER_MS);

const servers = new Map<string, Promise<EngineServer>>();

/** The sandbox's running server for `spec.key`, started (and awaited until it listens) when there is none. */
export function engineServer(sandbox: Sandbox, spec: EngineServerSpec, signal?: AbortSignal): Promise<EngineServer> {
  const id = sandbox.sessionId;
  const current = servers.get(id);
  if (current) {
    // Only the first caller to find the entry stale replaces it; the others take its replacement.
    const replace = () => {
      if (servers.get(id) === current) servers.delete(id);
      return engineServer(sandbox, spec, signal);
    };
    return current.then(async (s) => {
      if (s.alive && s.key === spec.key && (await s.reachable())) return s;
      if (s.alive && servers.get(id) === current) s.process.kill('SIGKILL');
      return replace();
    }, replace);
  }
  const starting = startServer(sandbox, spec, signal);
  servers.set(id, starting);
  const forget = () => servers.get(id) === starting && servers.delete(id);
  starting.then((s) => s.process.exited.then(forget), forget);
  return starting;
}

/** Keeps the session's running server from its idle stop (see use()); null when it has none. */
export async function holdEngineServer(sessionId: string): Promise<(() => void) | null> {
  const server = await servers.get(sessionId)?.catch(() => null);
  return server?.alive ? server.use() : null;
}

/** Stops every server this process runs (the service is stopping; the next turn starts one again). */
export async function stopEngineServers(): Promise<void> {
  const all = [...servers.values()];
  servers.clear();
  await Promise.all(
    all.map(async (starting) => {
      const server = await starting.catch(() => null);
      if (!server?.alive) return;
      server.process.kill('SIGKILL');
      await server.process.exited.catch(() => null);
    }),
  );
}

async function startServer(sandbox: Sandbox, spec: EngineServerSpec, signal?: AbortSignal): Promise<EngineServer> {
  if (!sandbox.spawn || !sandbox.hostWorkspace) throw new Error('this sandbox cannot keep an engine server');
  if (!spec.socket.startsWith('/workspace/')) throw new Error(`the engine server's socket must be under /workspace: ${spec.socket}`);
  const hostSocket = path.join(sandbox.hostWorkspace, spec.socket.slice('/workspace/'.length));
  await fsp.mkdir(path.dirname(hostSocket), { recursive: true });
  await fsp.rm(hostSocket, { force: true });
  const connectPath = await reachablePath(hostSocket, sandbox.sessionId);
  const proc = await sandbox.spawn({
    argv: [`${BRIDGE_DIR}/node`, `${BRIDGE_DIR}/engine-bridge.mjs`, spec.socket, ...spec.argv],
    env: spec.env,
    mounts: [...spec.mounts, { host: process.execPath, inside: `${BRIDGE_DIR}/node` }, { host: BRIDGE_SCRIPT, inside: `${BRIDGE_DIR}/engine-bridge.mjs` }],
    signal,
  });
  let alive = true;
  let users = 0;
  let idleTimer: NodeJS.Timeout | undefined;
  const exitListeners = new Set<(code: number | null) => void>();
  void proc.exited.then((code) => {
    alive = false;
    clearTimeout(idleTimer);
    for (const listener of exitListeners) listener(code);
    exitListeners.clear();
    if (connectPath !== hostSocket) void fsp.rm(connectPath, { force: true });
  });
  const idle = () => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      if (users === 0 && alive) proc.kill('SIGKILL');
    }, idleMs());
    idleTimer.unref();
  };
  const listeners = new Set<(line: string) => void>();
  try {
    await untilReady(proc, listeners, signal);
  } catch (err) {
    proc.kill('SIGKILL');
    throw err;
  }
  idle();
  const unanswered = () => {
    if (alive) proc.kill('SIGKILL');
  };
  return {
    key: spec.key,
    process: proc,
    get alive() {
      return alive;
    },
    use() {
      users++;
      clearTimeout(idleTimer);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        if (--users === 0) idle();
      };
    },
    reachable: () =>
      new Promise<boolean>((resolve) => {
        const probe = net.connect({ path: connectPath });
        // A socket that neither takes nor refuses the connection soon counts as gone.
        probe.setTimeout(REACHABLE_TIMEOUT_MS, () => {
          probe.destroy();
          resolve(false);
        });
        probe.once('connect', () => {
          probe.destroy();
          resolve(true);
        });
        probe.once('error', () => resolve(false));
      }),
    request: (method, urlPath, body, reqSignal) => requestJson(connectPath, method, urlPath, body, reqSignal, unanswered),
    events: (urlPath, request) => openEvents(connectPath, urlPath, request ?? {}, unanswered),
    output(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onExit(listener) {
      if (!alive) {
        void proc.exited.then(listener);
        return () => {};
      }
      exitListeners.add(listener);
      return () => exitListeners.delete(listener);
    },
  };
}

/** A socket path fits in 107 bytes: a deep one is reached through a short link in the temporary directory. */
async function reachablePath(hostSocket: string, sessionId: string): Promise<string> {
  if (Buffer.byteLength(hostSocket) <= MAX_SOCKET_PATH) return hostSocket;
  const dir = path.join(os.tmpdir(), `agent-engine-${process.getuid?.() ?? 0}`);
  await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  const tag = crypto.createHash('sha256').update(hostSocket).digest('hex').slice(0, 12);
  const link = path.join(dir, `${sessionId.slice(0, 40)}-${tag}.sock`);
  await fsp.rm(link, { force: true });
  await fsp.symlink(hostSocket, link);
  return link;
}

/** Reads the bridge's output until its ready line; the rest goes to the listeners (drained when there are none). */
async function untilReady(proc: SandboxProcess, listeners: Set<(line: string) => void>, signal?: AbortSignal): Promise<void> {
  const timeout = AbortSignal.timeout(START_TIMEOUT_MS);
  const stop = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const lines = proc.lines[Symbol.asyncIterator]();
  const failed = (why: string) => new Error(`${why}${proc.stderrTail().trim() ? `: ${proc.stderrTail().trim().split('\n').slice(-10).join('\n')}` : ''}`);
  const aborted = new Promise<never>((_, reject) => {
    const onAbort = () =>
      reject(
        stop === signal || signal?.aborted
          ? Object.assign(new Error('aborted'), { name: 'AbortError' })
          : failed(`the engine server did not listen within ${START_TIMEOUT_MS / 1000} s`),
      );
    if (stop.aborted) onAbort();
    else stop.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => undefined);
  for (;;) {
    const next = await Promise.race([lines.next(), aborted]);
    if (next.done) throw failed(`the engine server exited with code ${await proc.exited} before it listened`);
    if (next.value.startsWith('{"bridge":"ready"')) break;
  }
  // Keep reading its stdout so the server never blocks on a full pipe.
  void (async () => {
    for (;;) {
      const next = await lines.next();
      if (next.done) return;
      for (const listener of listeners) listener(next.value);
    }
  })().catch(() => undefined);
}

/** Fails `req` when no answer came within answerMs(), and tells the server's owner (it is stopped). */
function answerDeadline(req: http.ClientRequest, what: string, unanswered: () => void): NodeJS.Timeout {
  const ms = answerMs();
  const timer = setTimeout(() => {
    req.destroy(new Error(`${what}: the engine server answered nothing within ${ms / 1000} s; it is stopped and the next turn starts it again`));
    unanswered();
  }, ms);
  timer.unref();
  return timer;
}

function requestJson<T>(
  socketPath: string,
  method: string,
  urlPath: string,
  body: unknown,
  signal: AbortSignal | undefined,
  unanswered: () => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      {
        socketPath,
        method,
        path: urlPath,
        signal,
        headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          clearTimeout(deadline);
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 500) >= 400) return reject(new Error(`${method} ${urlPath}: ${res.statusCode} ${text.slice(0, 500)}`));
          try {
            resolve((text ? JSON.parse(text) : null) as T);
          } catch {
            resolve(text as T);
          }
        });
      },
    );
    const deadline = answerDeadline(req, `${method} ${urlPath}`, unanswered);
    req.on('error', (err) => {
      clearTimeout(deadline);
      reject(err);
    });
    req.end(payload);
  });
}

function openEvents(socketPath: string, urlPath: string, request: StreamRequest, unanswered: () => void): Promise<EventStream> {
  const method = request.method ?? 'GET';
  const payload = request.body === undefined ? undefined : JSON.stringify(request.body);
  const headers: Record<string, string | number> = { accept: 'text/event-stream', ...request.headers };
  if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  return new Promise((resolve, reject) => {
    let responded = false;
    const req = http.request({ socketPath, method, path: urlPath, headers }, (res) => {
      responded = true;
      clearTimeout(deadline);
      if ((res.statusCode ?? 500) >= 400) {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', () => undefined);
        res.on('end', () => reject(new Error(`${method} ${urlPath}: ${res.statusCode} ${Buffer.concat(chunks).toString('utf8').slice(0, 500)}`)));
        return;
      }
      res.on('error', () => undefined); // closed by close(): the reader below just ends
      async function* parse(): AsyncIterable<unknown> {
        let data: string[] = [];
        const rl = readline.createInterface({ input: res, crlfDelay: Infinity });
        rl.on('error', () => undefined); // the response's end by close() (readline passes its error on)
        for await (const line of rl) {
          if (line === '') {
            if (data.length) {
              const text = data.join('\n');
              data = [];
              try {
                yield JSON.parse(text);
              } catch {
                /* not JSON: not an event we read */
              }
            }
          } else if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5));
        }
      }
      resolve({ events: parse(), close: () => req.destroy() });
    });
    const deadline = answerDeadline(req, `${method} ${urlPath}`, unanswered);
    req.on('error', (err) => {
      clearTimeout(deadline);
      if (!responded) reject(err);
    });
    req.end(payload);
  });
}
