// Applies prisma/migrations (the Prisma CLI's folder format and `_prisma_migrations` table) on
// PGlite or PostgreSQL through the WebAssembly schema engine. Idempotent; concurrent processes
// on one PostgreSQL serialise on an advisory lock.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaPg } from '@prisma/adapter-pg';
import { openSchemaEngine } from './schema-engine.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));
const LOCK_KEY = 7_281_914; // pg_advisory_lock key of this service's migrations

export type MigrationTarget = { kind: 'pglite'; pglite: PGlite } | { kind: 'postgres'; url: string; schema?: string };

/** The migrations folder as the schema engine expects it. */
export function readMigrations(dir = MIGRATIONS_DIR) {
  const lockPath = path.join(dir, 'migration_lock.toml');
  const names = fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort() : [];
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

const quoteIdent = (s: string) => `"${s.replace(/"/g, '""')}"`;

export async function applyMigrations(target: MigrationTarget): Promise<string[]> {
  const migrationsList = readMigrations();
  if (target.kind === 'pglite') {
    const engine = await openSchemaEngine(new PrismaPGlite(target.pglite));
    try {
      return (await engine.applyMigrations({ migrationsList, filters: { externalTables: [], externalEnums: [] } })).appliedMigrationNames;
    } finally {
      engine.free();
    }
  }

  const lock = new pg.Client({ connectionString: target.url });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    if (target.schema) await lock.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(target.schema)}`);
    // search_path puts both the tables and `_prisma_migrations` into the chosen schema.
    const pool = new pg.Pool({
      connectionString: target.url,
      max: 2,
      ...(target.schema ? { options: `-c search_path=${quoteIdent(target.schema)}` } : {}),
    });
    const engine = await openSchemaEngine(new PrismaPg(pool, { schema: target.schema }));
    try {
      return (await engine.applyMigrations({ migrationsList, filters: { externalTables: [], externalEnums: [] } })).appliedMigrationNames;
    } finally {
      engine.free();
      await pool.end();
    }
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => undefined);
    await lock.end();
  }
}
