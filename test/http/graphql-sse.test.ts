// GraphQL over SSE at /graphql/stream (src/http/graphql-sse.ts): the answers a client relies on
// beyond a working stream, which yoga's plugin would change (see that file's opening comment).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let sessionId: string;
beforeAll(async () => {
  s = await startTestServer();
  const agent = (await s.api('POST', '/agents', { body: { displayName: 'SSE', prompt: 'p' } })).body.agent;
  sessionId = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body.session.id;
});
afterAll(async () => {
  await s?.stop();
});

/** One distinct-connection operation, read to its end (these all complete at once). */
async function stream(query: string, headers: Record<string, string>) {
  const res = await fetch(`${s.url}/graphql/stream`, {
    method: 'POST',
    headers: { accept: 'text/event-stream', 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

const bearer = () => ({ authorization: `Bearer ${s.adminToken}` });
const subscription = (id: string) => `subscription { sessionEvents(sessionId: "${id}") { __typename } }`;

/** The `data:` of each `next` frame. */
const nextFrames = (text: string) =>
  text
    .split('\n\n')
    .filter((frame) => frame.startsWith('event: next\n'))
    .map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6)));

describe('GraphQL over SSE (/graphql/stream)', () => {
  it('runs a query as one next frame and completes', async () => {
    const res = await stream('{ __typename }', bearer());
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^text\/event-stream/);
    expect(nextFrames(res.text)).toEqual([{ data: { __typename: 'Query' } }]);
    expect(res.text).toContain('event: complete');
  });

  it('answers a bad credential before streaming, in the error envelope with the status of its code', async () => {
    const bad = await stream('{ __typename }', { authorization: 'Bearer as_not_a_token' });
    expect(bad.status).toBe(401);
    expect(bad.type).toMatch(/^application\/json/);
    expect(JSON.parse(bad.text)).toEqual({ errors: [{ message: expect.any(String), extensions: { code: 'invalid_token' } }] });
    const universe = await stream('{ __typename }', { ...bearer(), 'x-universe': 'no-such-universe' });
    expect(universe.status).toBe(404);
    expect(JSON.parse(universe.text).errors[0].extensions).toEqual({ code: 'not_found' });
  });

  it('a subscription its resolver refuses is one next frame carrying the code, not a failed request', async () => {
    const anonymous = await stream(subscription(sessionId), {});
    expect(anonymous.status).toBe(200);
    expect(nextFrames(anonymous.text)[0].errors[0].extensions.code).toBe('invalid_token');
    const missing = await stream(subscription('sess_00000000000000000000000000'), bearer());
    expect(missing.status).toBe(200);
    expect(nextFrames(missing.text)[0].errors[0].extensions.code).toBe('not_found');
  });

  it('a document that does not parse is a 400 in JSON, never a stack trace', async () => {
    const res = await stream('{ __typename ', bearer());
    expect(res.status).toBe(400);
    expect(res.type).toMatch(/^application\/json/);
    expect(res.text).not.toMatch(/\bat \S+ \(/);
  });

  it('a document that does not parse or validate is a 400 naming the reason (it used to be a bare "Unable to detect operation AST")', async () => {
    const unparsable = await stream('{ __typename ', bearer());
    expect(JSON.parse(unparsable.text)).toEqual({
      errors: [expect.objectContaining({ message: expect.stringContaining('Syntax Error'), extensions: { code: 'invalid_request' } })],
    });
    const invalid = await stream('{ noSuchField }', bearer());
    expect(invalid.status).toBe(400);
    expect(invalid.type).toMatch(/^application\/json/);
    expect(JSON.parse(invalid.text)).toEqual({
      errors: [expect.objectContaining({ message: 'Cannot query field "noSuchField" on type "Query".', extensions: { code: 'invalid_request' } })],
    });
  });

  it('serves distinct connections only (no single-connection stream registration)', async () => {
    const put = await fetch(`${s.url}/graphql/stream`, { method: 'PUT', headers: bearer() });
    expect(put.status).toBe(404);
  });
});
