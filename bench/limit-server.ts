// The machine's limit for `GET /v1/agents/{id}`: a bare node:http handler, one pg pool and one
// hand-written SQL statement (the token checked by its SHA-256 hash, the universe, the agent,
// its active prompt and session count in one round trip), answering the same JSON as the REST
// route. Only the bench uses it: it is what "as fast as this machine can serve that answer" means.
import http from 'node:http';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { customDataView, instructionsView, mcpServersView, metadataView, skillsView } from '../src/agents/shapes.js';

const AGENT_BY_TOKEN = `
SELECT a.id, a.name, a."displayName", a."agentType", a.llm, a."harnessVersion", a."reasoningEffort", a.capabilities,
       a.version, a.archived, (SELECT count(*)::int FROM "Session" s WHERE s."agentId" = a.id) AS "sessionCount",
       a."createdAt", a.slug, a.description, pv.content AS prompt, pv.version AS "promptVersion", a.metadata,
       a."defaultSessionId", u.slug AS universe, a."mcpServers", a.skills, a.instructions, a."customData"
  FROM "ApiToken" t
  JOIN "Universe" u ON u.id = COALESCE(t."universeId",
       (SELECT p.id FROM "Universe" p WHERE p."ownerId" = t."userId" AND p."isPersonal" LIMIT 1))
  JOIN "Agent" a ON a.id = $2 AND a."universeId" = u.id
  LEFT JOIN "PromptVersion" pv ON pv."agentId" = a.id AND pv.active
 WHERE t."tokenHash" = $1 AND t."revokedAt" IS NULL AND (t."expiresAt" IS NULL OR t."expiresAt" > now())`;

type Row = Record<string, unknown>;

// Prisma stores DateTime as `timestamp(3)` in UTC; pg would read it as local time.
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 1114
      ? (value: string) => new Date(`${value.replace(' ', 'T')}Z`)
      : pg.types.getTypeParser(oid, format as 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

/** The row in the REST route's field order and shapes. */
function agentJson(r: Row) {
  return {
    id: r.id,
    name: r.name,
    displayName: r.displayName,
    agentType: r.agentType,
    llm: r.llm,
    harnessVersion: r.harnessVersion,
    reasoningEffort: r.reasoningEffort,
    capabilities: r.capabilities,
    version: r.version,
    archived: r.archived,
    sessionCount: r.sessionCount,
    createdAt: (r.createdAt as Date).toISOString(),
    slug: r.slug,
    description: r.description,
    prompt: r.prompt ?? null,
    promptVersion: r.promptVersion ?? null,
    metadata: metadataView(r.metadata),
    defaultSessionId: r.defaultSessionId,
    universe: r.universe,
    mcpServers: mcpServersView(r.mcpServers),
    skills: skillsView(r.skills),
    instructions: instructionsView(r.instructions),
    customData: customDataView(r.customData),
  };
}

function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export interface LimitServer {
  url: string;
  close(): Promise<void>;
}

/** `schema`: the PostgreSQL schema the service's tables live in (the bench's test schema). */
export async function startLimitServer(connectionString: string, schema: string | undefined): Promise<LimitServer> {
  const pool = new pg.Pool({
    connectionString,
    max: Number(process.env.DATABASE_POOL_SIZE || 10),
    ...(schema ? { options: `-c search_path="${schema.replace(/"/g, '""')}"` } : {}),
  });
  const server = http.createServer((req, res) => {
    const m = /^\/v1\/agents\/([^/?]+)$/.exec(req.url ?? '');
    const bearer = /^Bearer (ast_\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (req.method !== 'GET' || !m) return send(res, 404, { error: { code: 'not_found', message: 'no route' } });
    if (!bearer) return send(res, 401, { error: { code: 'invalid_token', message: 'missing, unknown, revoked or expired token' } });
    const hash = createHash('sha256').update(bearer).digest('hex');
    pool.query({ name: 'agent_by_token', text: AGENT_BY_TOKEN, values: [hash, decodeURIComponent(m[1]!)], types }).then(
      ({ rows }) => (rows[0] ? send(res, 200, { agent: agentJson(rows[0]) }) : send(res, 404, { error: { code: 'not_found', message: 'agent not found' } })),
      () => send(res, 500, { error: { code: 'internal_error', message: 'Unexpected error.' } }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}
