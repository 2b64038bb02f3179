// One hand-written statement on the hot read paths (an agent's detail, a token's viewer): on
// PostgreSQL straight to the pg pool under Prisma, prepared once per connection under its name
// (Prisma's query pipeline costs more CPU than these statements); on PGlite through Prisma.
import pg from 'pg';
import { prisma, pgPool } from './client.js';
import type { Prisma } from '../generated/prisma/client.js';

// Prisma stores DateTime as `timestamp(3)` in UTC; pg would read it as local time.
const TIMESTAMP_OID = 1114;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMP_OID
      ? (value: string) => new Date(`${value.replace(' ', 'T')}Z`)
      : pg.types.getTypeParser(oid, format as 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * Rows of `sql` with `values` ($1, $2 …). `name` must always go with the same text. Column types
 * as pg reads them (bigint columns: strings on pg, BigInt on PGlite — convert with BigInt()).
 */
export async function rawRows<R>(name: string, sql: string, values: unknown[]): Promise<R[]> {
  const pool = pgPool();
  if (pool) return (await pool.query({ name, text: sql, values, types })).rows as R[];
  return prisma.$queryRawUnsafe<R[]>(sql, ...values);
}

const statementNames = new Map<string, string>();

/**
 * Rows of a `Prisma.sql` statement run on `db`: on PostgreSQL with `db` the client itself, straight
 * to the pg pool, prepared once per connection under a name derived from its text (the event
 * store's statement runs for every streamed chunk); inside a transaction, or on PGlite, through
 * Prisma. Column types as `rawRows` reads them.
 */
export async function sqlRows<R>(db: Pick<typeof prisma, '$queryRaw'>, query: Prisma.Sql): Promise<R[]> {
  const pool = db === prisma ? pgPool() : undefined;
  if (!pool) return db.$queryRaw<R[]>(query);
  let name = statementNames.get(query.text);
  if (!name) statementNames.set(query.text, (name = `sql_${statementNames.size}`));
  return (await pool.query({ name, text: query.text, values: query.values, types })).rows as R[];
}
