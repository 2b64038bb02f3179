// The wasm-engine migrator: applies prisma/migrations to PGlite and to a fresh PostgreSQL schema
// (when TEST_DATABASE_URL is set), reruns as a no-op, and fails a bad migration atomically.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { applyMigrations, MIGRATIONS_DIR, readMigrations } from '../../src/db/migrate.js';

const all = readMigrations().migrationDirectories.map((m) => m.path);
const DB = process.env.TEST_DATABASE_URL;

// Two migrations: a ';' inside a string literal (adapter-pg's own executeScript splits on it),
// then one that fails halfway (pglite-prisma-adapter's own executeScript records it as applied).
function badMigrations(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'migs-'));
  fs.copyFileSync(path.join(MIGRATIONS_DIR, 'migration_lock.toml'), path.join(dir, 'migration_lock.toml'));
  const write = (name: string, sql: string) => {
    fs.mkdirSync(path.join(dir, name));
    fs.writeFileSync(path.join(dir, name, 'migration.sql'), sql);
  };
  write('001_a', `CREATE TABLE "A" ("id" TEXT PRIMARY KEY, "note" TEXT DEFAULT 'x;y');\n`);
  write('002_b', `CREATE TABLE "B" ("id" TEXT);\nSELECT 1/0;\n`);
  return dir;
}

describe('applyMigrations on PGlite', () => {
  it('applies every migration once', async () => {
    const db = await PGlite.create('memory://');
    try {
      expect(all.length).toBeGreaterThan(0);
      expect(await applyMigrations({ kind: 'pglite', pglite: db })).toEqual(all);
      const tables = (await db.query<{ t: string }>(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public'`)).rows.map(
        (r) => r.t,
      );
      expect(tables).toEqual(expect.arrayContaining(['_prisma_migrations', 'User', 'Universe', 'Session']));
      expect(await applyMigrations({ kind: 'pglite', pglite: db })).toEqual([]);
    } finally {
      await db.close();
    }
  });

  it('records a failing migration as failed, and rolls it back', async () => {
    const db = await PGlite.create('memory://');
    try {
      await expect(applyMigrations({ kind: 'pglite', pglite: db }, badMigrations())).rejects.toThrow(/division by zero/);
      const rows = (await db.query<{ n: string; ok: boolean }>(`SELECT migration_name AS n, finished_at IS NOT NULL AS ok FROM _prisma_migrations ORDER BY 1`))
        .rows;
      expect(rows).toEqual([
        { n: '001_a', ok: true },
        { n: '002_b', ok: false },
      ]);
      expect((await db.query(`SELECT to_regclass('"B"') AS r`)).rows).toEqual([{ r: null }]);
    } finally {
      await db.close();
    }
  });
});

describe.skipIf(!DB)('applyMigrations on PostgreSQL', () => {
  const schema = `mig_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: DB });
  const tablesIn = async (s: string) =>
    (await admin.query<{ t: string }>('SELECT table_name AS t FROM information_schema.tables WHERE table_schema = $1', [s])).rows.map((r) => r.t);

  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}_bad" CASCADE`).catch(() => undefined);
    await admin.end();
  });

  it('applies into its own schema once, even when two callers race', async () => {
    await admin.connect();
    const target = { kind: 'postgres' as const, url: DB!, schema };
    const [a, b] = await Promise.all([applyMigrations(target), applyMigrations(target)]);
    expect([a, b].sort((x, y) => x.length - y.length)).toEqual([[], all]);
    expect(await tablesIn(schema)).toEqual(expect.arrayContaining(['_prisma_migrations', 'User', 'Universe', 'Session']));
    const recorded = await admin.query(`SELECT migration_name FROM "${schema}"._prisma_migrations WHERE finished_at IS NOT NULL`);
    expect(recorded.rows.map((r) => r.migration_name).sort()).toEqual(all);
    expect(await applyMigrations(target)).toEqual([]);
  });

  it('keeps string literals whole and fails a bad migration atomically', async () => {
    const bad = `${schema}_bad`;
    await expect(applyMigrations({ kind: 'postgres', url: DB!, schema: bad }, badMigrations())).rejects.toThrow(/division by zero/);
    expect((await tablesIn(bad)).sort()).toEqual(['A', '_prisma_migrations']);
    const def = await admin.query(
      `SELECT column_default AS d FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'A' AND column_name = 'note'`,
      [bad],
    );
    expect(def.rows[0].d).toBe(`'x;y'::text`);
  });
});

describe('the migration engine in a process that loads its module twice', () => {
  it('engines of both copies migrate, one after the other and at once (the copies used to swap the WebAssembly under each other)', async () => {
    const fixture = path.join(import.meta.dirname, 'fixtures', 'schema-engine-copies.mts');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', fixture], { timeout: 60_000 });
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(result).toEqual({ distinct: true, applied: [all.length, all.length, all.length] });
  }, 90_000);
});

describe('a database that records every migration', () => {
  it('opens without starting the migration engine', async () => {
    const fixture = path.join(import.meta.dirname, 'fixtures', 'migrations-recorded.mts');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', fixture], { timeout: 60_000 });
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({ applied: [], loadedWhenAllRecorded: false });
  }, 90_000);
});
