// Session event streams read on a plain socket (node:http), for tests with many streams at once.
import http from 'node:http';

export interface StreamWatch {
  frames: { id: string; type: string; data: any }[];
  /**
   * Resolves at the stream's `n`-th session.status_idle (the replayed ones count); rejects after
   * `timeoutMs` (default 60 s), or when the server ends the stream first, saying what arrived.
   */
  idles(n: number, timeoutMs?: number): Promise<void>;
  close(): void;
}

/** One SSE frame's fields (the raw `data:` text). */
export interface SseFrame {
  id?: string;
  type?: string;
  data?: string;
}

/**
 * A session's SSE stream on a plain socket (node:http): `onFrame` gets each frame as it arrives,
 * with its arrival time (performance.now()). Rejects when the stream does not answer 200; the
 * answer closes it. Tests and benches with many streams at once share it.
 */
export function openSessionStream(
  base: string,
  token: string,
  sessionId: string,
  onFrame: (frame: SseFrame, at: number) => void,
  headers: Record<string, string> = {},
  onEnd?: (comments: string[]) => void,
): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}/sessions/${sessionId}/events/stream`, { headers: { authorization: `Bearer ${token}`, ...headers } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`stream answered ${res.statusCode}`));
      }
      res.setEncoding('utf8');
      let buf = '';
      const comments: string[] = []; // the server's `: …` lines (a reconnect hint says why it ended)
      res.on('end', () => onEnd?.(comments));
      res.on('data', (chunk: string) => {
        const at = performance.now();
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) !== -1) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          if (frame.startsWith(': ') && !frame.startsWith(': ping')) comments.push(frame.split('\n')[0]!);
          onFrame({ id: /^id: (.+)$/m.exec(frame)?.[1], type: /^event: (.+)$/m.exec(frame)?.[1], data: /^data: (.*)$/m.exec(frame)?.[1] }, at);
        }
      });
      res.on('error', () => undefined); // closed by the caller
      resolve(() => req.destroy());
    });
    req.on('error', reject);
  });
}

/** One session's SSE stream on a plain socket (node:http), every frame kept. */
export async function watchStream(base: string, token: string, sessionId: string, headers: Record<string, string> = {}): Promise<StreamWatch> {
  const frames: StreamWatch['frames'] = [];
  const waiters: { n: number; resolve: () => void; reject: (err: Error) => void }[] = [];
  const idleCount = () => frames.filter((f) => f.type === 'session.status_idle').length;
  let ended: string | null = null;
  const said = (n: number, why: string) =>
    new Error(`${sessionId}'s stream: ${why} before its idle #${n} (${frames.length} frames, ${idleCount()} idle, the last ${frames.at(-1)?.type ?? 'none'})`);
  const close = await openSessionStream(
    base,
    token,
    sessionId,
    ({ id, type, data }) => {
      if (id && type && data) frames.push({ id, type, data: JSON.parse(data) });
      for (const w of [...waiters]) if (idleCount() >= w.n) waiters.splice(waiters.indexOf(w), 1), w.resolve();
    },
    headers,
    (comments) => {
      ended = `ended by the server${comments.length ? ` (${comments.join('; ')})` : ''}`;
      for (const w of waiters.splice(0)) w.reject(said(w.n, ended));
    },
  );
  return {
    frames,
    idles: (n, timeoutMs = 60_000) => {
      if (idleCount() >= n) return Promise.resolve();
      if (ended) return Promise.reject(said(n, ended));
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(w), 1);
          reject(said(n, `not within ${timeoutMs} ms`));
        }, timeoutMs);
        const w = { n, resolve: () => (clearTimeout(timer), resolve()), reject: (err: Error) => (clearTimeout(timer), reject(err)) };
        waiters.push(w);
      });
    },
    close,
  };
}

/** The history's ids as a stream shows them (the spec keeps user.message and system.message off the stream). */
export const streamedIds = (events: { id: string; type: string }[]) => events.filter((e) => !/^(user|system)\.message$/.test(e.type)).map((e) => e.id);
