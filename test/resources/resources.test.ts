// Session resources over HTTP: a CSV mounted read-only where the agent reads it, a private
// repository cloned with a token that never enters the sandbox, every mount-path and limit
// rule, token rotation and its conflicts, deletion rules.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type ApiResponse } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startGitServer, type GitServer } from '../helpers/git-server.js';
import { readySession, sendText, waitForEvents } from '../helpers/sessions.js';
import { config } from '../../src/config.js';

const TOKEN = 'ghp_SECRET_repo_token_123456';
let s: TestServer;
let fake: FakeProvider;
let gitServer: GitServer;
let repo: { url: string; sha: string };
beforeAll(async () => {
  fake = await startFakeProvider();
  s = await startTestServer({ anthropicApiKey: 'sk', anthropicBaseUrl: fake.anthropicBaseUrl });
  gitServer = await startGitServer({ token: TOKEN });
  repo = gitServer.createRepo(
    'acme/private-repo',
    { 'README.md': 'hello from the repo\n', 'src/main.py': 'print(1)\n' },
    { symlinks: { escape: '/etc/hostname', up: '../../..' } },
  );
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
  await gitServer?.close();
});

const expectError = (res: ApiResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
};
async function upload(text: string, filename: string) {
  const form = new FormData();
  form.append('file', new Blob([text], { type: 'text/csv' }), filename);
  return (await s.api('POST', '/files', { form })).body;
}
const workspace = (sessionId: string) => path.join(config().dataDir, 'sandboxes', sessionId, 'workspace');

