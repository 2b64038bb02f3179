// Applies prisma/migrations (the Prisma CLI's folder format and `_prisma_migrations` table) on
// PGlite or PostgreSQL through the WebAssembly schema engine. Idempotent; concurrent processes
// on one PostgreSQL serialise on an advisory lock (per schema, so parallel test files don't wait).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import type { MigrationList } from '@prisma/schema-engine-wasm';
import { openSchemaEngine, pgliteMigrationFactory, pgMigrationFactory } from './schema-engine.js';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));

export type MigrationTarget = { kind: 'pglite'; pglite: PGlite } | { kind: 'postgres'; url: string; schema?: string };

/** The migrations folder as the schema engine expects it (folders in name order). */
export function readMigrations(dir = MIGRATIONS_DIR): MigrationList {
  const lockPath = path.join(dir, 'migration_lock.toml');
  const names = fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { withFileTypes: true })
        .filter((d) => d.isDirectory() && fs.existsSync(path.join(dir, d.name, 'migration.sql')))
        .map((d) => d.name)
        .sort()
    : [];
  return {
    baseDir: dir,
    lockfile: { path: 'migration_lock.toml', content: fs.existsSync(lockPath) ? fs.readFileSync(lockPath, 'utf8') : null },
    shadowDbInitScript: '',
    migrationDirectories: names.map((name) => ({
      path: name,
      migrationFile: { path: 'migration.sql', content: { tag: 'ok', value: fs.readFileSync(path.join(dir, name, 'migration.sql'), 'utf8') } },
    })),
  };
}

export const quoteIdent = (s: string) => `"${s.replace(/"/g, '""')}"`;

async function run(factory: SqlMigrationAwareDriverAdapterFactory, migrationsList: MigrationList): Promise<string[]> {
  const engine = await openSchemaEngine(factory);
  try {
    const out = await engine.applyMigrations({ migrationsList, filters: { externalTables: [], externalEnums: [] } });
    return out.appliedMigrationNames;
  } finally {
    engine.free();
  }
}

type Query = (sql: string, params?: unknown[]) => Promise<{ rows: unknown[] }>;

/** True when `table` (`_prisma_migrations`, which may not exist yet) records every migration in the list as finished. */
async function allRecorded(list: MigrationList, table: string, query: Query): Promise<boolean> {
  const exists = (await query('SELECT to_regclass($1)::text AS t', [table])).rows as { t: string | null }[];
  if (!exists[0]?.t) return false;
  const rows = (await query(`SELECT migration_name FROM ${table} WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`)).rows as {
    migration_name: string;
  }[];
  const done = new Set(rows.map((r) => r.migration_name));
  return list.migrationDirectories.every((d) => done.has(d.path));
}

// One PGlite serves one process: chain calls on the same instance instead of locking.
const pgliteQueue = new WeakMap<PGlite, Promise<unknown>>();

/** Applies the migrations not yet applied; returns their names (empty when up to date). */
export async function applyMigrations(target: MigrationTarget, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrationsList = readMigrations(dir);
  if (target.kind === 'pglite') {
    const db = target.pglite;
    const next = (pgliteQueue.get(db) ?? Promise.resolve())
      .catch(() => undefined)
      .then(async () => {
        // A database that has them all (a restart, a copied image) opens without the engine.
        if (await allRecorded(migrationsList, '"_prisma_migrations"', (sql, params) => db.query(sql, params))) return [];
        return run(pgliteMigrationFactory(db), migrationsList);
      });
    pgliteQueue.set(db, next);
    return next;
  }

  // `?schema=` on the URL means the same as `schema` (pg itself would ignore it).
  const u = new URL(target.url);
  const schema = target.schema || u.searchParams.get('schema') || undefined;
  u.searchParams.delete('schema');
  const url = u.toString();
  const lock = new pg.Client({ connectionString: url });
  await lock.connect();
  try {
    // Session-level lock: released by unlock below, or by PostgreSQL if this process dies.
    await lock.query('SELECT pg_advisory_lock(hashtext($1))', [`agent-service migrations ${schema ?? ''}`]);
    if (schema) await lock.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    const table = `${schema ? `${quoteIdent(schema)}.` : ''}"_prisma_migrations"`;
    if (await allRecorded(migrationsList, table, (sql, params) => lock.query(sql, params))) return [];
    // search_path puts the tables (migration SQL is unqualified) and `_prisma_migrations` in it.
    const pool = new pg.Pool({ connectionString: url, max: 2, ...(schema ? { options: `-c search_path=${quoteIdent(schema)}` } : {}) });
    try {
      return await run(pgMigrationFactory(pool, schema), migrationsList);
    } finally {
      await pool.end();
    }
  } finally {
    await lock.query('SELECT pg_advisory_unlock_all()').catch(() => undefined);
    await lock.end();
  }
}
