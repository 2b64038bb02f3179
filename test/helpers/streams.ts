// Session event streams read on a plain socket (node:http), for tests with many streams at once.
import http from 'node:http';

export interface StreamWatch {
  frames: { id: string; type: string; data: any }[];
  /** Resolves at the stream's `n`-th session.status_idle (the replayed ones count). */
  idles(n: number): Promise<void>;
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
): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}/sessions/${sessionId}/events/stream`, { headers: { authorization: `Bearer ${token}`, ...headers } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`stream answered ${res.statusCode}`));
      }
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk: string) => {
        const at = performance.now();
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) !== -1) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
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
  const waiters: { n: number; resolve: () => void }[] = [];
  const idleCount = () => frames.filter((f) => f.type === 'session.status_idle').length;
  const close = await openSessionStream(
    base,
    token,
    sessionId,
    ({ id, type, data }) => {
      if (id && type && data) frames.push({ id, type, data: JSON.parse(data) });
      for (const w of [...waiters]) if (idleCount() >= w.n) waiters.splice(waiters.indexOf(w), 1), w.resolve();
    },
    headers,
  );
  return {
    frames,
    idles: (n) => (idleCount() >= n ? Promise.resolve() : new Promise((r) => waiters.push({ n, resolve: r }))),
    close,
  };
}

/** The history's ids as a stream shows them (the spec keeps user.message and system.message off the stream). */
export const streamedIds = (events: { id: string; type: string }[]) => events.filter((e) => !/^(user|system)\.message$/.test(e.type)).map((e) => e.id);
