// The many-sessions bench's client (bench/concurrency.ts): plain node:http with a keep-alive
// agent and raw SSE parsing, the same code against the service and against its limit
// (bench/concurrency-limit.ts), so neither side is measured through a different client.
import http from 'node:http';
import { openSessionStream } from '../test/helpers/streams.js';

export const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

export function call(base: string, token: string, method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  const data = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}${p}`,
      {
        method,
        agent,
        headers: { authorization: `Bearer ${token}`, ...(data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

export interface Watch {
  ids: string[];
  /** The turn's stop reason (from its session.status_idle) and the session.error frames seen. */
  stop: string | null;
  sessionErrors: number;
  running: Promise<number>;
  idle: Promise<number>;
  close: () => void;
}

/** One session's stream: every frame id kept (gap and duplicate checks), the turn's first and last frames timed. */
export async function watch(base: string, token: string, sessionId: string): Promise<Watch> {
  let onRunning: (t: number) => void = () => undefined;
  let onIdle: (t: number) => void = () => undefined;
  const running = new Promise<number>((r) => (onRunning = r));
  const idle = new Promise<number>((r) => (onIdle = r));
  const ids: string[] = [];
  const w = { stop: null as string | null, sessionErrors: 0 };
  const close = await openSessionStream(base, token, sessionId, ({ id, type, data }, at) => {
    if (id) ids.push(id);
    if (type === 'session.status_running') onRunning(at);
    if (type === 'session.error') w.sessionErrors++;
    if (type === 'session.status_idle' && ids.length > 1) {
      w.stop = (JSON.parse(data ?? '{}') as { stop_reason?: { type?: string } }).stop_reason?.type ?? '?';
      onIdle(at);
    }
  });
  return Object.assign(w, { ids, running, idle, close });
}
