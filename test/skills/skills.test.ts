// Skills over HTTP: multipart and JSON uploads with SKILL.md front-matter, revisions
// (immutable snapshots, name_mismatch, latest repointing, last_revision, revision_in_use),
// skill_in_use, listing, and the skill appearing in a new session's sandbox and prompt.
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type ApiResponse } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents } from '../helpers/sessions.js';
import { config } from '../../src/config.js';

let s: TestServer;
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
  s = await startTestServer({ anthropicApiKey: 'sk', anthropicBaseUrl: fake.anthropicBaseUrl });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});

const expectError = (res: ApiResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
};
const skillMd = (name: string, description = 'Makes charts from CSV files') =>
  `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\nRun scripts/plot.sh.\n`;
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

async function multipart(url: string, files: Record<string, string>, displayName?: string) {
  const form = new FormData();
  for (const [p, content] of Object.entries(files)) form.append('files', new Blob([content]), p);
  if (displayName) form.append('display_name', displayName);
  return s.api('POST', url, { form });
}

describe('create and read', () => {
  it('multipart: a folder with SKILL.md becomes a skill with revision 1 and a file manifest', async () => {
    const res = await multipart('/skills', { 'SKILL.md': skillMd('charts'), 'scripts/plot.sh': 'echo plot' }, 'Charts');
    expect(res.status).toBe(201);
    expect(res.body.skill).toEqual({
      id: expect.stringMatching(/^skill_/),
      displayName: 'Charts',
      latestRevisionId: res.body.revision.id,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(res.body.revision).toEqual({
      id: expect.stringMatching(/^skr_/),
      skillId: res.body.skill.id,
      name: 'charts',
      description: 'Makes charts from CSV files',
      createdAt: expect.any(String),
      files: [
        { path: 'SKILL.md', size: skillMd('charts').length, sha256: sha(skillMd('charts')), executable: false },
        { path: 'scripts/plot.sh', size: 9, sha256: sha('echo plot'), executable: false },
      ],
    });
    expect((await s.api('GET', `/skills/${res.body.skill.id}`)).body.skill).toEqual(res.body.skill);
    expect((await s.api('GET', `/skills/${res.body.skill.id}/revisions/${res.body.revision.id}`)).body.revision).toEqual(res.body.revision);
  });

  it('multipart: non-ASCII file paths are read as UTF-8 (not Latin-1)', async () => {
    const res = await multipart('/skills', { 'SKILL.md': skillMd('unicode-names'), 'docs/ü漢.md': 'hi' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.revision.files.map((f: { path: string }) => f.path)).toEqual(['SKILL.md', 'docs/ü漢.md']);
  });

  it('JSON: files with utf8 or base64 content and the executable bit', async () => {
    const res = await s.api('POST', '/skills', {
      body: {
        displayName: 'Greeter',
        files: [
          { path: 'SKILL.md', content: skillMd('greeter', 'Says hello') },
          { path: 'bin/hello', content: Buffer.from('#!/bin/sh\necho hello\n').toString('base64'), encoding: 'base64', executable: true },
        ],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.revision.files.find((f: any) => f.path === 'bin/hello')).toMatchObject({ executable: true, size: 21 });
  });

  it('validates SKILL.md and paths', async () => {
    expectError(await s.api('POST', '/skills', { body: { files: [{ path: 'README.md', content: 'x' }] } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/skills', { body: { files: [{ path: 'SKILL.md', content: '# no front-matter' }] } }), 400, 'invalid_request');
    expectError(await s.api('POST', '/skills', { body: { files: [{ path: 'SKILL.md', content: '---\nname: x\n---\n' }] } }), 400, 'invalid_request');
    expectError(
      await s.api('POST', '/skills', {
        body: {
          files: [
            { path: 'SKILL.md', content: skillMd('ok') },
            { path: '../escape', content: 'x' },
          ],
        },
      }),
      400,
      'invalid_request',
    );
    expectError(
      await s.api('POST', '/skills', {
        body: {
          files: [
            { path: 'SKILL.md', content: skillMd('ok') },
            { path: '/abs', content: 'x' },
          ],
        },
      }),
      400,
      'invalid_request',
    );
    expectError(await s.api('POST', '/skills', { body: { files: [] } }), 400, 'invalid_request');
    expectError((await multipart('/skills', { 'notes.txt': 'x' })) as any, 400, 'invalid_request');
  });

  it('lists with cursor and limit, newest first', async () => {
    for (const n of ['l1', 'l2', 'l3']) await s.api('POST', '/skills', { body: { files: [{ path: 'SKILL.md', content: skillMd(n) }] } });
    const first = await s.api('GET', '/skills?limit=2');
    expect(first.body.skills).toHaveLength(2);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const next = await s.api('GET', `/skills?limit=2&cursor=${first.body.nextCursor}`);
    expect(next.body.skills[0].id).not.toBe(first.body.skills[1].id);
    expectError(await s.api('GET', '/skills?limit=0'), 400, 'invalid_request');
  });
});

describe('GraphQL', () => {
  it('createSkill and createSkillRevision take the typed bundle and answer what REST answers', async () => {
    const created = await s.gql<any>(
      `mutation($input: SkillBundleInput!) { createSkill(input: $input) { skill { id displayName latestRevisionId } revision { id name files { path executable } } } }`,
      {
        input: {
          displayName: 'Typed',
          files: [
            { path: 'SKILL.md', content: skillMd('typed') },
            { path: 'run', content: Buffer.from('x').toString('base64'), encoding: 'base64', executable: true },
          ],
        },
      },
    );
    expect(created.body.errors).toBeUndefined();
    const { skill, revision } = created.body.data.createSkill;
    expect(skill).toEqual({ id: expect.stringMatching(/^skill_/), displayName: 'Typed', latestRevisionId: revision.id });
    expect(revision.files).toEqual([
      { path: 'SKILL.md', executable: false },
      { path: 'run', executable: true },
    ]);
    expect((await s.api('GET', `/skills/${skill.id}/revisions/${revision.id}`)).body.revision).toMatchObject({ id: revision.id, name: 'typed' });
    const next = await s.gql<any>(
      `mutation($id: String!) { createSkillRevision(skillId: $id, input: {files: [{path: "SKILL.md", content: ${JSON.stringify(skillMd('other'))}}]}) { id } }`,
      { id: skill.id },
    );
    expect(next.body.errors?.[0]?.extensions?.code).toBe('name_mismatch');
    const empty = await s.gql<any>(`mutation { createSkill(input: {files: []}) { skill { id } } }`);
    expect(empty.body.errors?.[0]?.extensions?.code).toBe('invalid_request');
  });
});

describe('revisions', () => {
  it('complete snapshots; name must match; latest repoints on delete; the only revision stays', async () => {
    const created = (
      await s.api('POST', '/skills', {
        body: {
          files: [
            { path: 'SKILL.md', content: skillMd('rev') },
            { path: 'a.txt', content: 'A' },
          ],
        },
      })
    ).body;
    const id = created.skill.id;
    expectError(await s.api('POST', `/skills/${id}/revisions`, { body: { files: [{ path: 'SKILL.md', content: skillMd('other') }] } }), 400, 'name_mismatch');
    const r2 = await s.api('POST', `/skills/${id}/revisions`, { body: { files: [{ path: 'SKILL.md', content: skillMd('rev', 'v2') }] } });
    expect(r2.status).toBe(201);
    expect(r2.body.revision.files.map((f: any) => f.path)).toEqual(['SKILL.md']); // omitted files are not carried over
    expect((await s.api('GET', `/skills/${id}`)).body.skill.latestRevisionId).toBe(r2.body.revision.id);
    const list = (await s.api('GET', `/skills/${id}/revisions`)).body.revisions;
    expect(list.map((r: any) => r.id)).toEqual([r2.body.revision.id, created.revision.id]);
    expect((await s.api('DELETE', `/skills/${id}/revisions/${r2.body.revision.id}`)).status).toBe(200);
    expect((await s.api('GET', `/skills/${id}`)).body.skill.latestRevisionId).toBe(created.revision.id);
    expectError(await s.api('DELETE', `/skills/${id}/revisions/${created.revision.id}`), 400, 'last_revision');
  });

  it('skill_in_use and revision_in_use while agents reference them', async () => {
    const created = (await s.api('POST', '/skills', { body: { files: [{ path: 'SKILL.md', content: skillMd('used') }] } })).body;
    const r2 = (await s.api('POST', `/skills/${created.skill.id}/revisions`, { body: { files: [{ path: 'SKILL.md', content: skillMd('used') }] } })).body
      .revision;
    const agent = (await s.api('POST', '/agents', { body: { skills: [{ type: 'skill', skillId: created.skill.id, version: created.revision.id }] } })).body
      .agent;
    expectError(await s.api('DELETE', `/skills/${created.skill.id}`), 409, 'skill_in_use');
    expectError(await s.api('DELETE', `/skills/${created.skill.id}/revisions/${created.revision.id}`), 409, 'revision_in_use');
    expect((await s.api('DELETE', `/skills/${created.skill.id}/revisions/${r2.id}`)).status).toBe(200);
    await s.api('PATCH', `/agents/${agent.id}`, { body: { skills: [] } });
    expect((await s.api('DELETE', `/skills/${created.skill.id}`)).body).toEqual({ ok: true });
    expectError(await s.api('GET', `/skills/${created.skill.id}`), 404, 'not_found');
  });
});

describe('in sessions', () => {
  it("a pinned skill is placed in every new session's sandbox and named in the system prompt", async () => {
    const created = (
      await s.api('POST', '/skills', {
        body: {
          files: [
            { path: 'SKILL.md', content: skillMd('plotter', 'Plots data') },
            { path: 'scripts/plot.sh', content: '#!/bin/sh\necho plotted\n', executable: true },
          ],
        },
      })
    ).body;
    await s.api('POST', `/skills/${created.skill.id}/revisions`, { body: { files: [{ path: 'SKILL.md', content: skillMd('plotter', 'Newer, not pinned') }] } });
    const { session } = await readySession(s, {
      skills: [{ type: 'skill', skillId: created.skill.id, version: created.revision.id }],
      customData: [{ id: 'crm', name: 'crm_api', kind: 'private_api', description: 'the CRM' }],
    });
    fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: '/workspace/.skills/plotter/scripts/plot.sh' } }, { kind: 'text', text: 'done' });
    await sendText(s, session.id, 'plot');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(events.find((e) => e.type === 'agent.tool_result').part.result.stdout).toBe('plotted\n');
    const system = JSON.stringify(fake.requests[0]!.body.system); // a cache-marked text block (prompt caching)
    expect(system).toContain('plotter: Plots data');
    expect(system).not.toContain('Newer, not pinned');
    expect(system).toContain('crm_api (private_api): the CRM');
    const onHost = path.join(config().dataDir, 'sandboxes', session.id, 'workspace', '.skills', 'plotter', 'SKILL.md');
    expect(fs.readFileSync(onHost, 'utf8')).toBe(skillMd('plotter', 'Plots data'));
  });
});
