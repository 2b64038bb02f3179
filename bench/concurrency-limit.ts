// The machine's limit for many sessions' turns at once (issue #29), run by bench/concurrency.ts
// as its own process, like the service, so that its CPU time is read from /proc the same way. A
// bare node:http server speaking just enough of the service's HTTP for the bench's client:
//   POST /v1/sessions                      a session row (the body is ignored)
//   GET  /v1/sessions/{id}                 { session: { id, status } }
//   GET  /v1/sessions/{id}/events/stream   SSE frames `id:` / `event:` / `data:` as the service's;
//                                          no replay (the bench opens each stream on a fresh session)
//   POST /v1/sessions/{id}/events          202 once the user.message and session.status_running are
//                                          stored; then the turn: the same fake provider over HTTP
//                                          (Anthropic messages, streaming), each text delta stored
//                                          as an agent.message chunk, then the final agent.message
//                                          and session.status_idle: the 14 events a turn of the
//                                          service stores, 13 of them written to the open streams.
//   GET  /v1/sessions/{id}/events          the stored events, for the bench's stream = history check
// No auth: the bearer header is ignored. Storage: its own tables in LIMIT_SCHEMA (created here,
// dropped by the bench), the event rows keyed and constrained as the service's (id, unique
// (session, seq), the session's foreign key). The events of every session waiting at the end of
// a tick go out in ONE statement (the sessions' seq counters bumped and every row inserted from
// unnest), the fewest statements PostgreSQL needs; only one is in flight at a time, so a
// session's events stay in order without row locks between statements, and what arrives
// meanwhile makes the next one larger. A stored event is written to its session's streams once
// its statement has returned, as the service does after its commit.
// Env: DATABASE_URL (PostgreSQL), LIMIT_SCHEMA, ANTHROPIC_BASE_URL (the fake provider).
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import pg from 'pg';

const schema = process.env.LIMIT_SCHEMA!.replace(/"/g, '""');
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, options: `-c search_path="${schema}"` });
const providerUrl = `${process.env.ANTHROPIC_BASE_URL}/v1/messages`;
const providerAgent = new http.Agent({ keepAlive: true });

await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
await pool.query(`
  CREATE TABLE sessions (id text PRIMARY KEY, seq int NOT NULL DEFAULT 0);
  CREATE TABLE events (
    id text PRIMARY KEY,
    session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq int NOT NULL,
    type text NOT NULL,
    payload jsonb NOT NULL,
    UNIQUE (session_id, seq)
  )`);

const STORE = `
WITH s AS (
  UPDATE sessions x SET seq = x.seq + c.n FROM unnest($1::text[], $2::int[]) AS c(id, n)
   WHERE x.id = c.id RETURNING x.id, x.seq - c.n AS base
)
INSERT INTO events (id, session_id, seq, type, payload)
SELECT e.id, e.session_id, s.base + e.ord, e.type, e.body::jsonb
  FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::int[]) AS e(session_id, id, type, body, ord)
  JOIN s ON s.id = e.session_id`;

interface Event {
  id: string;
  type: string;
  json: string;
}
interface Pending {
  sessionId: string;
  events: Event[];
  done?: (err?: Error) => void;
}

const streams = new Map<string, Set<http.ServerResponse>>();
const running = new Set<string>();
let waiting: Pending[] = [];
let inFlight = false;
let scheduled = false;

function event(sessionId: string, type: string, fields: Record<string, unknown> = {}): Event {
  const id = `evt_${randomUUID()}`;
  return { id, type, json: JSON.stringify({ id, type, sessionId, at: new Date().toISOString(), ...fields }) };
}

/** Queues the events for the next statement; once stored, they go to the session's streams, then `done`. */
function store(sessionId: string, events: Event[], done?: (err?: Error) => void): void {
  waiting.push({ sessionId, events, done });
  schedule();
}

function schedule(): void {
  if (scheduled || inFlight || !waiting.length) return;
  scheduled = true;
  setImmediate(() => void flush());
}

async function flush(): Promise<void> {
  scheduled = false;
  inFlight = true;
  const taken = waiting;
  waiting = [];
  const counts = new Map<string, number>();
  const rows = { sessions: [] as string[], ids: [] as string[], types: [] as string[], bodies: [] as string[], ords: [] as number[] };
  for (const p of taken) {
    for (const e of p.events) {
      const ord = (counts.get(p.sessionId) ?? 0) + 1;
      counts.set(p.sessionId, ord);
      rows.sessions.push(p.sessionId);
      rows.ids.push(e.id);
      rows.types.push(e.type);
      rows.bodies.push(e.json);
      rows.ords.push(ord);
    }
  }
  try {
    await pool.query({
      name: 'store',
      text: STORE,
      values: [[...counts.keys()], [...counts.values()], rows.sessions, rows.ids, rows.types, rows.bodies, rows.ords],
    });
    for (const p of taken)
      for (const e of p.events) {
        if (e.type === 'user.message') continue; // kept off the stream, as the service does
        const frame = `id: ${e.id}\nevent: ${e.type}\ndata: ${e.json}\n\n`;
        for (const res of streams.get(p.sessionId) ?? []) res.write(frame);
      }
    for (const p of taken) p.done?.();
  } catch (err) {
    // A line as the service's logger writes it, so that the bench counts it the same way.
    console.error(JSON.stringify({ level: 50, msg: 'limit: a statement failed', err: (err as Error).message }));
    for (const p of taken) p.done?.(err as Error);
  }
  inFlight = false;
  schedule();
}

