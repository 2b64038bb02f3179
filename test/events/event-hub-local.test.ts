// Batches this process commits reach its own live streams at once (src/events/local-batches.ts):
// delivered as they are when they continue what the stream has, read from the store when they
// do not (a batch whose notice has not arrived yet sits in between), never twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { idleSessions, status, take, textOf } from '../helpers/status-events.js';
import { prisma } from '../../src/db/client.js';
import { commitEvents, sessionChannel, storeEvents, type StoredEvent } from '../../src/events/store.js';
import { pubsub } from '../../src/events/pubsub.js';
import { followSession } from '../../src/events/hub.js';
import { handOverLocalBatch } from '../../src/events/local-batches.js';
import { Redis } from 'ioredis';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

const idleSession = async () => (await idleSessions(s, 1))[0]!;

describe('local hand-over of committed batches', () => {
  it('a batch that continues the stream is delivered as handed over, without reading the store', async () => {
    const id = await idleSession();
    const follower = followSession(id, 0);
    await commitEvents(id, [status('one')]);
    const [first] = await take(follower, 1);
    expect(textOf(first!)).toBe('one');
    // Not in the store: only the hand-over can deliver it.
    const synthetic: StoredEvent = {
      seq: first!.seq + 1,
      event: { ...first!.event, id: 'evt_handed_over_only', part: { type: 'status', index: 0, level: 'working', text: 'handed' } } as never,
    };
    handOverLocalBatch(id, [synthetic]);
    const [second] = await take(follower, 1);
    expect(second!.seq).toBe(first!.seq + 1);
    expect(second!.event.id).toBe('evt_handed_over_only');
    await follower.return!();
  });

  it('a batch after a gap is not delivered past it: the gap is read from the store, in order, once', async () => {
    const id = await idleSession();
    const follower = followSession(id, 0);
    await commitEvents(id, [status('a')]);
    await take(follower, 1);
    // Committed without an announcement (as by a process whose notice is still on its way).
    await prisma.$transaction((tx) => storeEvents(tx, id, [status('b'), status('c')]));
    await commitEvents(id, [status('d')]);
    const got = await take(follower, 3);
    expect(got.map(textOf)).toEqual(['b', 'c', 'd']);
    const seqs = got.map((e) => e.seq);
    expect(seqs).toEqual([seqs[0], seqs[0]! + 1, seqs[0]! + 2]);
    // The pub/sub notices of what was handed over arrive later and deliver nothing again.
    await commitEvents(id, [status('e')]);
    expect((await take(follower, 1)).map(textOf)).toEqual(['e']);
    await follower.return!();
  });

  it('a batch handed over while the stream still replays is not delivered past what the replay reads', async () => {
    const id = await idleSession();
    await commitEvents(id, [status('old-1'), status('old-2')]);
    const follower = followSession(id, 0);
    await commitEvents(id, [status('new')]);
    const got = await take(follower, 3);
    expect(got.map(textOf)).toEqual(['old-1', 'old-2', 'new']);
    await follower.return!();
  });
});

