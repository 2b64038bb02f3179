// Hermes' stream coalescer (src/engines/hermes/coalescer.ts): the first chunk at once, the rest
// gathered per interval, and a failed commit reported by flush() only: a step that fails before
// it flushes leaves no unhandled rejection behind.
import { afterEach, describe, expect, it } from 'vitest';
import { StreamCoalescer } from '../../src/engines/hermes/coalescer.js';

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
  unhandled.length = 0;
});
const ticks = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('StreamCoalescer', () => {
  it('sends the first chunk at once and gathers the rest until the interval or a flush', async () => {
    const sent: [string, number][] = [];
    const c = new StreamCoalescer(async (chunk, index) => void sent.push([chunk, index]), 10_000);
    c.push('a');
    c.push('b');
    c.push('c');
    await ticks();
    expect(sent).toEqual([['a', 0]]);
    await c.flush();
    expect(sent).toEqual([
      ['a', 0],
      ['bc', 1],
    ]);
  });

  it('a failed commit rejects flush(), and is no unhandled rejection when nobody flushes', async () => {
    process.on('unhandledRejection', onUnhandled);
    const failing = () => new StreamCoalescer(() => Promise.reject(new Error('store refused')), 10_000);
    const abandoned = failing();
    abandoned.push('lost'); // the step fails elsewhere and never flushes
    const flushed = failing();
    flushed.push('x');
    flushed.push('y');
    await expect(flushed.flush()).rejects.toThrow('store refused');
    await ticks();
    expect(unhandled).toEqual([]);
  });
});