/** One model call on the fake provider, each text delta stored as it arrives. */
function turn(sessionId: string, text: string): void {
  const messageId = `msg_${randomUUID()}`;
  let answer = '';
  let index = 0;
  const end = (stop: string) => {
    const parts = [{ type: 'text', index: 0, text: answer, stream_id: messageId, stream_index: null }];
    running.delete(sessionId);
    store(sessionId, [
      event(sessionId, 'agent.message', { messageId, parts, text: answer, final: true }),
      event(sessionId, 'session.status_idle', { stop_reason: { type: stop } }),
    ]);
  };
  const body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 1024, stream: true, messages: [{ role: 'user', content: [{ type: 'text', text }] }] });
  const req = http.request(
    providerUrl,
    {
      method: 'POST',
      agent: providerAgent,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'x-api-key': 'sk-ant-bench',
        'anthropic-version': '2023-06-01',
      },
    },
    (res) => {
      let buf = '';
      let stopped = false;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) !== -1) {
          const data = /^data: (.*)$/m.exec(buf.slice(0, i))?.[1];
          buf = buf.slice(i + 2);
          if (!data) continue;
          const msg = JSON.parse(data) as { type: string; delta?: { type: string; text?: string } };
          if (msg.type === 'content_block_delta' && msg.delta?.type === 'text_delta') {
            const piece = msg.delta.text ?? '';
            answer += piece;
            const parts = [{ type: 'text', index: 0, text: piece, stream_id: messageId, stream_index: index++ }];
            store(sessionId, [event(sessionId, 'agent.message', { messageId, parts, text: piece, final: false })]);
          } else if (msg.type === 'message_stop') {
            stopped = true;
            end('end_turn');
          }
        }
      });
      res.on('end', () => stopped || end('error'));
      res.on('error', () => stopped || end('error'));
    },
  );
  req.on('error', () => end('error'));
  req.end(body);
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => resolve(raw));
    req.on('error', reject);
  });
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://limit');
  const m = /^\/v1\/sessions(?:\/([^/]+))?(\/events(\/stream)?)?$/.exec(url.pathname);
  if (!m) return json(res, 404, { error: { type: 'not_found_error', message: 'no route' } });
  const sessionId = m[1] ? decodeURIComponent(m[1]) : undefined;
  const fail = (err: Error) => json(res, 500, { error: { type: 'api_error', message: err.message } });
  if (!sessionId && req.method === 'POST') {
    const id = `sess_${randomUUID()}`;
    void readBody(req)
      .then(() => pool.query({ name: 'create', text: 'INSERT INTO sessions (id) VALUES ($1)', values: [id] }))
      .then(() => json(res, 201, { session: { id, status: 'idle' } }), fail);
    return;
  }
  if (!sessionId) return json(res, 404, { error: { type: 'not_found_error', message: 'no route' } });
  if (!m[2] && req.method === 'GET') return json(res, 200, { session: { id: sessionId, status: running.has(sessionId) ? 'running' : 'idle' } });
  if (m[3] && req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.write(': stream open\n\n');
    let set = streams.get(sessionId);
    if (!set) streams.set(sessionId, (set = new Set()));
    set.add(res);
    req.on('close', () => set.delete(res));
    return;
  }
  if (m[2] && req.method === 'GET') {
    const limit = Number(url.searchParams.get('limit') || 100);
    pool
      .query({ name: 'history', text: 'SELECT payload FROM events WHERE session_id = $1 ORDER BY seq LIMIT $2', values: [sessionId, limit] })
      .then(({ rows }) => json(res, 200, { events: rows.map((r: { payload: unknown }) => r.payload) }), fail);
    return;
  }
  if (m[2] && req.method === 'POST') {
    void readBody(req)
      .then(async (raw) => {
        const input = (JSON.parse(raw) as { events: { content: { type: string; text?: string }[] }[] }).events[0]!;
        const user = event(sessionId, 'user.message', { content: input.content });
        running.add(sessionId);
        // The 202 waits for its two events stored, as the service's does.
        await new Promise<void>((resolve, reject) =>
          store(sessionId, [user, event(sessionId, 'session.status_running')], (err) => (err ? reject(err) : resolve())),
        );
        json(res, 202, { data: [JSON.parse(user.json)] });
        turn(sessionId, input.content.map((c) => c.text ?? '').join(''));
      })
      .catch(fail);
    return;
  }
  json(res, 405, { error: { type: 'invalid_request_error', message: 'method not allowed' } });
});

server.listen(0, '127.0.0.1', () => {
  // The line the bench waits for, as the service prints it.
  console.log(`limit server: REST http://127.0.0.1:${(server.address() as { port: number }).port}/v1`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => {
    for (const set of streams.values()) for (const res of set) res.end();
    server.close();
    void pool.end().finally(() => process.exit(0));
  });
