// The dashboard's line diff between two versions of a memory (web/app/lib/line-diff.ts).
import { describe, expect, it } from 'vitest';
import { lineDiff, type DiffLine } from '../../web/app/lib/line-diff.js';

const show = (d: DiffLine[]) => d.map((l) => `${l.kind === 'same' ? ' ' : l.kind === 'add' ? '+' : '-'}${l.text}`);
/** Applying the diff gives both sides back. */
const sides = (d: DiffLine[]) => [d.filter((l) => l.kind !== 'add').map((l) => l.text), d.filter((l) => l.kind !== 'del').map((l) => l.text)];

describe('lineDiff', () => {
  it('marks changed lines between unchanged ones', () => {
    expect(show(lineDiff('a\nb\nc\nd\n', 'a\nB\nc\nd\ne\n'))).toEqual([' a', '-b', '+B', ' c', ' d', '+e']);
  });

  it('from nothing, to nothing, the same', () => {
    expect(show(lineDiff('', 'x\ny'))).toEqual(['+x', '+y']);
    expect(show(lineDiff('x', ''))).toEqual(['-x']);
    expect(show(lineDiff('same\n', 'same\n'))).toEqual([' same']);
  });

  it('keeps the longest common run (moved lines are one delete and one add)', () => {
    const d = lineDiff('1\n2\n3\n4\n5', '2\n3\n4\n1\n5');
    expect(d.filter((l) => l.kind === 'same').map((l) => l.text)).toEqual(['2', '3', '4', '5']);
    expect(sides(d)).toEqual([
      ['1', '2', '3', '4', '5'],
      ['2', '3', '4', '1', '5'],
    ]);
  });

  it('random edits: both sides come back, and the common lines are as many as an LCS has', () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 50; round++) {
      const a = Array.from({ length: rnd(30) }, () => String(rnd(6)));
      const b = Array.from({ length: rnd(30) }, () => String(rnd(6)));
      const d = lineDiff(a.join('\n'), b.join('\n'));
      expect(sides(d)).toEqual([a, b]);
      // The LCS length by the textbook recursion (memoised).
      const memo = new Map<string, number>();
      const lcs = (i: number, j: number): number => {
        if (i === a.length || j === b.length) return 0;
        const k = `${i},${j}`;
        if (!memo.has(k)) memo.set(k, a[i] === b[j] ? lcs(i + 1, j + 1) + 1 : Math.max(lcs(i + 1, j), lcs(i, j + 1)));
        return memo.get(k)!;
      };
      expect(d.filter((l) => l.kind === 'same')).toHaveLength(lcs(0, 0));
    }
  });

  it('a very large change is all removed then all added, without the quadratic table', () => {
    const a = Array.from({ length: 3000 }, (_, i) => `a${i}`).join('\n');
    const b = Array.from({ length: 3000 }, (_, i) => `b${i}`).join('\n');
    const d = lineDiff(`top\n${a}\nend`, `top\n${b}\nend`);
    expect(d[0]).toEqual({ kind: 'same', text: 'top' });
    expect(d.filter((l) => l.kind === 'del')).toHaveLength(3000);
    expect(d.at(-1)).toEqual({ kind: 'same', text: 'end' });
  });
});
