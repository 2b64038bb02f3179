// One statement for many concurrent callers (src/db/batched.ts): a lone call goes out alone at
// the end of the event-loop turn; calls of one turn share a statement; under load, calls that
// arrive while two statements are in flight gather for the next; each caller gets its own answer
// or its statement's error, and a batch never exceeds its key limit.
import { describe, expect, it } from 'vitest';
import { batched } from '../../src/db/batched.js';

/** A `run` whose statements the test finishes by hand, recording the keys of each. */
function manual() {
  const runs: { keys: number[]; finish: () => void; fail: (err: Error) => void }[] = [];
  const run = (keys: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      runs.push({ keys, finish: () => resolve(keys.map((k) => `answer ${k}`)), fail: reject });
    });
  return { runs, run };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('batched', () => {
  it('a lone call is a statement over its one key', async () => {
    const { runs, run } = manual();
    const load = batched(run);
    const answer = load(7);
    await tick();
    expect(runs.map((r) => r.keys)).toEqual([[7]]);
    runs[0]!.finish();
    expect(await answer).toBe('answer 7');
  });

  it('calls of one event-loop turn share one statement; each gets its own answer', async () => {
    const { runs, run } = manual();
    const load = batched(run);
    const answers = [1, 2, 3, 4].map((k) => load(k));
    await tick();
    expect(runs.map((r) => r.keys)).toEqual([[1, 2, 3, 4]]);
    runs[0]!.finish();
    expect(await Promise.all(answers)).toEqual(['answer 1', 'answer 2', 'answer 3', 'answer 4']);
  });

  it('while two statements are in flight the next calls gather, then go out together', async () => {
    const { runs, run } = manual();
    const load = batched(run);
    const a = load(1);
    await tick();
    const b = load(2);
    await tick();
    const later = [3, 4, 5].map((k) => load(k));
    await tick();
    await tick();
    expect(runs.map((r) => r.keys)).toEqual([[1], [2]]);
    runs[0]!.finish();
    await a;
    await tick();
    await tick();
    expect(runs.map((r) => r.keys)).toEqual([[1], [2], [3, 4, 5]]);
    runs[1]!.finish();
    runs[2]!.finish();
    expect(await Promise.all([b, ...later])).toEqual(['answer 2', 'answer 3', 'answer 4', 'answer 5']);
  });

  it("a failed statement fails each of its callers, not the next statement's", async () => {
    const { runs, run } = manual();
    const load = batched(run);
    const failing = [1, 2].map((k) => load(k));
    await tick();
    const next = load(3);
    await tick();
    runs[0]!.fail(new Error('deadlock'));
    for (const f of failing) await expect(f).rejects.toThrow('deadlock');
    runs[1]!.finish();
    expect(await next).toBe('answer 3');
  });

  it('a batch holds at most maxKeys keys; the rest go in the next statement', async () => {
    const { runs, run } = manual();
    const load = batched(run, { maxKeys: 2 });
    const answers = [1, 2, 3, 4, 5].map((k) => load(k));
    await tick();
    await tick();
    expect(runs.map((r) => r.keys)).toEqual([
      [1, 2],
      [3, 4],
    ]);
    runs[0]!.finish();
    runs[1]!.finish();
    await Promise.all(answers.slice(0, 4));
    await tick();
    await tick();
    expect(runs.at(-1)!.keys).toEqual([5]);
    runs.at(-1)!.finish();
    expect(await answers[4]).toBe('answer 5');
  });

  it('with take: the keys it holds back wait, in order, for a later statement', async () => {
    const { runs, run } = manual();
    const inFlight = new Set<number>();
    // Odd keys may not share a statement with another odd key, nor go while one is in flight.
    const take = (waiting: number[]) => {
      let odd = false;
      return waiting.map((k) => {
        if (k % 2 === 0) return true;
        if (odd || inFlight.size) return false;
        odd = true;
        inFlight.add(k);
        return true;
      });
    };
    const load = batched(
      async (keys: number[]) => {
        try {
          return await run(keys);
        } finally {
          for (const k of keys) inFlight.delete(k);
        }
      },
      { take },
    );
    const answers = [1, 2, 3, 4, 5].map((k) => load(k));
    await tick();
    expect(runs.map((r) => r.keys)).toEqual([[1, 2, 4]]); // 3 and 5 held back (one odd per statement)
    await tick();
    expect(runs).toHaveLength(1); // nothing may go while the odd one is in flight
    runs[0]!.finish();
    await Promise.all(answers.slice(0, 2));
    await tick();
    await tick();
    expect(runs.map((r) => r.keys)).toEqual([[1, 2, 4], [3]]);
    runs[1]!.finish();
    await answers[2];
    await tick();
    await tick();
    expect(runs.at(-1)!.keys).toEqual([5]);
    runs.at(-1)!.finish();
    expect(await Promise.all(answers)).toEqual(['answer 1', 'answer 2', 'answer 3', 'answer 4', 'answer 5']);
  });
});
