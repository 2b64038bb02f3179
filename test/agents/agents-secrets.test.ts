// Agent secrets over real HTTP and GraphQL: write-only (keys and descriptions listed, values
// never), sealed at rest, limits at their boundaries, and no response or log line of this file
// ever carries a secret value.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createAgent, expectError, gqlCode } from '../helpers/agents.js';
import { logger } from '../../src/logger.js';

const SECRET = 'sk-live-VERY-SECRET-value-9f8e7d';
const OTHER_SECRET = 'pw-ANOTHER-secret-31415';
const LONG_SECRET = `LONG-${'s'.repeat(9_990)}`;

let s: TestServer;
const seen: string[] = []; // every response body and log call of this file
const restoreLogger: (() => void)[] = [];
beforeAll(async () => {
  s = await startTestServer();
  const call = s.api.bind(s);
  s.api = async (...args: Parameters<TestServer['api']>) => {
    const res = await call(...args);
    seen.push(JSON.stringify(res.body), JSON.stringify([...res.headers]));
    return res;
  };
  for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const) {
    const original = logger[level];
    (logger as any)[level] = (...args: unknown[]) => {
      seen.push(JSON.stringify(args, (_k, v) => (v instanceof Error ? { message: v.message, stack: v.stack } : v)));
      return (original as any).apply(logger, args);
    };
    restoreLogger.push(() => ((logger as any)[level] = original));
  }
});
afterAll(async () => {
  restoreLogger.forEach((r) => r());
  await s?.stop();
});

