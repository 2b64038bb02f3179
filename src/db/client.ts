// The database: PostgreSQL through @prisma/adapter-pg when DATABASE_URL is set, otherwise PGlite
// (in-process Postgres) under DATA_DIR. openDatabase opens it and returns the handle; startServer
// puts that handle in the composition (the `database` part, src/services/registry.ts), and
// `prisma` here is that part's client: modules import `prisma` and reach whichever database the
// composition in force holds. Nothing is kept in this module.
import { settings } from '../config.js';
import path from 'node:path';
import fs from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { lockDataDir } from './data-dir-lock.js';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../generated/prisma/client.js';
import { applyMigrations } from './migrate.js';
import { logger } from '../logger.js';
import { service } from '../services/registry.js';

/** An open database: its Prisma client, the pg pool under it (PostgreSQL only), and how to close both. */
export interface Database {
  readonly prisma: PrismaClient;
  /** The pg pool under Prisma on PostgreSQL, for hot statements that skip Prisma's query pipeline; undefined on PGlite. */
  readonly pool: pg.Pool | undefined;
  close(): Promise<void>;
}

declare module '../services/registry.js' {
  interface Services {
    database: Database;
  }
}

/**
 * The composed database's Prisma client. A view, not a client of its own: every property is the
 * client's of the composition in force (methods bound to it), so `prisma.session.findMany(…)`,
 * `prisma.$transaction(…)` and `db === prisma` work as with the client itself.
 */
export const prisma: PrismaClient = new Proxy({} as PrismaClient, {
  get(_view, key) {
    const client = service('database').prisma;
    const value: unknown = Reflect.get(client, key, client);
    return typeof value === 'function' ? value.bind(client) : value;
  },
  has: (_view, key) => Reflect.has(service('database').prisma, key),
});

export interface DatabaseOptions {
  databaseUrl?: string;
  /** PGlite data directory; `memory://` for a throwaway database. */
  pgliteDir?: string;
  /** A PGlite data directory's image (`dumpDataDir`) a new database starts from instead of an empty one. */
  pgliteImage?: Blob;
}

/** Splits `?schema=x` off a PostgreSQL URL (adapter-pg takes the schema as an option). */
export function splitSchema(url: string): { url: string; schema?: string } {
  const u = new URL(url);
  const schema = u.searchParams.get('schema') ?? undefined;
  u.searchParams.delete('schema');
  return { url: u.toString(), schema };
}

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) {
    const { url, schema } = splitSchema(opts.databaseUrl);
    const applied = await applyMigrations({ kind: 'postgres', url, schema });
    if (applied.length) logger.info({ applied }, 'database migrations applied');
    // search_path makes raw SQL land in the same schema as the client's generated queries.
    const pool = new pg.Pool({
      connectionString: url,
      max: settings.databasePoolSize(),
      ...(schema ? { options: `-c search_path="${schema.replace(/"/g, '""')}"` } : {}),
    });
    const client = new PrismaClient({ adapter: new PrismaPg(pool, schema ? { schema } : undefined) });
    const close = async () => {
      await client.$disconnect();
      await pool.end().catch(() => undefined);
    };
    try {
      await client.$connect();
    } catch (err) {
      await close().catch(() => undefined);
      throw err;
    }
    return { prisma: client, pool, close: once(close) };
  }
  const dir = opts.pgliteDir ?? 'memory://';
  let unlock: () => void = () => undefined;
  if (!dir.startsWith('memory://')) {
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    unlock = lockDataDir(dir); // one process per directory: PGlite does not lock its files
  }
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(dir, opts.pgliteImage ? { loadDataDir: opts.pgliteImage } : undefined);
  } catch (err) {
    unlock();
    throw err;
  }
  const close = async () => {
    try {
      await client.$disconnect();
      await pglite.close();
    } finally {
      unlock();
    }
  };
  let client: PrismaClient;
  try {
    const applied = await applyMigrations({ kind: 'pglite', pglite });
    if (applied.length) logger.info({ applied }, 'database migrations applied');
    client = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
    await client.$connect();
  } catch (err) {
    await pglite.close().catch(() => undefined);
    unlock();
    throw err;
  }
  return { prisma: client, pool: undefined, close: once(close) };
}

/** A close that runs once; later calls get the first one's promise. */
function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}

/** The pg pool under the composed database's Prisma client; undefined on PGlite. */
export function pgPool(): pg.Pool | undefined {
  return service('database').pool;
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
