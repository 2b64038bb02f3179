// One hand-written statement on the hot read paths (an agent's detail, a token's viewer): on
// PostgreSQL straight to the pg pool under Prisma, prepared once per connection under its name
// (Prisma's query pipeline costs more CPU than these statements); on PGlite through Prisma.
import pg from 'pg';
import { prisma, pgPool } from './client.js';

// Prisma stores DateTime as `timestamp(3)` in UTC; pg would read it as local time.
const TIMESTAMP_OID = 1114;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMP_OID ? (value: string) => new Date(`${value.replace(' ', 'T')}Z`) : pg.types.getTypeParser(oid, format as 'text')) as pg.CustomTypesConfig['getTypeParser'],
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