// Another process's notice (Redis pub/sub) carries its batch when small (store.ts `notice`):
// a stream here delivers it without reading the store; a notice past a gap, or one whose batch
// is not what its range says, still reads.
describe.runIf(process.env.TEST_REDIS_URL)("another process's notices", () => {
  /** A session followed from the start, with its first event delivered. */
  async function followed() {
    const id = await idleSession();
    const follower = followSession(id, 0);
    await commitEvents(id, [status('here')]);
    const [first] = await take(follower, 1);
    return { id, follower, first: first! };
  }
  /** As another process publishes it: the range, then the batch's text. */
  const publishNotice = (id: string, from: number, to: number, batch: string) => pubsub().publish(sessionChannel(id), `${from}-${to}\n${batch}`);

  it('a notice carries its events only while another process hears the channel', async () => {
    const { id, follower } = await followed();
    // Heard by this process alone: the next notices are ranges only.
    await commitEvents(id, [status('alone-1')]);
    await commitEvents(id, [status('alone-2')]);
    await take(follower, 2);
    // Another process starts listening (a plain Redis subscriber on the same channel).
    const other = new Redis(process.env.TEST_REDIS_URL!);
    const heard: string[] = [];
    other.on('message', (_channel: string, message: string) => heard.push(message));
    await other.subscribe(`as:${sessionChannel(id)}`);
    try {
      const third = await commitEvents(id, [status('joined-1')]);
      // Commits do not wait for their notice's answer: once PUBLISH said someone else heard one
      // (a round trip later), the next notices carry their events. Committed until one does.
      const texts = ['joined-1'];
      let carrying: StoredEvent[] = [];
      for (let i = 2; i <= 50; i++) {
        texts.push(`joined-${i}`);
        carrying = await commitEvents(id, [status(`joined-${i}`)]);
        await new Promise((r) => setTimeout(r, 20));
        if (heard.at(-1)?.includes('\n')) break;
      }
      for (let i = 0; i < 200 && heard.length < texts.length; i++) await new Promise((r) => setTimeout(r, 10));
      // The first notice it hears was sent as if alone (the range; it reads the store).
      expect(heard[0]).toBe(`${third[0]!.seq}-${third[0]!.seq}`);
      const [range, events] = heard.at(-1)!.split('\n');
      expect(range).toBe(`${carrying[0]!.seq}-${carrying[0]!.seq}`);
      expect((JSON.parse(events!) as StoredEvent[]).map(textOf)).toEqual([texts.at(-1)]);
      expect(heard).toHaveLength(texts.length); // one notice per commit
      expect((await take(follower, texts.length)).map(textOf)).toEqual(texts);
    } finally {
      other.disconnect();
      await follower.return!();
    }
  });

  it('a notice carrying its events is delivered as it is, without reading the store', async () => {
    const { id, follower, first } = await followed();
    // Not in the store: only the notice can deliver it.
    const synthetic: StoredEvent = {
      seq: first.seq + 1,
      event: { ...first.event, id: 'evt_from_the_notice_only', part: { type: 'status', index: 0, level: 'working', text: 'remote' } } as never,
    };
    await publishNotice(id, synthetic.seq, synthetic.seq, JSON.stringify([synthetic]));
    const [second] = await take(follower, 1);
    expect(second!.event.id).toBe('evt_from_the_notice_only');
    await follower.return!();
  });

  it('a notice whose events do not continue the stream (a batch was missed) is read from the store instead', async () => {
    const { id, follower, first } = await followed();
    // Committed without a notice (as by a process whose notice is still on its way).
    await prisma.$transaction((tx) => storeEvents(tx, id, [status('stored-1'), status('stored-2')]));
    const wrong: StoredEvent = { seq: first.seq + 2, event: { ...first.event, id: 'evt_never_delivered' } as never };
    await publishNotice(id, wrong.seq, wrong.seq, JSON.stringify([wrong]));
    const got = await take(follower, 2);
    expect(got.map(textOf)).toEqual(['stored-1', 'stored-2']);
    expect(got.map((e) => e.seq)).toEqual([first.seq + 1, first.seq + 2]);
    await follower.return!();
  });

  it("a notice whose batch is unreadable or not its range's is read from the store instead", async () => {
    const { id, follower, first } = await followed();
    await prisma.$transaction((tx) => storeEvents(tx, id, [status('stored-1')]));
    await publishNotice(id, first.seq + 1, first.seq + 1, '[{"seq": not json');
    expect((await take(follower, 1)).map(textOf)).toEqual(['stored-1']);
    await prisma.$transaction((tx) => storeEvents(tx, id, [status('stored-2')]));
    const misnumbered: StoredEvent = { seq: first.seq + 7, event: { ...first.event, id: 'evt_never_delivered' } as never };
    await publishNotice(id, first.seq + 2, first.seq + 2, JSON.stringify([misnumbered]));
    const [got] = await take(follower, 1);
    expect([textOf(got!), got!.seq]).toEqual(['stored-2', first.seq + 2]);
    await follower.return!();
  });
});
