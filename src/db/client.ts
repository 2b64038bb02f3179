// The process's Prisma client. PostgreSQL through @prisma/adapter-pg when DATABASE_URL is set,
// otherwise PGlite (in-process Postgres) under DATA_DIR. Modules import `prisma` directly;
// openDatabase() sets it once at start (and once per test file).
import path from 'node:path';
import fs from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../generated/prisma/client.js';
import { applyMigrations } from './migrate.js';
import { logger } from '../logger.js';

export let prisma: PrismaClient = undefined as unknown as PrismaClient;
let pglite: PGlite | undefined;
let ownedPool: pg.Pool | undefined;

export interface DatabaseOptions {
  databaseUrl?: string;
  /** PGlite data directory; `memory://` for a throwaway database. */
  pgliteDir?: string;
}

/** Splits `?schema=x` off a PostgreSQL URL (adapter-pg takes the schema as an option). */
export function splitSchema(url: string): { url: string; schema?: string } {
  const u = new URL(url);
  const schema = u.searchParams.get('schema') ?? undefined;
  u.searchParams.delete('schema');
  return { url: u.toString(), schema };
}

export async function openDatabase(opts: DatabaseOptions): Promise<PrismaClient> {
  if (opts.databaseUrl) {
    const { url, schema } = splitSchema(opts.databaseUrl);
    const applied = await applyMigrations({ kind: 'postgres', url, schema });
    if (applied.length) logger.info({ applied }, 'database migrations applied');
    // search_path makes raw SQL land in the same schema as the client's generated queries.
    const pool = new pg.Pool({
      connectionString: url,
      max: Number(process.env.DATABASE_POOL_SIZE || 10),
      ...(schema ? { options: `-c search_path="${schema.replace(/"/g, '""')}"` } : {}),
    });
    ownedPool = pool;
    const adapter = new PrismaPg(pool, schema ? { schema } : undefined);
    prisma = new PrismaClient({ adapter });
  } else {
    const dir = opts.pgliteDir ?? 'memory://';
    if (!dir.startsWith('memory://')) fs.mkdirSync(path.dirname(dir), { recursive: true });
    pglite = await PGlite.create(dir);
    const applied = await applyMigrations({ kind: 'pglite', pglite });
    if (applied.length) logger.info({ applied }, 'database migrations applied');
    prisma = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
  }
  await prisma.$connect();
  return prisma;
}

/** The pg pool under Prisma on PostgreSQL, for hot reads that skip Prisma's query pipeline; undefined on PGlite. */
export function pgPool(): pg.Pool | undefined {
  return ownedPool;
}

export async function closeDatabase(): Promise<void> {
  await prisma?.$disconnect();
  await ownedPool?.end().catch(() => undefined);
  ownedPool = undefined;
  await pglite?.close();
  pglite = undefined;
}

/** Whether the database answers (readiness). */
export async function databaseReady(): Promise<boolean> {
  try {
    await prisma.$queryRaw`SELECT 1`;
    return true;
  } catch {
    return false;
  }
}
