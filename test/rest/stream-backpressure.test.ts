// A slow SSE client (issue #29): a client that stops reading its stream while a turn emits
// megabytes of events. The server keeps at most STREAM_BUFFER_BYTES (here 64 KiB) waiting for
// it, then closes that stream (a reconnect hint, the connection cut when it still does not
// read): the client never gets the rest on that connection, another session's stream runs to
// its end meanwhile, and a resume with Last-Event-ID delivers exactly what was missing.
// A client that reads slowly but keeps reading is not closed, however large a frame: it was,
// when the stream waited at most STREAM_SLOW_CUT_MS for its whole buffer to empty, and a
// reconnect met the same large frame again.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { history, readySession, sendText, waitFor } from '../helpers/sessions.js';
import { streamedIds, watchStream } from '../helpers/streams.js';

let s: TestServer;
let fake: FakeProvider;
beforeAll(async () => {
  process.env.STREAM_BUFFER_BYTES = String(64 * 1024);
  process.env.STREAM_SLOW_CUT_MS = '500';
  fake = await startFakeProvider();
  s = await startTestServer({ anthropicApiKey: 'sk-ant-test', anthropicBaseUrl: fake.anthropicBaseUrl });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
  delete process.env.STREAM_BUFFER_BYTES;
  delete process.env.STREAM_SLOW_CUT_MS;
});

/** A stream read by a client that stops reading after the replay; `resume()` reads on to the connection's end. */
function stalledStream(sessionId: string) {
  let text = '';
  let ended: 'end' | 'aborted' | null = null;
  let res!: http.IncomingMessage;
  const opened = new Promise<void>((resolve, reject) => {
    const req = http.get(`${s.base}/sessions/${sessionId}/events/stream`, { headers: { authorization: `Bearer ${s.adminToken}` } }, (r) => {
      res = r;
      r.setEncoding('utf8');
      r.on('data', (c: string) => (text += c));
      r.on('end', () => (ended ??= 'end'));
      r.on('aborted', () => (ended ??= 'aborted'));
      r.on('error', () => (ended ??= 'aborted'));
      resolve();
    });
    req.on('error', reject);
  });
  return {
    opened,
    stall: () => res.pause(),
    /** Reads what reached the client until the connection is over; the complete frames' ids. */
    async resume() {
      res.resume();
      await waitFor(async () => ended !== null, 30_000, 'the stalled stream to end');
      const frames = text.split('\n\n').slice(0, -1);
      return {
        ended,
        bytes: Buffer.byteLength(text),
        ids: frames.flatMap((f) => /^id: (.+)$/m.exec(f)?.[1] ?? []),
        hint: text.includes(': the client reads too slowly; reconnect with Last-Event-ID\nretry: 1000\n\n'),
      };
    },
  };
}

