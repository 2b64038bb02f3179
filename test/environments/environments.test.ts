// Environments over HTTP: fields, defaults and validation limits, pages, patch (a packages change
// is a new version; an unchanged list is not), archive, universe isolation (404 masking like
// agents), GraphQL from the same schemas, and what sessions and routines do with them: an unknown
// or other-universe id is 404 not_found, an archived one 409 conflict; a routine whose
// environment is missing or archived records the spec's error type and pauses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { expectError } from '../helpers/agents.js';
import { prisma } from '../../src/db/client.js';

let s: TestServer;
beforeAll(async () => {
  process.env.SCHEDULER_TICK_MS = '3600000';
  process.env.ROUTINE_SCHEDULER = 'inprocess';
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

async function environment(body: Record<string, unknown>) {
  const res = await s.api('POST', '/environments', { body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}
const many = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i));

describe('create and read', () => {
  it('all fields, as the contract shows them', async () => {
    const env = await environment({
      name: 'data',
      description: 'pandas and jq',
      packages: { apt: ['jq', 'libxml2=2.9.14+dfsg-1.3'], npm: ['left-pad', '@types/node@20', 'lodash@^4.17.0'], pip: ['pandas', 'requests==2.31.0'] },
      network: { allowed_hosts: ['API.GitHub.com', 'pypi.org', '*.example.com', 'git.local:8080'] },
    });
    expect(env).toEqual({
      id: expect.stringMatching(/^env_[0-9a-z]{26}$/),
      name: 'data',
      description: 'pandas and jq',
      packages: { apt: ['jq', 'libxml2=2.9.14+dfsg-1.3'], npm: ['left-pad', '@types/node@20', 'lodash@^4.17.0'], pip: ['pandas', 'requests==2.31.0'] },
      network: { allowed_hosts: ['api.github.com', 'pypi.org', '*.example.com', 'git.local:8080'] },
      archived_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await s.api('GET', `/environments/${env.id}`)).body).toEqual(env);
  });

  it('defaults: no packages, an empty allow-list, no description', async () => {
    const env = await environment({ name: 'bare' });
    expect(env).toMatchObject({ description: null, packages: { apt: [], npm: [], pip: [] }, network: { allowed_hosts: [] } });
  });

  it('limits: name 1–120, 100 packages per manager, 256 hosts', async () => {
    await environment({ name: 'n'.repeat(120) });
    expectError(await s.api('POST', '/environments', { body: { name: 'n'.repeat(121) } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/environments', { body: { name: '' } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/environments', { body: {} }), 400, 'invalid_request');
    await environment({ name: 'full', packages: { apt: many(100, (i) => `pkg${i}`), npm: many(100, (i) => `pkg${i}`), pip: many(100, (i) => `pkg${i}`) } });
    for (const manager of ['apt', 'npm', 'pip']) {
      expectError(await s.api('POST', '/environments', { body: { name: 'x', packages: { [manager]: many(101, (i) => `pkg${i}`) } } }), 400, 'invalid_request');
    }
    await environment({ name: 'hosts', network: { allowed_hosts: many(256, (i) => `h${i}.example.com`) } });
    expectError(
      await s.api('POST', '/environments', { body: { name: 'x', network: { allowed_hosts: many(257, (i) => `h${i}.example.com`) } } }),
      400,
      'invalid_request',
    );
  });

  it('refuses package specs that are not a name with an optional version (options, paths, URLs, shells)', async () => {
    const bad: Record<string, string[]> = {
      apt: ['-o', '../evil', 'Jq', 'j', 'jq;rm -rf /', 'jq=', 'jq version', 'http://x/y.deb', 'jq=abc'],
      npm: ['--global', 'git+https://github.com/a/b', './local', '/abs', 'a b', 'Upper', '@scope', '@scope/', 'pkg@file:../x', 'pkg@http://x', 'pkg@a/b'],
      pip: ['-e', '--index-url=http://x', 'pkg>=1', './dir', 'git+https://x', 'pkg==', 'pkg @ https://x', '_pkg', 'pkg-'],
    };
    for (const [manager, specs] of Object.entries(bad)) {
      for (const spec of specs) {
        const res = await s.api('POST', '/environments', { body: { name: 'x', packages: { [manager]: [spec] } } });
        expect(res.status, `${manager} ${spec}`).toBe(400);
        expect(res.body.error.code).toBe('invalid_request');
      }
    }
    expectError(await s.api('POST', '/environments', { body: { name: 'x', packages: { npm: ['a', 'a@1'] } } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/environments', { body: { name: 'x', packages: { brew: ['jq'] } } }), 400, 'invalid_request');
  });

  it('refuses allow-list entries that are not hostnames or host:port', async () => {
    for (const host of [
      'http://example.com',
      'example.com/path',
      'exa mple.com',
      '*',
      '*.',
      'example.com:0',
      'example.com:65536',
      '-bad.com',
      'a..b',
      'user@host',
    ]) {
      const res = await s.api('POST', '/environments', { body: { name: 'x', network: { allowed_hosts: [host] } } });
      expect(res.status, host).toBe(400);
    }
  });
});

describe('list, patch, archive', () => {
  it('pages newest first with next_page', async () => {
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await environment({ name: `page-${i}` }));
    const first = await s.api('GET', '/environments?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.data.map((e: any) => e.id)).toEqual([made[2].id, made[1].id]);
    expect(first.body.next_page).toEqual(expect.any(String));
    const second = await s.api('GET', `/environments?limit=2&page=${encodeURIComponent(first.body.next_page)}`);
    expect(second.body.data[0].id).toBe(made[0].id);
    expectError(await s.api('GET', '/environments?page=garbage'), 400, 'invalid_request');
    expectError(await s.api('GET', '/environments?limit=101'), 400, 'invalid_request');
  });

  it('a packages change makes a new version; an unchanged list or other fields do not', async () => {
    const env = await environment({ name: 'v', packages: { npm: ['left-pad'] } });
    const version = async () => (await prisma.environment.findUniqueOrThrow({ where: { id: env.id } })).version;
    expect(await version()).toBe(1);
    const renamed = await s.api('PATCH', `/environments/${env.id}`, { body: { name: 'v2', description: 'd', network: { allowed_hosts: ['example.com'] } } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'v2', description: 'd', network: { allowed_hosts: ['example.com'] }, packages: { npm: ['left-pad'] } });
    expect(await version()).toBe(1);
    await s.api('PATCH', `/environments/${env.id}`, { body: { packages: { npm: ['left-pad'] } } });
    expect(await version()).toBe(1);
    const changed = await s.api('PATCH', `/environments/${env.id}`, { body: { packages: { apt: ['jq'] } } });
    expect(changed.body.packages).toEqual({ apt: ['jq'], npm: ['left-pad'], pip: [] });
    expect(await version()).toBe(2);
    expectError(await s.api('PATCH', `/environments/${env.id}`, { body: { packages: { npm: ['--bad'] } } }), 400, 'invalid_request');
    const cleared = await s.api('PATCH', `/environments/${env.id}`, { body: { description: null } });
    expect(cleared.body.description).toBeNull();
  });

  it('archive is idempotent; an archived environment refuses patches', async () => {
    const env = await environment({ name: 'old' });
    const archived = await s.api('POST', `/environments/${env.id}/archive`);
    expect(archived.status).toBe(200);
    expect(archived.body.archived_at).toEqual(expect.any(String));
    const again = await s.api('POST', `/environments/${env.id}/archive`);
    expect(again.body.archived_at).toBe(archived.body.archived_at);
    expectError(await s.api('PATCH', `/environments/${env.id}`, { body: { name: 'new' } }), 409, 'conflict');
  });

  it('scopes: read tokens read, only write tokens write', async () => {
    const read = await s.mintToken('read');
    expect((await s.api('GET', '/environments', { token: read })).status).toBe(200);
    expectError(await s.api('POST', '/environments', { token: read, body: { name: 'x' } }), 403, 'insufficient_scope');
  });

  it('GraphQL: the same operations, typed', async () => {
    const made = await s.gql(
      'mutation { createEnvironment(input: { name: "gql", packages: { npm: ["left-pad"] }, network: { allowedHosts: ["example.com"] } }) { id name packages { apt npm pip } network { allowedHosts } archivedAt } }',
    );
    expect(made.body.errors).toBeUndefined();
    const env = made.body.data.createEnvironment;
    expect(env).toMatchObject({ name: 'gql', packages: { apt: [], npm: ['left-pad'], pip: [] }, network: { allowedHosts: ['example.com'] }, archivedAt: null });
    const bad = await s.gql('mutation { createEnvironment(input: { name: "gql", packages: { npm: ["--x"] } }) { id } }');
    expect(bad.body.errors?.[0]?.extensions?.code).toBe('invalid_request');
    const listed = await s.gql('{ environments(first: 1) { edges { node { id } } } }');
    expect(listed.body.data.environments.edges[0].node.id).toBe(env.id);
    const archived = await s.gql(`mutation { archiveEnvironment(id: "${env.id}") { archivedAt } }`);
    expect(archived.body.data.archiveEnvironment.archivedAt).toEqual(expect.any(String));
  });
});

describe('universe isolation', () => {
  let scopedB: string;
  let theirs: any;
  beforeAll(async () => {
    expect((await s.api('POST', '/universes', { body: { slug: 'env-b', name: 'B' } })).status).toBe(201);
    scopedB = await s.mintToken('admin', { universe: 'env-b' });
    theirs = (await s.api('POST', '/environments', { token: scopedB, body: { name: 'theirs' } })).body;
  });

  it("another universe's environment is 404 on every path and absent from the list", async () => {
    expectError(await s.api('GET', `/environments/${theirs.id}`), 404, 'not_found');
    expectError(await s.api('PATCH', `/environments/${theirs.id}`, { body: { name: 'mine' } }), 404, 'not_found');
    expectError(await s.api('POST', `/environments/${theirs.id}/archive`), 404, 'not_found');
    const list = await s.api('GET', '/environments?limit=100');
    expect(list.body.data.map((e: any) => e.id)).not.toContain(theirs.id);
    expect((await s.api('GET', `/environments/${theirs.id}`, { token: scopedB })).status).toBe(200);
    expect((await s.api('GET', `/environments/${theirs.id}`, { headers: { 'x-universe': 'env-b' } })).status).toBe(200);
  });

  it("a session cannot name another universe's environment", async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    expectError(await s.api('POST', '/sessions', { body: { agent: agent.id, environment_id: theirs.id } }), 404, 'not_found');
  });
});

describe('sessions and routines', () => {
  const hello = [{ type: 'user.message', content: [{ type: 'text', text: 'good morning' }] }];

  it('a session stores its environment; unknown → 404 not_found; archived → 409 conflict', async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const env = await environment({ name: 'for-sessions' });
    const created = await s.api('POST', '/sessions', { body: { agent: agent.id, environment_id: env.id } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await prisma.session.findUniqueOrThrow({ where: { id: created.body.session.id } })).environmentId).toBe(env.id);
    expectError(await s.api('POST', '/sessions', { body: { agent: agent.id, environment_id: 'env_nope' } }), 404, 'not_found');
    await s.api('POST', `/environments/${env.id}/archive`);
    const refused = await s.api('POST', '/sessions', { body: { agent: agent.id, environment_id: env.id } });
    expectError(refused, 409, 'conflict');
    expect(refused.body.error.message).toMatch(/archived/);
    // The session made before the archive keeps its environment.
    expect((await s.api('GET', `/sessions/${created.body.session.id}`)).status).toBe(200);
  });

  it('routines: a missing environment pauses with environment_not_found_error, an archived one with environment_archived_error', async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const routine = async (environmentId: string) =>
      (
        await s.api('POST', '/routines', {
          body: { name: 'r', target: { type: 'new_session', agent: agent.id, environment_id: environmentId }, initial_events: hello },
        })
      ).body;
    const lastRun = async (id: string) => (await s.api('GET', `/routines/${id}/runs`)).body.data[0];

    const missing = await routine('env_missing');
    await s.api('POST', `/routines/${missing.id}/run`);
    expect((await lastRun(missing.id)).error).toMatchObject({ type: 'environment_not_found_error' });
    expect((await s.api('GET', `/routines/${missing.id}`)).body.paused_reason).toEqual({ type: 'error', error: { type: 'environment_not_found_error' } });

    const env = await environment({ name: 'routine-env' });
    const ok = await routine(env.id);
    const run = await s.api('POST', `/routines/${ok.id}/run`);
    expect(run.body.error, JSON.stringify(run.body)).toBeNull();
    expect((await prisma.session.findUniqueOrThrow({ where: { id: run.body.session_id } })).environmentId).toBe(env.id);

    await s.api('POST', `/environments/${env.id}/archive`);
    const archivedRun = await s.api('POST', `/routines/${ok.id}/run`);
    expect(archivedRun.body.error).toMatchObject({ type: 'environment_archived_error' });
    expect(archivedRun.body.session_id).toBeNull();
    const after = (await s.api('GET', `/routines/${ok.id}`)).body;
    expect(after).toMatchObject({ status: 'paused', paused_reason: { type: 'error', error: { type: 'environment_archived_error' } } });
  });
});
