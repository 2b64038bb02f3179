// What a session stream holds for a consumer that does not keep up (issue #29: a slow SSE client
// must not grow memory without bound): the history is read a page at a time as the consumer
// reads, and live events past MAX_HELD (1,000) are read again from the store when the consumer
// gets to them. Before, a stream read its whole history at once and queued every live event.
// Either way the consumer gets every event once, in order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { idleSessions, status, take as takeEvents, textOf } from '../helpers/status-events.js';
import { prisma } from '../../src/db/client.js';
import { commitEvents, storeEvents, type StoredEvent } from '../../src/events/store.js';
import { followSession, heldEvents } from '../../src/events/hub.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

const idleSession = async () => (await idleSessions(s, 1))[0]!;
/** Reads `n` events, allowing a minute (thousands of events, read a page at a time). */
const take = (it: AsyncIterator<StoredEvent>, n: number) => takeEvents(it, n, 60_000);

/** `n` events named `${prefix}-${i}`, stored in batches of 500 (no live delivery: as by another process). */
async function storeMany(id: string, prefix: string, n: number): Promise<void> {
  for (let i = 0; i < n; i += 500) {
    const batch = Array.from({ length: Math.min(500, n - i) }, (_, k) => status(`${prefix}-${i + k}`));
    await prisma.$transaction((tx) => storeEvents(tx, id, batch));
  }
}

const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

function expectInOrder(events: StoredEvent[]): void {
  const seqs = events.map((e) => e.seq);
  expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
}

describe('a stream whose consumer does not keep up', () => {
  it('reads a long history a page at a time as it is read', async () => {
    const id = await idleSession();
    await storeMany(id, 'old', 3000);
    const follower = followSession(id, 0);
    const first = await take(follower, 10);
    await new Promise((r) => setTimeout(r, 200));
    expect(heldEvents(id)).toBeLessThanOrEqual(500);
    const rest = await take(follower, 2990);
    const all = [...first, ...rest];
    expect(all.map(textOf)).toEqual(names('old', 3000));
    expectInOrder(all);
    await follower.return!();
  });

  it('holds at most 1,000 live events, reads the rest again, and delivers each once in order', async () => {
    const id = await idleSession();
    const follower = followSession(id, 0);
    await commitEvents(id, [status('start')]);
    expect((await take(follower, 1)).map(textOf)).toEqual(['start']);
    // 2,500 live events committed here (delivered to the stream as they commit), none read.
    for (let i = 0; i < 2500; i += 100)
      await commitEvents(
        id,
        names('live', 2500)
          .slice(i, i + 100)
          .map(status),
      );
    expect(heldEvents(id)).toBeLessThanOrEqual(1000);
    // Meanwhile another process stores more, then this one commits again.
    await storeMany(id, 'other', 700);
    await commitEvents(id, [status('end')]);
    expect(heldEvents(id)).toBeLessThanOrEqual(1000);
    const got = await take(follower, 2500 + 700 + 1);
    expect(got.map(textOf)).toEqual([...names('live', 2500), ...names('other', 700), 'end']);
    expectInOrder(got);
    // And it follows live events again once caught up.
    await commitEvents(id, [status('after')]);
    expect((await take(follower, 1)).map(textOf)).toEqual(['after']);
    await follower.return!();
  });

  it('a history read slowly while live events arrive: every event once, in order', async () => {
    const id = await idleSession();
    await storeMany(id, 'old', 1200);
    const follower = followSession(id, 0);
    const got: StoredEvent[] = [];
    for (let round = 0; round < 6; round++) {
      got.push(...(await take(follower, 300)));
      await commitEvents(id, names(`live${round}`, 400).map(status));
    }
    got.push(...(await take(follower, 1200 + 6 * 400 - got.length)));
    expect(got.map(textOf)).toEqual([...names('old', 1200), ...[0, 1, 2, 3, 4, 5].flatMap((r) => names(`live${r}`, 400))]);
    expectInOrder(got);
    expect(heldEvents(id)).toBe(0);
    await follower.return!();
  });
});