describe('a client that stops reading its stream', () => {
  it('is closed past the buffer limit, does not hold another session back, and resumes with Last-Event-ID losing nothing', async () => {
    const slow = (await readySession(s)).session;
    const other = (await readySession(s)).session;
    const stalled = stalledStream(slow.id);
    await stalled.opened;
    await new Promise((r) => setTimeout(r, 200)); // the replay read
    stalled.stall();

    // ≈ 8 MB of stream: 200 chunks of 10 KB (each event carries its text twice), then the whole text, twice, in the final message.
    const big = 'abcdefghij'.repeat(200_000);
    fake.enqueue({ kind: 'text', text: big, chunks: 200 });
    expect((await sendText(s, slow.id, 'a long answer please')).status).toBe(202);
    await waitFor(async () => (await s.api('GET', `/sessions/${slow.id}`)).body.session.status === 'running', 10_000, 'the slow turn');

    // Meanwhile another session's turn and stream run to their end.
    const watcher = await watchStream(s.base, s.adminToken, other.id);
    const before = (await history(s, other.id)).filter((e) => e.type === 'session.status_idle').length;
    await watcher.idles(before, 20_000);
    fake.enqueue({ kind: 'text', text: 'a short answer', chunks: 3 });
    expect((await sendText(s, other.id, 'hi')).status).toBe(202);
    await watcher.idles(before + 1, 20_000);
    expect(watcher.frames.map((f) => f.id)).toEqual(streamedIds(await history(s, other.id)));
    watcher.close();

    // (The session's status, not its 8 MB history, is polled.)
    await waitFor(async () => (await s.api('GET', `/sessions/${slow.id}`)).body.session.status === 'idle', 60_000, 'the long turn');
    const events = await history(s, slow.id);
    expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });
    const total = events.filter((e) => e.type !== 'user.message').reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e)), 0);
    expect(total).toBeGreaterThan(7_000_000);
    await new Promise((r) => setTimeout(r, 1000)); // past STREAM_SLOW_CUT_MS

    // The stalled connection ended without the rest of the turn: the server let go of it.
    const got = await stalled.resume();
    expect(got.ended).not.toBeNull();
    expect(got.bytes).toBeLessThan(total);
    const all = streamedIds(events);
    expect(got.ids.length).toBeGreaterThan(0);
    expect(got.ids.length).toBeLessThan(all.length);
    expect(got.ids).toEqual(all.slice(0, got.ids.length));

    // Resume after the last complete frame: the rest, no gap, no duplicate. This reader shares the
    // server's process: on a loaded machine the server may see no progress of it for 500 ms (CI,
    // stop 43); the resume is about what it gets, so it has time.
    process.env.STREAM_SLOW_CUT_MS = '20000';
    const last = got.ids.at(-1)!;
    const resumed = await watchStream(s.base, s.adminToken, slow.id, { 'last-event-id': last });
    await resumed.idles(1, 30_000);
    expect(resumed.frames.at(-1)!.type).toBe('session.status_idle');
    resumed.close();
    expect([...got.ids, ...resumed.frames.map((f) => f.id)]).toEqual(all);
  }, 200_000);
});

/** A stream read at about `bytesPerSecond` (paused after each chunk for its share of a second) until the session's first idle. */
function pacedStream(sessionId: string, bytesPerSecond: number) {
  let text = '';
  let ended: 'end' | 'aborted' | null = null;
  const opened = new Promise<http.ClientRequest>((resolve, reject) => {
    const req = http.get(`${s.base}/sessions/${sessionId}/events/stream`, { headers: { authorization: `Bearer ${s.adminToken}` } }, (r) => {
      r.setEncoding('utf8');
      r.on('data', (c: string) => {
        text += c;
        r.pause();
        setTimeout(() => r.resume(), (Buffer.byteLength(c) / bytesPerSecond) * 1000);
      });
      r.on('end', () => (ended ??= 'end'));
      r.on('aborted', () => (ended ??= 'aborted'));
      r.on('error', () => (ended ??= 'aborted'));
      resolve(req);
    });
    req.on('error', reject);
  });
  const frames = () => text.split('\n\n').slice(0, -1);
  return {
    opened,
    ended: () => ended,
    ids: () => frames().flatMap((f) => /^id: (.+)$/m.exec(f)?.[1] ?? []),
    idle: () => frames().some((f) => f.includes('event: session.status_idle')),
    hint: () => text.includes('reads too slowly'),
  };
}

describe('a client that reads slowly but keeps reading', () => {
  it('gets every event of a turn with megabyte frames on one connection, without the reconnect hint', async () => {
    process.env.STREAM_SLOW_CUT_MS = '5000'; // the default
    const session = (await readySession(s)).session;
    const reader = pacedStream(session.id, 700_000);
    const req = await reader.opened;
    await new Promise((r) => setTimeout(r, 200)); // the replay read
    // ≈ 12 MB: 50 chunks of 60 KB (each event carries its text twice), then a final message of
    // ≈ 6 MB, which this reader takes in about 8 s, past the 5 s a stopped client is given. (The
    // server sees a reader's progress in steps of what the kernel's buffers free: here every 1–3 s.)
    const text = 'abcdefghij'.repeat(300_000);
    fake.enqueue({ kind: 'text', text, chunks: 50 });
    expect((await sendText(s, session.id, 'a long answer, slowly read')).status).toBe(202);
    try {
      await waitFor(async () => reader.idle() || reader.ended() !== null, 60_000, 'the paced stream to reach the idle event');
      expect(reader.hint()).toBe(false);
      expect(reader.ended()).toBeNull();
      expect(reader.ids()).toEqual(streamedIds(await history(s, session.id)));
    } finally {
      req.destroy();
    }
  }, 90_000);
});