describe('at create', () => {
  it('mounts a CSV read-only and clones a private repository; the agent reads both and cannot find the token', async () => {
    const csv = await upload('name,qty\nbolt,3\n', 'in.csv');
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const created = await s.api('POST', '/sessions', {
      body: {
        agent: agent.id,
        resources: [
          { type: 'file', file_id: csv.id, mount_path: '/data/in.csv' },
          { type: 'github_repository', url: repo.url, authorization_token: TOKEN, mount_path: '/repo' },
        ],
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const [fileRes, repoRes] = created.body.session.resources;
    expect(fileRes).toEqual({
      id: expect.stringMatching(/^sesrsc_/),
      type: 'file',
      file_id: expect.stringMatching(/^file_/),
      mount_path: '/workspace/data/in.csv',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(fileRes.file_id).not.toBe(csv.id);
    expect(repoRes).toEqual({
      id: expect.stringMatching(/^sesrsc_/),
      type: 'github_repository',
      url: repo.url,
      mount_path: '/workspace/repo',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(JSON.stringify(created.body)).not.toContain(TOKEN);
    const sessionId = created.body.session.id;

    fake.enqueue(
      {
        kind: 'tool_call',
        name: 'bash',
        input: {
          command: `cat /workspace/data/in.csv; cat /workspace/repo/README.md; echo x >> /workspace/data/in.csv; grep -rs "${TOKEN}" /workspace /tmp /etc; env | grep -c "${TOKEN}"; echo done`,
        },
      },
      { kind: 'text', text: 'read them' },
    );
    await sendText(s, sessionId, 'read the data and the repo');
    const events = await waitForEvents(s, sessionId, 'session.status_idle', 1, 30_000);
    const out = events.find((e) => e.type === 'agent.tool_result').part.result;
    expect(out.stdout).toContain('name,qty\nbolt,3');
    expect(out.stdout).toContain('hello from the repo');
    expect(out.stdout).not.toContain(TOKEN);
    expect(out.stdout.trim().endsWith('0\ndone')).toBe(true);
    // The token is nowhere in the workspace on the host either (not in .git/config).
    const all = fs.readdirSync(workspace(sessionId), { recursive: true, withFileTypes: true }).filter((d) => d.isFile());
    for (const d of all) expect(fs.readFileSync(path.join(d.parentPath, d.name), 'utf8')).not.toContain(TOKEN);
    expect(fs.statSync(path.join(workspace(sessionId), 'data/in.csv')).mode & 0o222).toBe(0);
    // The git server did see it, as a header.
    expect(gitServer.authHeaders.some((h) => Buffer.from(h.replace('Basic ', ''), 'base64').toString().endsWith(TOKEN))).toBe(true);
    // Symlinks inside the repository cannot lead the service's own file access outside.
    const viaTool = await import('../../src/tools/sandbox-tools.js');
    const { sandboxDriver } = await import('../../src/sandbox/current-driver.js');
    const sb = (await sandboxDriver().get(sessionId))!;
    expect((await viaTool.runSandboxTool(sb, 'read_file', { path: '/workspace/repo/escape' })).status).toBe('error');
    expect((await viaTool.runSandboxTool(sb, 'write_file', { path: '/workspace/repo/up/evil.txt', content: 'x' })).status).toBe('error');
  });

  it('checkout by branch or commit; a clear error for an unreadable repository', async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const ok = await s.api('POST', '/sessions', {
      body: {
        agent: agent.id,
        resources: [{ type: 'github_repository', url: repo.url, authorization_token: TOKEN, checkout: { type: 'commit', sha: repo.sha } }],
      },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(ok.body.session.resources[0]).toMatchObject({ mount_path: '/workspace/private-repo', checkout: { type: 'commit', sha: repo.sha } });
    const noToken = await s.api('POST', '/sessions', { body: { agent: agent.id, resources: [{ type: 'github_repository', url: repo.url }] } });
    expectError(noToken, 400, 'invalid_request');
    expect(noToken.body.error.message).toContain('authorization_token');
    const wrong = await s.api('POST', '/sessions', {
      body: { agent: agent.id, resources: [{ type: 'github_repository', url: repo.url, authorization_token: 'nope' }] },
    });
    expectError(wrong, 400, 'invalid_request');
    expect(JSON.stringify(wrong.body)).not.toContain('nope');
    expectError(
      await s.api('POST', '/sessions', { body: { agent: agent.id, resources: [{ type: 'github_repository', url: 'https://github.com/only-owner' }] } }),
      400,
      'invalid_request',
    );
  });

  it('refuses escaping and overlapping mount paths, and too many repositories', async () => {
    const csv = await upload('a', 'a.csv');
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    for (const mount_path of ['/../etc/passwd', '../x', '/workspace/../../x', '/']) {
      expectError(
        await s.api('POST', '/sessions', { body: { agent: agent.id, resources: [{ type: 'file', file_id: csv.id, mount_path }] } }),
        400,
        'invalid_request',
      );
    }
    expectError(
      await s.api('POST', '/sessions', {
        body: {
          agent: agent.id,
          resources: [
            { type: 'file', file_id: csv.id, mount_path: '/d' },
            { type: 'file', file_id: csv.id, mount_path: '/d/x' },
          ],
        },
      }),
      400,
      'invalid_request',
    );
    const six = Array.from({ length: 6 }, (_, i) => ({ type: 'github_repository', url: repo.url, authorization_token: TOKEN, mount_path: `/r${i}` }));
    expectError(await s.api('POST', '/sessions', { body: { agent: agent.id, resources: six } }), 400, 'too_many_resources');
    expectError(
      await s.api('POST', '/sessions', {
        body: { agent: agent.id, resources: Array.from({ length: 101 }, (_, i) => ({ type: 'file', file_id: csv.id, mount_path: `/f${i}` })) },
      }),
      400,
      'invalid_request',
    );
    expectError(await s.api('POST', '/sessions', { body: { agent: agent.id, resources: [{ type: 'file', file_id: 'file_nope' }] } }), 404, 'not_found');
  });
});

describe('mount path segments', () => {
  it('refuses a mount_path segment over 255 bytes (UTF-8) at create and add with 400; long paths of shorter segments up to 4096 are accepted', async () => {
    const csv = await upload('a', 'seg.csv');
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const tooLong = `/${'a'.repeat(300)}`;
    const atCreate = await s.api('POST', '/sessions', { body: { agent: agent.id, resources: [{ type: 'file', file_id: csv.id, mount_path: tooLong }] } });
    expectError(atCreate, 400, 'invalid_request');
    expect(atCreate.body.error.message).toContain('255 bytes');
    expectError(
      await s.api('POST', '/sessions', {
        body: { agent: agent.id, resources: [{ type: 'github_repository', url: repo.url, authorization_token: TOKEN, mount_path: `/repo${tooLong}` }] },
      }),
      400,
      'invalid_request',
    );
    // 128 two-byte characters: 128 characters but 256 bytes.
    expectError(
      await s.api('POST', '/sessions', { body: { agent: agent.id, resources: [{ type: 'file', file_id: csv.id, mount_path: `/${'é'.repeat(128)}` }] } }),
      400,
      'invalid_request',
    );
    const { session } = await readySession(s);
    const added = await s.api('POST', `/sessions/${session.id}/resources`, { body: { type: 'file', file_id: csv.id, mount_path: tooLong } });
    expectError(added, 400, 'invalid_request');
    expect(added.body.error.message).toContain('255 bytes');
    expect((await s.api('GET', `/sessions/${session.id}/resources`)).body.data).toEqual([]);

    const segment255 = `/${'b'.repeat(255)}`;
    expect((await s.api('POST', `/sessions/${session.id}/resources`, { body: { type: 'file', file_id: csv.id, mount_path: segment255 } })).status).toBe(200);
    const many = Array.from({ length: 20 }, (_, i) => `/${String(i).padStart(2, '0')}${'c'.repeat(198)}`).join('');
    expect(many.length).toBeLessThanOrEqual(4096);
    const accepted = await s.api('POST', '/sessions', { body: { agent: agent.id, resources: [{ type: 'file', file_id: csv.id, mount_path: many }] } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
    expect(accepted.body.session.resources[0].mount_path).toBe(`/workspace${many}`);
    // Under this test's data directory the whole host path is past Linux's 4096: provisioning
    // fails, and says so without the host's paths (the workspace as the sandbox sees it).
    const failed = await waitForEvents(s, accepted.body.session.id, 'session.error', 1, 20_000);
    const message = String(failed.filter((e) => e.type === 'session.error').at(-1).error.message);
    expect(message).toContain('ENAMETOOLONG');
    expect(message).toContain('/workspace/');
    expect(message).not.toContain('agent-service-test-');
  });
});

describe('resource endpoints', () => {
  it('add a file (copied before the next turn), list with paging, get, delete (unlinked), repository rules', async () => {
    const csv = await upload('x,y\n', 'late.csv');
    const { session } = await readySession(s, {}, { resources: [{ type: 'github_repository', url: repo.url, authorization_token: TOKEN }] });
    const added = await s.api('POST', `/sessions/${session.id}/resources`, { body: { type: 'file', file_id: csv.id } });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ type: 'file', mount_path: `/workspace/${csv.id}` });
    fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: `cat /workspace/${csv.id}` } }, { kind: 'text', text: 'ok' });
    await sendText(s, session.id, 'read it');
    const events = await waitForEvents(s, session.id, 'session.status_idle', 1, 30_000);
    expect(events.find((e) => e.type === 'agent.tool_result').part.result.stdout).toBe('x,y\n');

    const all = await s.api('GET', `/sessions/${session.id}/resources`);
    expect(all.body.data.map((r: any) => r.type)).toEqual(['github_repository', 'file']);
    expect(all.body.next_page).toBeNull();
    const page1 = await s.api('GET', `/sessions/${session.id}/resources?limit=1`);
    expect(page1.body.data).toHaveLength(1);
    const page2 = await s.api('GET', `/sessions/${session.id}/resources?limit=1&page=${page1.body.next_page}`);
    expect(page2.body.data[0].id).toBe(added.body.id);
    expect((await s.api('GET', `/sessions/${session.id}/resources/${added.body.id}`)).body).toEqual(added.body);

    expectError(await s.api('DELETE', `/files/${added.body.file_id}`), 400, 'file_is_session_resource');
    const repoId = all.body.data[0].id;
    expectError(await s.api('POST', `/sessions/${session.id}/resources`, { body: { type: 'github_repository', url: repo.url } }), 400, 'invalid_request');
    expectError(await s.api('DELETE', `/sessions/${session.id}/resources/${repoId}`), 400, 'invalid_request');
    expectError(await s.api('POST', `/sessions/${session.id}/resources/${added.body.id}`, { body: { authorization_token: 'x' } }), 400, 'invalid_request');
    const rotated = await s.api('POST', `/sessions/${session.id}/resources/${repoId}`, { body: { authorization_token: 'ghp_rotated' } });
    expect(rotated.status).toBe(200);
    expect(JSON.stringify(rotated.body)).not.toContain('ghp_rotated');

    expect((await s.api('DELETE', `/sessions/${session.id}/resources/${added.body.id}`)).body).toEqual({ type: 'session_resource_deleted', id: added.body.id });
    expect(fs.existsSync(path.join(workspace(session.id), csv.id))).toBe(false);
    expectError(await s.api('GET', `/sessions/${session.id}/resources/${added.body.id}`), 404, 'not_found');
    await s.api('POST', `/sessions/${session.id}/archive`);
    expectError(await s.api('POST', `/sessions/${session.id}/resources`, { body: { type: 'file', file_id: csv.id } }), 400, 'session_archived');
  });

  it('two repository tokens for one host that differ conflict (egress_header_conflict)', async () => {
    const other = gitServer.createRepo('acme/second', { 'a.txt': 'a' });
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    expectError(
      await s.api('POST', '/sessions', {
        body: {
          agent: agent.id,
          resources: [
            { type: 'github_repository', url: repo.url, authorization_token: TOKEN },
            { type: 'github_repository', url: other.url, authorization_token: 'ghp_different' },
          ],
        },
      }),
      400,
      'egress_header_conflict',
    );
    const both = await s.api('POST', '/sessions', {
      body: {
        agent: agent.id,
        resources: [
          { type: 'github_repository', url: repo.url, authorization_token: TOKEN },
          { type: 'github_repository', url: other.url, authorization_token: TOKEN },
        ],
      },
    });
    expect(both.status).toBe(201);
    const [first] = both.body.session.resources;
    expectError(
      await s.api('POST', `/sessions/${both.body.session.id}/resources/${first.id}`, { body: { authorization_token: 'ghp_new_only_for_one' } }),
      400,
      'egress_header_conflict',
    );
  });
});
