// A small line diff (longest common subsequence of lines) for a memory's versions: what a
// version changed from the one before it. The common head and tail are taken off first; what is
// left is diffed by LCS while it is small enough (MAX_CELLS), else shown as removed then added.
export type DiffLine = { kind: 'same' | 'add' | 'del'; text: string };

const MAX_CELLS = 4_000_000;

const linesOf = (text: string): string[] => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));

export function lineDiff(before: string, after: string): DiffLine[] {
  const a = linesOf(before);
  const b = linesOf(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ kind: 'same', text }));
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  if (x.length * y.length > MAX_CELLS) {
    for (const text of x) out.push({ kind: 'del', text });
    for (const text of y) out.push({ kind: 'add', text });
  } else {
    // lcs[i][j]: the LCS length of x[i..] and y[j..], in one flat array.
    const w = y.length + 1;
    const lcs = new Uint32Array((x.length + 1) * w);
    for (let i = x.length - 1; i >= 0; i--) {
      for (let j = y.length - 1; j >= 0; j--) {
        lcs[i * w + j] = x[i] === y[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < x.length || j < y.length) {
      if (i < x.length && j < y.length && x[i] === y[j]) {
        out.push({ kind: 'same', text: x[i]! });
        i++;
        j++;
      } else if (i < x.length && (j === y.length || lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!)) {
        out.push({ kind: 'del', text: x[i++]! }); // removals before additions
      } else {
        out.push({ kind: 'add', text: y[j++]! });
      }
    }
  }
  for (const text of a.slice(a.length - tail)) out.push({ kind: 'same', text });
  return out;
}
