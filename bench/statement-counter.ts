// Preloaded into the benchmarked service (`node --import ./bench/statement-counter.ts`): counts
// the SQL statements the process sends, by kind (verb and first table), so that the bench can
// report statements per turn without server-side statement logging. On PostgreSQL every
// statement passes pg.Client#query (Prisma's adapter and the hand-written ones alike); on PGlite,
// PGlite#query / #exec. SIGUSR2 writes the counts so far to BENCH_STATEMENTS_FILE, with the
// process's memory: after a full GC when BENCH_STATEMENTS_FILE.gc exists (node with --expose-gc).
import fs from 'node:fs';
import { createRequire } from 'node:module';

const counts = new Map<string, number>();

/** "select Session", "insert SessionEvent", "store events" (the event store's statement), "begin" … */
function kindOf(text: string): string {
  const sql = text.trimStart();
  if (/^WITH s AS \(\s*UPDATE "Session" SET "eventSeq"/.test(sql)) return 'store events';
  if (/^WITH locked AS MATERIALIZED/.test(sql)) return 'store events (batch)';
  const verb = /^\w+/.exec(sql)?.[0]?.toLowerCase() ?? '?';
  const table =
    verb === 'select' || verb === 'delete'
      ? /\bFROM\s+(?:"[^"]+"\.)?"?(\w+)/i.exec(sql)?.[1]
      : verb === 'insert'
        ? /\bINTO\s+(?:"[^"]+"\.)?"?(\w+)/i.exec(sql)?.[1]
        : verb === 'update'
          ? /^UPDATE\s+(?:"[^"]+"\.)?"?(\w+)/i.exec(sql)?.[1]
          : verb === 'with'
            ? /\b(?:UPDATE|INTO|FROM)\s+(?:"[^"]+"\.)?"?(\w+)/i.exec(sql)?.[1]
            : undefined;
  return table ? `${verb} ${table}` : verb;
}

// Counted by text (cheap: the texts repeat), classified when written. BENCH_STATEMENTS=where
// also keeps, per text, our source frames of its first caller (to find who sends a statement).
const where = process.env.BENCH_STATEMENTS === 'where' ? new Map<string, string>() : null;
function count(text: unknown): void {
  const sql = typeof text === 'string' ? text : ((text as { text?: string } | null)?.text ?? '');
  counts.set(sql, (counts.get(sql) ?? 0) + 1);
  if (where && !where.has(sql))
    where.set(
      sql,
      (new Error().stack ?? '')
        .split('\n')
        .filter((l) => /\/(src|rest)\//.test(l))
        .slice(0, 4)
        .map((l) => l.replace(/.*\/((src|rest)\/[^)]*).*/, '$1'))
        .join(' < '),
    );
}

function byKind(): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const [sql, n] of counts) {
    const kind = kindOf(sql);
    kinds[kind] = (kinds[kind] ?? 0) + n;
  }
  return kinds;
}

const require = createRequire(import.meta.url);
const pg = require('pg') as { Client: { prototype: { query: (...args: unknown[]) => unknown } } };
const pgQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
  count(args[0]);
  return pgQuery.apply(this, args);
};

const { PGlite } = await import('@electric-sql/pglite');
for (const method of ['query', 'exec'] as const) {
  const original = PGlite.prototype[method] as (...args: unknown[]) => unknown;
  (PGlite.prototype as unknown as Record<string, unknown>)[method] = function (this: unknown, ...args: unknown[]) {
    count(args[0]);
    return original.apply(this, args);
  };
}

const file = process.env.BENCH_STATEMENTS_FILE;
let snapshots = 0;
if (file) {
  process.on('SIGUSR2', () => {
    // A full GC only when the bench asks (`<file>.gc` exists): it deoptimizes code that embeds
    // what it frees, and the re-optimization would land in a timed round.
    if (fs.existsSync(`${file}.gc`)) {
      fs.rmSync(`${file}.gc`);
      (globalThis as { gc?: () => void }).gc?.();
    }
    const { rss, heapUsed } = process.memoryUsage();
    const snapshot = {
      seq: ++snapshots,
      rss,
      heapUsed,
      statements: byKind(),
      ...(where
        ? { texts: Object.fromEntries([...counts].map(([sql, n]) => [`${kindOf(sql)} @ ${where.get(sql)} :: ${sql.replace(/\s+/g, ' ').slice(0, 400)}`, n])) }
        : {}),
    };
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(snapshot));
    fs.renameSync(`${file}.tmp`, file);
  });
}
