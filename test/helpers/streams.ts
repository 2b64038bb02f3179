// Session event streams read on a plain socket (node:http), for tests with many streams at once.
import http from 'node:http';

export interface StreamWatch {
  frames: { id: string; type: string; data: any }[];
  /** Resolves at the stream's `n`-th session.status_idle (the replayed ones count). */
  idles(n: number): Promise<void>;
  close(): void;
}

/** One session's SSE stream on a plain socket (node:http), every frame kept. */
export function watchStream(base: string, token: string, sessionId: string, headers: Record<string, string> = {}): Promise<StreamWatch> {
  const frames: StreamWatch['frames'] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const idleCount = () => frames.filter((f) => f.type === 'session.status_idle').length;
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}/sessions/${sessionId}/events/stream`, { headers: { authorization: `Bearer ${token}`, ...headers } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) !== -1) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const id = /^id: (.+)$/m.exec(frame)?.[1];
          const type = /^event: (.+)$/m.exec(frame)?.[1];
          const data = /^data: (.+)$/m.exec(frame)?.[1];
          if (id && type && data) frames.push({ id, type, data: JSON.parse(data) });
        }
        for (const w of [...waiters]) if (idleCount() >= w.n) waiters.splice(waiters.indexOf(w), 1), w.resolve();
      });
      res.on('error', () => undefined);
      resolve({
        frames,
        idles: (n) => (idleCount() >= n ? Promise.resolve() : new Promise((r) => waiters.push({ n, resolve: r }))),
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
  });
}

/** The history's ids as a stream shows them (the spec keeps user.message and system.message off the stream). */
export const streamedIds = (events: { id: string; type: string }[]) => events.filter((e) => !/^(user|system)\.message$/.test(e.type)).map((e) => e.id);
