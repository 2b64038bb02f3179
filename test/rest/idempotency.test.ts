// Idempotency-Key on every creating POST (CONTRACT: "a retry with the same key and body within
// 24 h returns the first answer and creates nothing"): the multipart uploads (files, skills,
// skill revisions), whose key is checked against a hash of the parts read, and the JSON creates
// that lacked it (session resources, a routine's manual run). Also: every POST of the route table
// either creates and is marked idempotent (documented in OpenAPI) or is listed here as a verb.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type ApiResponse } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, waitForEvents } from '../helpers/sessions.js';
import { prisma } from '../../src/db/client.js';
import { routes } from '../../rest/routes/index.js';

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
beforeEach(() => fake.reset());

const expectError = (res: ApiResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
};
const key = (k: string) => ({ 'idempotency-key': `${k}-${Math.random().toString(36).slice(2)}` });

function fileForm(content: string, filename = 'notes.txt', extra: Record<string, string> = {}): FormData {
  const form = new FormData();
  form.append('file', new Blob([content], { type: 'text/plain' }), filename);
  for (const [k, v] of Object.entries(extra)) form.append(k, v);
  return form;
}
const skillMd = (name: string) => `---\nname: ${name}\ndescription: Says hello\n---\n# ${name}\n`;
function skillForm(files: Record<string, string>): FormData {
  const form = new FormData();
  for (const [p, content] of Object.entries(files)) form.append('files', new Blob([content]), p);
  return form;
}

describe('multipart uploads', () => {
  it('POST /files: a retry returns the first file and stores nothing; another body under the key is 400', async () => {
    const headers = key('file');
    const before = await prisma.file.count();
    const first = await s.api('POST', '/files', { form: fileForm('once', 'a.txt', { expires_in_seconds: '3600' }), headers });
    expect(first.status).toBe(200);
    const again = await s.api('POST', '/files', { form: fileForm('once', 'a.txt', { expires_in_seconds: '3600' }), headers });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await prisma.file.count()).toBe(before + 1);
    // The body decides, as for JSON: other content, another name or another expiry under the key is refused.
    expectError(await s.api('POST', '/files', { form: fileForm('twice', 'a.txt', { expires_in_seconds: '3600' }), headers }), 400, 'invalid_request');
    expectError(await s.api('POST', '/files', { form: fileForm('once', 'b.txt', { expires_in_seconds: '3600' }), headers }), 400, 'invalid_request');
    expectError(await s.api('POST', '/files', { form: fileForm('once', 'a.txt', { expires_in_seconds: '7200' }), headers }), 400, 'invalid_request');
    expect(await prisma.file.count()).toBe(before + 1);
    // Without a key, every upload is a new file.
    expect((await s.api('POST', '/files', { form: fileForm('once', 'a.txt') })).body.id).not.toBe(first.body.id);
  });

  it('POST /skills and POST /skills/{id}/revisions: a retry returns the first skill or revision', async () => {
    const headers = key('skill');
    const first = await s.api('POST', '/skills', { form: skillForm({ 'SKILL.md': skillMd('idem') }), headers });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const again = await s.api('POST', '/skills', { form: skillForm({ 'SKILL.md': skillMd('idem') }), headers });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await prisma.skill.count({ where: { id: first.body.skill.id } })).toBe(1);
    expect((await s.api('GET', '/skills?limit=100')).body.skills.filter((k: { id: string }) => k.id === first.body.skill.id)).toHaveLength(1);
    expectError(await s.api('POST', '/skills', { form: skillForm({ 'SKILL.md': skillMd('idem'), 'extra.txt': 'x' }), headers }), 400, 'invalid_request');

    const revHeaders = key('revision');
    const url = `/skills/${first.body.skill.id}/revisions`;
    const bundle = { 'SKILL.md': skillMd('idem'), 'run.sh': 'echo 2' };
    const rev = await s.api('POST', url, { form: skillForm(bundle), headers: revHeaders });
    expect(rev.status, JSON.stringify(rev.body)).toBe(201);
    const revAgain = await s.api('POST', url, { form: skillForm(bundle), headers: revHeaders });
    expect(revAgain.body).toEqual(rev.body);
    expect((await s.api('GET', url)).body.revisions).toHaveLength(2);
    // The JSON form of the same upload route is keyed the same way.
    const json = {
      files: [
        { path: 'SKILL.md', content: skillMd('idem') },
        { path: 'run.sh', content: 'echo 3' },
      ],
    };
    const jsonHeaders = key('revision-json');
    const viaJson = await s.api('POST', url, { body: json, headers: jsonHeaders });
    expect((await s.api('POST', url, { body: json, headers: jsonHeaders })).body).toEqual(viaJson.body);
    expect((await s.api('GET', url)).body.revisions).toHaveLength(3);
  });
});

describe('JSON creates', () => {
  it('POST /sessions/{id}/resources: a retry returns the first resource', async () => {
    const { session } = await readySession(s);
    const file = (await s.api('POST', '/files', { form: fileForm('mounted') })).body;
    const headers = key('resource');
    const body = { type: 'file', file_id: file.id };
    const first = await s.api('POST', `/sessions/${session.id}/resources`, { body, headers });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const again = await s.api('POST', `/sessions/${session.id}/resources`, { body, headers });
    expect(again.body).toEqual(first.body);
    expect((await s.api('GET', `/sessions/${session.id}/resources`)).body.data).toHaveLength(1);
  });

  it('POST /routines/{id}/run: a retry returns the first run and fires nothing more', async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const routine = (
      await s.api('POST', '/routines', {
        body: {
          name: 'once',
          target: { type: 'new_session', agent: agent.id },
          initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }],
        },
      })
    ).body;
    const headers = key('run');
    const first = await s.api('POST', `/routines/${routine.id}/run`, { headers });
    expect(first.body).toMatchObject({ error: null, session_id: expect.stringMatching(/^sess_/) });
    const again = await s.api('POST', `/routines/${routine.id}/run`, { headers });
    expect(again.body).toEqual(first.body);
    expect((await s.api('GET', `/routines/${routine.id}/runs`)).body.data).toHaveLength(1);
    expect(await prisma.session.count({ where: { agentId: agent.id } })).toBe(1);
    await waitForEvents(s, first.body.session_id, 'session.status_idle');
  });
});

describe('the route table', () => {
  // POSTs that change an existing thing or act without creating one: no Idempotency-Key.
  const verbs = new Set([
    'archiveAgent',
    'archiveSession',
    'archiveEnvironment',
    'archiveRoutine',
    'pauseRoutine',
    'resumeRoutine',
    'interruptSession',
    'rotateSessionResourceToken',
    'archiveMemoryStore',
    'redactMemoryVersion',
    // Deduplicated by their own ids (a platform's message id, a loopback message_id, the connect token).
    'receivePlatformInbound',
    'playLoopbackInbound',
    'claimConnectPage',
  ]);
  it('every other POST is marked idempotent, so the OpenAPI document lists the header', async () => {
    const posts = routes.filter((r) => r.method === 'POST');
    const missing = posts.filter((r) => !r.idempotent && !verbs.has(r.operationId)).map((r) => r.operationId);
    expect(missing).toEqual([]);
    const doc = (await s.api('GET', '/openapi.json')).body;
    for (const r of posts.filter((p) => p.idempotent)) {
      const op = doc.paths[r.path].post;
      expect(
        op.parameters.map((p: { name: string }) => p.name),
        r.operationId,
      ).toContain('Idempotency-Key');
    }
  });
});
