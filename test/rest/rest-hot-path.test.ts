// The REST hot path: `GET /v1/agents/{id}` costs one SQL statement once the token is cached (no
// duplicate or per-relation queries) and answers what GraphQL answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/sessions.js';
import { clearViewerCache } from '../../src/auth/viewer.js';

/** Counts the SQL statements the process sends, on PostgreSQL (pg) and PGlite alike. */
function countStatements() {
  const seen: string[] = [];
  const restore: (() => void)[] = [];
  for (const proto of [pg.Client.prototype, PGlite.prototype] as unknown as Record<string, (...args: unknown[]) => unknown>[]) {
    const original = proto.query!;
    proto.query = function (this: unknown, ...args: unknown[]) {
      const q = args[0] as string | { text?: string };
      seen.push(typeof q === 'string' ? q : (q?.text ?? '?'));
      return original.apply(this, args);
    };
    restore.push(() => (proto.query = original));
  }
  return { seen, stop: () => restore.forEach((r) => r()) };
}

/** The statements on the tables a GET of an agent reads (background work may query others meanwhile). */
async function statementsOf<T>(call: () => Promise<T>): Promise<string[] & { res: T }> {
  const counter = countStatements();
  try {
    const res = await call();
    return Object.assign(
      counter.seen.filter((sql) => /"(Agent|ApiToken|Universe|PromptVersion|WebSession|User|Session)"/.test(sql)),
      { res },
    );
  } finally {
    counter.stop();
  }
}

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

describe('GET /v1/agents/{id}', () => {
  it('is one SQL statement once the token is cached (5 s), however many relations the detail shows', async () => {
    const { agent } = (await s.api('POST', '/agents', { body: { displayName: 'Hot', prompt: 'first', metadata: { k: 'v' } } })).body;
    await s.api('PUT', `/agents/${agent.id}/prompt`, { body: { prompt: 'second' } });
    const { session } = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body;
    await waitFor(async () => (await s.api('GET', `/sessions/${session.id}`)).body.session.status === 'idle', 10_000, 'session idle');

    clearViewerCache();
    const cold = await statementsOf(() => s.api('GET', `/agents/${agent.id}`));
    const warm = await statementsOf(() => s.api('GET', `/agents/${agent.id}`));
    expect(
      cold.some((sql) => sql.includes('"ApiToken"')),
      'the first request looks the token up',
    ).toBe(true);
    expect(warm.res.status).toBe(200);
    expect(warm.res.body.agent).toMatchObject({
      id: agent.id,
      prompt: 'second',
      promptVersion: 2,
      sessionCount: 1,
      metadata: { k: 'v' },
      universe: expect.any(String),
    });
    expect(warm, warm.join('\n')).toHaveLength(1);
  });

  it('answers exactly what GraphQL answers for the same fields', async () => {
    const { agent } = (
      await s.api('POST', '/agents', {
        body: {
          displayName: 'Same',
          prompt: 'p',
          mcpServers: [{ type: 'url', name: 'docs', url: 'https://mcp.example.com/' }],
          instructions: [{ name: 'a.md', content: 'x' }],
          customData: [{ id: 'c1', name: 'sheet', kind: 'doc' }],
        },
      })
    ).body;
    const rest = (await s.api('GET', `/agents/${agent.id}`)).body.agent;
    const gql = await s.gql(
      `query($id: String!) { agent(id: $id) { id slug prompt promptVersion sessionCount universe createdAt mcpServers { name url tools { include exclude } } instructions { name content } customData { id name kind scope config } } }`,
      { id: agent.id },
    );
    expect(gql.body.errors).toBeUndefined();
    const { id, slug, prompt, promptVersion, sessionCount, universe, createdAt, mcpServers, instructions, customData } = rest;
    expect(gql.body.data.agent).toEqual({
      id,
      slug,
      prompt,
      promptVersion,
      sessionCount,
      universe,
      createdAt,
      mcpServers: mcpServers.map(({ name, url, tools }: { name: string; url: string; tools: unknown }) => ({ name, url, tools })),
      instructions,
      customData: customData.map(({ id: cid, name, kind, scope, config }: Record<string, unknown>) => ({ id: cid, name, kind, scope, config })),
    });
  });

  it("masks another universe's agent as 404 in the same single statement", async () => {
    const { agent } = (await s.api('POST', '/agents', { body: {} })).body;
    const other = await s.mintToken('read', {
      universe: (await s.api('POST', '/universes', { body: { slug: `hot-${Date.now()}`, name: 'Other' } })).body.universe.slug,
    });
    const res = await s.api('GET', `/agents/${agent.id}`, { token: other });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});
