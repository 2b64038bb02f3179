// An agent with what its detail fields read (the active prompt version, the session count), in
// one SQL statement (src/agents/view.ts turns it into the answer). `GET /v1/agents/{id}` is the hot
// read path: Prisma's relation loading costs three round trips for this answer, and its query
// pipeline more CPU than the statement itself, so on PostgreSQL the statement goes straight to
// the pg pool under Prisma; PGlite runs the same text through Prisma.
import pg from 'pg';
import { prisma, pgPool } from '../db/client.js';
import type { Agent } from '../generated/prisma/client.js';

export interface AgentDetailRow extends Agent {
  promptVersions: { version: number; content: string }[];
  universe: { slug: string };
  _count: { sessions: number };
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
