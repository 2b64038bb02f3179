// An agent with what its detail fields read (the active prompt version, the session count), in
// one SQL statement (src/agents/view.ts turns it into the answer). `GET /v1/agents/{id}` is the hot
// read path: Prisma's relation loading costs three round trips for this answer, and its query
// pipeline more CPU than the statement itself, so the statement goes straight to the pg pool
// (src/db/raw-query.ts; PGlite runs the same text through Prisma).
import { rawRows } from '../db/raw-query.js';
import type { Agent } from '../generated/prisma/client.js';

export interface AgentDetailRow extends Agent {
  promptVersions: { version: number; content: string }[];
  universe: { slug: string };
  _count: { sessions: number };
}

// `a.*`: every scalar column, as Prisma's include returns them.
const DETAIL_SQL = `
  SELECT a.*, pv.version AS "promptVersion", pv.content AS "promptContent",
         (SELECT count(*)::int FROM "Session" s WHERE s."agentId" = a.id AND s."parentSessionId" IS NULL) AS "sessionCount"
    FROM "Agent" a
    LEFT JOIN "PromptVersion" pv ON pv."agentId" = a.id AND pv.active
   WHERE a.id = $1 AND a."universeId" = $2`;

type RawRow = Agent & { promptVersion: number | null; promptContent: string | null; sessionCount: number };

/** The agent `id` of this universe, or null (other universes' agents do not exist here). */
export async function agentDetailRow(universe: { id: string; slug: string }, id: string): Promise<AgentDetailRow | null> {
  const [row] = await rawRows<RawRow>('agent_detail', DETAIL_SQL, [id, universe.id]);
  if (!row) return null;
  const { promptVersion, promptContent, sessionCount } = row;
  // The fresh row object becomes the detail in place (no copy of its columns on the hot path);
  // the three joined columns stay on it unread.
  return Object.assign(row, {
    promptVersions: promptVersion === null ? [] : [{ version: promptVersion, content: promptContent ?? '' }],
    universe: { slug: universe.slug },
    _count: { sessions: sessionCount },
  });
}
