// An agent with what its detail fields read (the active prompt version, the session count), in
// one SQL statement, shaped as Prisma's `include` returns it. `GET /v1/agents/{id}` is the hot
// read path: Prisma's relation loading costs three round trips for this answer, and its query
// pipeline more CPU than the statement itself, so on PostgreSQL the statement goes straight to
// the pg pool under Prisma; PGlite runs the same text through Prisma.
import pg from 'pg';
import { prisma, pgPool } from '../db/client.js';
import { Prisma, type Agent } from '../generated/prisma/client.js';

export interface AgentDetailRow extends Agent {
  promptVersions: { version: number; content: string }[];
  universe: { slug: string };
  _count: { sessions: number };
}

/** The relation selections this row carries, as the Pothos Prisma plugin asks for them. */
const CARRIED: Record<string, string> = {
  promptVersions: JSON.stringify({ where: { active: true }, select: { version: true, content: true } }),
  universe: JSON.stringify({ select: { slug: true } }),
  _count: JSON.stringify({ select: { sessions: true } }),
};

/**
 * Whether a Prisma query (`{include}` or `{select}` built from a GraphQL selection) asks only for
 * what the row carries: scalar columns and the relations above in exactly that shape.
 */
export function rowCovers(query: { include?: Record<string, unknown>; select?: Record<string, unknown> }): boolean {
  const asked = query.include ?? query.select ?? {};
  return Object.entries(asked).every(([key, value]) =>
    CARRIED[key] !== undefined ? JSON.stringify(value) === CARRIED[key] : key in Prisma.AgentScalarFieldEnum && !!query.select);
}

// `a.*`: every scalar column, as Prisma's include returns them.
const DETAIL_SQL = `
  SELECT a.*, pv.version AS "promptVersion", pv.content AS "promptContent",
         (SELECT count(*)::int FROM "Session" s WHERE s."agentId" = a.id) AS "sessionCount"
    FROM "Agent" a
    LEFT JOIN "PromptVersion" pv ON pv."agentId" = a.id AND pv.active
   WHERE a.id = $1 AND a."universeId" = $2`;

// Prisma stores DateTime as `timestamp(3)` in UTC; pg would read it as local time.
const TIMESTAMP_OID = 1114;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMP_OID ? (value: string) => new Date(`${value.replace(' ', 'T')}Z`) : pg.types.getTypeParser(oid, format as 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

type RawRow = Agent & { promptVersion: number | null; promptContent: string | null; sessionCount: number };

/** The agent `id` of this universe, or null (other universes' agents do not exist here). */
export async function agentDetailRow(universe: { id: string; slug: string }, id: string): Promise<AgentDetailRow | null> {
  const pool = pgPool();
  const [row] = pool
    ? (await pool.query<RawRow>({ text: DETAIL_SQL, values: [id, universe.id], types })).rows
    : await prisma.$queryRawUnsafe<RawRow[]>(DETAIL_SQL, id, universe.id);
  if (!row) return null;
  const { promptVersion, promptContent, sessionCount, ...agent } = row;
  return {
    ...agent,
    promptVersions: promptVersion === null ? [] : [{ version: promptVersion, content: promptContent ?? '' }],
    universe: { slug: universe.slug },
    _count: { sessions: sessionCount },
  };
}
