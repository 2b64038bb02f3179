// The machine's limit for send → first SSE frame: a bare node:http server doing the same work
// the service's send does on its path, and nothing else: the token compared by its SHA-256 hash
// (the service caches its token lookup too), one Redis round trip counting the request against
// the rate limit, ONE PostgreSQL statement appending the user.message and session.status_running
// events to the service's own tables (the session row's sequence bump and the inserts, committed),
// then the frame written to the session's open stream and the 202. No turn follows. Only the
// bench uses it: it is what "as fast as this machine can do that work" means.
import http from 'node:http';
import { createHash, randomUUID } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';

const APPEND = `
WITH s AS (
  UPDATE "Session" SET "eventSeq" = "eventSeq" + 2 WHERE "id" = $1 RETURNING "eventSeq", "agentId"
), ins AS (
  INSERT INTO "SessionEvent" ("id", "sessionId", "seq", "type", "payload", "turn", "createdAt")
  SELECT e.id, $1, (s."eventSeq" - 2 + e.ord)::int, e.type, e.body::jsonb || jsonb_build_object('agentId', s."agentId"), 0, now() AT TIME ZONE 'UTC'
    FROM s, unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS e(id, type, body, ord)
  RETURNING "seq", "payload"
)
SELECT "seq", "payload" FROM ins ORDER BY "seq"`;

export interface FrameLimitServer {
  base: string;
  close(): Promise<void>;
}

export async function startFrameLimitServer(opts: {
  databaseUrl: string;
  schema: string | undefined;
  redisUrl: string;
  token: string;
}): Promise<FrameLimitServer> {
  const pool = new pg.Pool({
    connectionString: opts.databaseUrl,
    max: 10,
    ...(opts.schema ? { options: `-c search_path="${opts.schema.replace(/"/g, '""')}"` } : {}),
  });
  const redis = new Redis(opts.redisUrl);
  const tokenHash = createHash('sha256').update(opts.token).digest('hex');
  const streams = new Map<string, Set<http.ServerResponse>>();
  const fail = (res: http.ServerResponse, status: number) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end('{"error":{"code":"limit_server","message":"refused"}}');
  };

  const server = http.createServer((req, res) => {
    const m = /^\/v1\/sessions\/([^/]+)\/events(\/stream)?$/.exec(req.url ?? '');
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!m || !bearer || createHash('sha256').update(bearer).digest('hex') !== tokenHash) return fail(res, 404);
    const sessionId = decodeURIComponent(m[1]!);
    if (m[2]) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      let set = streams.get(sessionId);
      if (!set) streams.set(sessionId, (set = new Set()));
      set.add(res);
      req.on('close', () => set.delete(res));
      return;
    }
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      void (async () => {
        const body = JSON.parse(raw) as { events: { type: string; content: unknown }[] };
        const key = `limit:${tokenHash}`;
        const [[, count]] = (await redis.multi().incr(key).pexpire(key, 60_000, 'NX').exec()) as [[null, number]];
        if (count > 1_000_000) return fail(res, 429);
        const at = new Date().toISOString();
        const events = [
          { id: `evt_${randomUUID()}`, type: 'user.message', fields: { content: body.events[0]!.content } },
          { id: `evt_${randomUUID()}`, type: 'session.status_running', fields: {} },
        ];
        const { rows } = await pool.query({
          name: 'append_events',
          text: APPEND,
          values: [
            sessionId,
            events.map((e) => e.id),
            events.map((e) => e.type),
            events.map((e) => JSON.stringify({ id: e.id, type: e.type, sessionId, at, ...e.fields })),
          ],
        });
        const running = rows[1] as { seq: number; payload: unknown };
        const frame = `id: ${running.seq}\nevent: session.status_running\ndata: ${JSON.stringify(running.payload)}\n\n`;
        for (const stream of streams.get(sessionId) ?? []) stream.write(frame);
        const answer = JSON.stringify({ events: [rows[0].payload] });
        res.writeHead(202, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
        res.end(answer);
      })().catch(() => fail(res, 500));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    base: `http://127.0.0.1:${port}/v1`,
    close: async () => {
      for (const set of streams.values()) for (const r of set) r.end();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
      redis.disconnect();
    },
  };
}