describe('secrets', () => {
  it('are write-only: keys and descriptions listed in key order, values never returned', async () => {
    const a = await createAgent(s);
    expect(await s.api('PUT', `/agents/${a.id}/secrets/API_KEY`, { body: { value: SECRET, description: 'the key' } })).toMatchObject({
      status: 200,
      body: { ok: true },
    });
    expect((await s.api('PUT', `/agents/${a.id}/secrets/DB_PASSWORD`, { body: { value: OTHER_SECRET } })).body).toEqual({ ok: true });
    const list = await s.api('GET', `/agents/${a.id}/secrets`);
    expect(list).toMatchObject({
      status: 200,
      body: {
        secrets: [
          { key: 'API_KEY', description: 'the key' },
          { key: 'DB_PASSWORD', description: '' },
        ],
      },
    });
    for (const item of list.body.secrets) expect(Object.keys(item).sort()).toEqual(['description', 'key']);
    await s.api('GET', `/agents/${a.id}`);
    await s.api('GET', '/agents');
    const g = await s.gql(`query($id: String!) { agent(id: $id) { id version } agentSecrets(agentId: $id) { key description } }`, { id: a.id });
    expect(g.body.data.agentSecrets).toEqual(list.body.secrets);
    seen.push(JSON.stringify(g.body));
    expect((await s.api('DELETE', `/agents/${a.id}/secrets/API_KEY`)).body).toEqual({ ok: true });
    expect((await s.api('GET', `/agents/${a.id}/secrets`)).body).toEqual({ secrets: [{ key: 'DB_PASSWORD', description: '' }] });
    expectError(await s.api('DELETE', `/agents/${a.id}/secrets/API_KEY`), 404, 'not_found');
  });

  it('PUT replaces the value; without a description the old one stays; every change bumps the agent version', async () => {
    const a = await createAgent(s);
    await s.api('PUT', `/agents/${a.id}/secrets/TOKEN`, { body: { value: 'first', description: 'kept' } });
    await s.api('PUT', `/agents/${a.id}/secrets/TOKEN`, { body: { value: OTHER_SECRET } });
    expect((await s.api('GET', `/agents/${a.id}/secrets`)).body.secrets).toEqual([{ key: 'TOKEN', description: 'kept' }]);
    await s.api('PUT', `/agents/${a.id}/secrets/TOKEN`, { body: { value: OTHER_SECRET, description: '' } });
    expect((await s.api('GET', `/agents/${a.id}/secrets`)).body.secrets).toEqual([{ key: 'TOKEN', description: '' }]);
    await s.api('DELETE', `/agents/${a.id}/secrets/TOKEN`);
    expect((await s.api('GET', `/agents/${a.id}`)).body.agent.version).toBe(5);
  });

  it('value 1 to 10000 characters, description max 500, only value and description', async () => {
    const a = await createAgent(s);
    const put = (body: unknown, key = 'K') => s.api('PUT', `/agents/${a.id}/secrets/${key}`, { body });
    expectError(await put({ value: '' }), 400, 'invalid_request');
    expectError(await put({}), 400, 'invalid_request');
    expectError(await put({ value: 42 }), 400, 'invalid_request');
    expectError(await put({ value: null }), 400, 'invalid_request');
    expect((await put({ value: 'v' })).status).toBe(200);
    expect((await put({ value: LONG_SECRET })).status).toBe(200);
    expect(LONG_SECRET).toHaveLength(9_995);
    expect((await put({ value: 'v'.repeat(10_000) })).status).toBe(200);
    expectError(await put({ value: 'v'.repeat(10_001) }), 400, 'invalid_request');
    expect((await put({ value: 'v', description: 'd'.repeat(500) })).status).toBe(200);
    expectError(await put({ value: 'v', description: 'd'.repeat(501) }), 400, 'invalid_request');
    expectError(await put({ value: SECRET, extra: true }), 400, 'invalid_request');
    expectError(await put({ value: 'v'.repeat(10_000) + SECRET }), 400, 'invalid_request');
  });

  it('keys match ^[A-Za-z_][A-Za-z0-9_]{0,127}$', async () => {
    const a = await createAgent(s);
    const put = (key: string) => s.api('PUT', `/agents/${a.id}/secrets/${encodeURIComponent(key)}`, { body: { value: 'v' } });
    for (const key of ['K', '_', 'lower_case', 'A1', 'k'.repeat(128)]) expect((await put(key)).status, key).toBe(200);
    for (const key of ['bad-key', 'bad key!', '1ABC', 'k'.repeat(129), 'ä']) expectError(await put(key), 400, 'invalid_request');
    expectError(await s.api('DELETE', `/agents/${a.id}/secrets/bad-key`), 400, 'invalid_request');
  });

  it('are stored sealed, never as plain text', async () => {
    const a = await createAgent(s);
    await s.api('PUT', `/agents/${a.id}/secrets/DB_PASSWORD`, { body: { value: SECRET } });
    const { prisma } = await import('../../src/db/client.js');
    const { open } = await import('../../src/crypto/secret-box.js');
    const row = await prisma.agentSecret.findFirstOrThrow({ where: { agentId: a.id } });
    expect(row.ciphertext).not.toContain(SECRET);
    expect(row.ciphertext).not.toContain(Buffer.from(SECRET).toString('base64'));
    expect(open(row.ciphertext)).toBe(SECRET);
  });

  it('two secrets setting one header on one host with different values: the second PUT is 400 egress_header_conflict and stores nothing', async () => {
    const a = await createAgent(s);
    const put = (key: string, body: Record<string, string>) => s.api('PUT', `/agents/${a.id}/secrets/${key}`, { body });
    expect((await put('FIRST', { value: SECRET, description: 'egress: api.one.test' })).status).toBe(200);
    const versionBefore = (await s.api('GET', `/agents/${a.id}`)).body.agent.version;
    const refused = await put('SECOND', { value: OTHER_SECRET, description: 'the same host\negress: API.one.test:443' });
    expectError(refused, 400, 'egress_header_conflict');
    expect(refused.body.error.message).toMatch(/secret FIRST.*secret SECOND/);
    expect((await s.api('GET', `/agents/${a.id}/secrets`)).body.secrets.map((x: { key: string }) => x.key)).toEqual(['FIRST']);
    expect((await s.api('GET', `/agents/${a.id}`)).body.agent.version).toBe(versionBefore);
    // A rotation keeping the old description is checked with it: SECOND may not take the host later either.
    expect((await put('SECOND', { value: OTHER_SECRET, description: 'no egress yet' })).status).toBe(200);
    expectError(await put('SECOND', { value: OTHER_SECRET, description: 'egress: api.one.test' }), 400, 'egress_header_conflict');
    // Another header on that host, the same header elsewhere, the same value, or the secret replacing itself: no conflict.
    expect((await put('SECOND', { value: OTHER_SECRET, description: 'egress: api.one.test X-Api-Key: {value}' })).status).toBe(200);
    expect((await put('THIRD', { value: OTHER_SECRET, description: 'egress: api.two.test' })).status).toBe(200);
    expect((await put('FOURTH', { value: SECRET, description: 'egress: api.one.test' })).status).toBe(200);
    expect((await put('FIRST', { value: OTHER_SECRET })).status).toBe(400); // would now differ from FOURTH
    const gql = await s.gql(
      `mutation($id: String!, $v: String!) { setAgentSecret(agentId: $id, key: "FIFTH", input: {value: $v, description: "egress: api.one.test"}) }`,
      { id: a.id, v: OTHER_SECRET },
    );
    seen.push(JSON.stringify(gql.body));
    expect(gqlCode(gql)).toBe('egress_header_conflict');
  });

  it('through GraphQL: set, list, delete; errors carry the spec codes', async () => {
    const a = await createAgent(s);
    const set = await s.gql(
      `mutation($id: String!, $v: String!) { setAgentSecret(agentId: $id, key: "GQL_KEY", input: {value: $v, description: "via graphql"}) }`,
      { id: a.id, v: SECRET },
    );
    seen.push(JSON.stringify(set.body));
    expect(set.body).toEqual({ data: { setAgentSecret: true } });
    const tooLong = await s.gql(`mutation($id: String!, $v: String!) { setAgentSecret(agentId: $id, key: "GQL_KEY", input: {value: $v}) }`, {
      id: a.id,
      v: 'x'.repeat(10_001),
    });
    expect(gqlCode(tooLong)).toBe('invalid_request');
    const badKey = await s.gql(`mutation($id: String!, $v: String!) { setAgentSecret(agentId: $id, key: "no-dash", input: {value: $v}) }`, {
      id: a.id,
      v: SECRET,
    });
    seen.push(JSON.stringify(badKey.body));
    expect(gqlCode(badKey)).toBe('invalid_request');
    const list = await s.gql(`query($id: String!) { agentSecrets(agentId: $id) { key description } }`, { id: a.id });
    expect(list.body.data.agentSecrets).toEqual([{ key: 'GQL_KEY', description: 'via graphql' }]);
    const del = await s.gql(`mutation($id: String!) { deleteAgentSecret(agentId: $id, key: "GQL_KEY") }`, { id: a.id });
    expect(del.body).toEqual({ data: { deleteAgentSecret: true } });
    const again = await s.gql(`mutation($id: String!) { deleteAgentSecret(agentId: $id, key: "GQL_KEY") }`, { id: a.id });
    expect(gqlCode(again)).toBe('not_found');
    const read = await s.mintToken('read');
    const refused = await s.gql(
      `mutation($id: String!, $v: String!) { setAgentSecret(agentId: $id, key: "K", input: {value: $v}) }`,
      { id: a.id, v: SECRET },
      { token: read },
    );
    seen.push(JSON.stringify(refused.body));
    expect(gqlCode(refused)).toBe('insufficient_scope');
  });

  it('no response or log line of this file ever contained a secret value', () => {
    expect(seen.length).toBeGreaterThan(20);
    for (const text of seen) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(OTHER_SECRET);
      expect(text).not.toContain(LONG_SECRET.slice(0, 40));
    }
  });
});
