// Memory and file descriptors of the server process under two abusive loads: 5 parallel
// 30 MiB uploads, then 1,000 SSE connections opened and dropped. Targets: RSS back within
// 10 % of where it started (after GC), no file-descriptor growth. The server runs in this
// process (the bench's), so /proc/self/fd is the server's; the clients stream their bodies
// from one reused buffer, so they add almost nothing themselves, and each phase's client pool
// is closed at its end (kept-alive idle sockets are not what is measured).
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Agent, fetch } from 'undici';
import type { TestServer } from '../test/helpers/server.js';
import { openStreamCount } from '../src/http/open-streams.js';
import { watchedSessions } from '../src/events/hub.js';

const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rss = () => process.memoryUsage().rss;
const fds = () => fs.readdirSync('/proc/self/fd').length;
const mb = (n: number) => (n / MiB).toFixed(1);
const change = (from: number, to: number) => `${to >= from ? '+' : ''}${(((to - from) / from) * 100).toFixed(1)} %`;

/** Collects what can be collected and lets sockets finish closing. */
async function settle(): Promise<void> {
  for (let i = 0; i < 4; i++) {
    global.gc?.();
    await sleep(250);
  }
}

/** A multipart upload of `bytes` bytes, streamed (the body is never held in memory). */
async function upload(s: TestServer, dispatcher: Agent, bytes: number): Promise<void> {
  const boundary = `bench${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => c.enqueue(head),
    pull: (c) => {
      if (sent >= bytes) {
        c.enqueue(tail);
        c.close();
        return;
      }
      const n = Math.min(chunk.length, bytes - sent);
      c.enqueue(chunk.subarray(0, n));
      sent += n;
    },
  });
  const res = await fetch(`${s.base}/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.adminToken}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
    duplex: 'half',
    dispatcher,
  });
  const answer = await res.text();
  if (res.status !== 200) throw new Error(`upload answered ${res.status}: ${answer}`);
}

/** Opens `n` SSE streams on a session (waiting for their headers), then drops them all. */
async function abortedStreams(s: TestServer, dispatcher: Agent, sessionId: string, n: number): Promise<void> {
  const ctls = Array.from({ length: n }, () => new AbortController());
  await Promise.all(
    ctls.map(async (ctl) => {
      const res = await fetch(`${s.base}/sessions/${sessionId}/events/stream`, {
        headers: { authorization: `Bearer ${s.adminToken}` },
        signal: ctl.signal,
        dispatcher,
      });
      if (res.status !== 200) throw new Error(`stream answered ${res.status}`);
    }),
  );
  for (const ctl of ctls) ctl.abort();
}

/** Waits (up to 15 s) until no stream is open on the server and the fds are back to `fdTarget`. */
async function streamsGone(fdTarget = Infinity): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < 15_000 && (openStreamCount() > 0 || watchedSessions() > 0 || fds() > fdTarget)) await sleep(50);
  return Date.now() - t0;
}

export async function memoryBench(s: TestServer): Promise<[string, string][]> {
  const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
  const session = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body.session;
  // Warm-up: the code paths compiled and the pools filled, so the baseline is a steady state.
  const warm = new Agent();
  await upload(s, warm, MiB);
  await abortedStreams(s, warm, session.id, 20);
  await warm.close();
  await streamsGone();
  await settle();
  const start = { rss: rss(), fds: fds() };

  let peak = start.rss;
  const sampler = setInterval(() => (peak = Math.max(peak, rss())), 20);
  const uploaders = new Agent();
  await Promise.all(Array.from({ length: 5 }, () => upload(s, uploaders, 30 * MiB)));
  clearInterval(sampler);
  await uploaders.close();
  const uploadsClosedIn = await streamsGone(start.fds); // kept-alive sockets time out
  await settle();
  const afterUploads = { rss: rss(), fds: fds() };

  let ssePeak = afterUploads.rss;
  const sseSampler = setInterval(() => (ssePeak = Math.max(ssePeak, rss())), 20);
  const readers = new Agent();
  for (let i = 0; i < 10; i++) await abortedStreams(s, readers, session.id, 100);
  clearInterval(sseSampler);
  await readers.close();
  const closedIn = await streamsGone(start.fds);
  await settle();
  const afterStreams = { rss: rss(), fds: fds() };

  const within = (x: number) => (Math.abs(x - start.rss) / start.rss <= 0.1 ? 'met' : '**not met**');
  return [
    [
      'RSS before → after 5 parallel 30 MiB uploads (after GC)',
      `${mb(start.rss)} → ${mb(afterUploads.rss)} MiB (${change(start.rss, afterUploads.rss)}; peak ${mb(peak)} MiB; sockets closed after ${(uploadsClosedIn / 1000).toFixed(1)} s); within 10 % — ${within(afterUploads.rss)}`,
    ],
    [
      'RSS after 1,000 aborted SSE connections (after GC)',
      `${mb(afterStreams.rss)} MiB (${change(start.rss, afterStreams.rss)} from start; peak ${mb(ssePeak)} MiB; every socket closed ${(closedIn / 1000).toFixed(1)} s after the last abort); within 10 % — ${within(afterStreams.rss)}`,
    ],
    [
      'open file descriptors: start → after uploads → after SSE',
      `${start.fds} → ${afterUploads.fds} → ${afterStreams.fds}; no growth — ${afterStreams.fds <= start.fds && afterUploads.fds <= start.fds ? 'met' : '**not met**'}`,
    ],
  ];
}
