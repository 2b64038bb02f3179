// The spec's Limits table at each boundary, from both sides, over HTTP: the largest (or
// smallest) allowed value is accepted, one step past it is refused. Limits already tested on
// both sides elsewhere are not repeated: agent fields, instructions, skills and mcpServers
// (agents.test.ts), secrets (agents-secrets.test.ts), universe slug max and name
// (identity.test.ts), routine name (routines.test.ts), session title and system.message blocks
// (sessions.test.ts), expires_in_seconds (files.test.ts), the request rate (rate-limit.test.ts),
// header size and timeouts (server-limits.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type ApiResponse } from '../helpers/server.js';
import { startGitServer, type GitServer } from '../helpers/git-server.js';
import { expectError } from '../helpers/agents.js';
import { JSON_BODY_LIMIT_BYTES, JSON_MAX_DEPTH } from '../../src/http/input-hygiene.js';

const MiB = 1024 * 1024;
let s: TestServer;
let git: GitServer;
let agentId: string;
let fileId: string;
let sessionId: string;
let repo: { url: string; sha: string };
/** Eleven real vaults: vault_ids must name existing ones. */
const vaultIds: string[] = [];
const LONG_BRANCH = 'b'.repeat(255);

beforeAll(async () => {
  s = await startTestServer();
  git = await startGitServer();
  repo = git.createRepo('acme/limits', { 'README.md': 'r\n' });
  agentId = (await s.api('POST', '/agents', { body: {} })).body.agent.id;
  fileId = (await upload(new Blob(['a,b\n']), 'in.csv')).body.id;
  sessionId = (await s.api('POST', '/sessions', { body: { agent: agentId } })).body.session.id;
  for (let i = 0; i < 11; i++) vaultIds.push((await s.api('POST', '/vaults', { body: { name: `v${i}` } })).body.id);
  for (let i = 0; i < 3; i++)
    expect((await s.api('POST', `/sessions/${sessionId}/resources`, { body: { type: 'file', file_id: fileId, mount_path: `/r${i}.csv` } })).status).toBe(200);
});
afterAll(async () => {
  await s?.stop();
  await git?.close();
});

function upload(content: Blob, filename: string) {
  const form = new FormData();
  form.append('file', content, filename);
  return s.api('POST', '/files', { form });
}
function skill(extraBytes: number) {
  const skillMd = '---\nname: big-skill\ndescription: at the limit\n---\n';
  const form = new FormData();
  form.append('files', new Blob([skillMd]), 'SKILL.md');
  form.append('files', new Blob([new Uint8Array(32 * MiB - skillMd.length + extraBytes)]), 'data.bin');
  return s.api('POST', '/skills', { form });
}
/** A JSON body of exactly `bytes` bytes: an agent whose metadata holds one padding string. */
function agentBodyOf(bytes: number) {
  const empty = JSON.stringify({ metadata: { pad: '' } });
  return s.api('POST', '/agents', { raw: JSON.stringify({ metadata: { pad: 'p'.repeat(bytes - empty.length) } }) });
}
/** Agent metadata nested so that the whole body is `depth` levels deep. */
function agentBodyDepth(depth: number) {
  const inner = '{"a":'.repeat(depth - 1) + '"x"' + '}'.repeat(depth - 1);
  return s.api('POST', '/agents', { raw: `{"metadata":${inner}}` });
}
const session = (extra: Record<string, unknown>) => s.api('POST', '/sessions', { body: { agent: agentId, ...extra } });
const repoResource = (extra: Record<string, unknown>) =>
  session({ resources: [{ type: 'github_repository', url: repo.url, authorization_token: 't', ...extra }] });
const userMessage = { type: 'user.message', content: [{ type: 'text', text: 'x' }] };
const routine = (extra: Record<string, unknown>) =>
  s.api('POST', '/routines', { body: { name: 'r', target: { type: 'new_session', agent: agentId }, initial_events: [userMessage], ...extra } });
/** A valid cron expression of exactly 256 characters: every minute and hour listed, days 1 to 10. */
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i).join(',');
const CRON_256 = `${range(0, 59)} ${range(0, 23)} ${range(1, 10)} * *`;
const webhook = (extra: Record<string, unknown>) =>
  s.api('POST', '/webhooks', { body: { url: 'https://hooks.example.com/h', events: ['agent.created'], ...extra } });
const subscription = (credential: string) => s.api('PUT', '/model-subscriptions/anthropic', { body: { credential } });
const many = <T>(n: number, f: (i: number) => T) => Array.from({ length: n }, (_, i) => f(i));

type Call = () => Promise<ApiResponse>;
interface Boundary {
  limit: string;
  /** At the limit: accepted with this status (or, where acceptance is decided later, passes validation). */
  atLimit: Call;
  accepted: number | ((res: ApiResponse) => void);
  /** One past the limit, refused. */
  pastLimit: Call;
  refused: [number, string];
}

const TABLE: Boundary[] = [
  {
    limit: 'file upload: 32 MiB exactly / one byte more',
    atLimit: () => upload(new Blob([new Uint8Array(32 * MiB)]), 'exact.bin'),
    accepted: (res) => {
      expect(res.status).toBe(200);
      expect(res.body.size_bytes).toBe(33_554_432);
    },
    pastLimit: () => upload(new Blob([new Uint8Array(32 * MiB + 1)]), 'over.bin'),
    refused: [413, 'file_too_large'],
  },
  { limit: 'skill bundle: 32 MiB in all / one byte more', atLimit: () => skill(0), accepted: 201, pastLimit: () => skill(1), refused: [413, 'file_too_large'] },
  {
    limit: `JSON body: ${JSON_BODY_LIMIT_BYTES} bytes / one more`,
    atLimit: () => agentBodyOf(JSON_BODY_LIMIT_BYTES),
    accepted: 201,
    pastLimit: () => agentBodyOf(JSON_BODY_LIMIT_BYTES + 1),
    refused: [413, 'payload_too_large'],
  },
  {
    limit: `JSON nesting: ${JSON_MAX_DEPTH} levels / one more`,
    atLimit: () => agentBodyDepth(JSON_MAX_DEPTH),
    accepted: 201,
    pastLimit: () => agentBodyDepth(JSON_MAX_DEPTH + 1),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'universe slug: 3 characters / 2',
    atLimit: () => s.api('POST', '/universes', { body: { slug: 'abc' } }),
    accepted: 201,
    pastLimit: () => s.api('POST', '/universes', { body: { slug: 'ab' } }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'session instructions: 20 / 21',
    atLimit: () => session({ instructions: many(20, (i) => ({ name: `i${i}.md` })) }),
    accepted: 201,
    pastLimit: () => session({ instructions: many(21, (i) => ({ name: `i${i}.md` })) }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'session vault_ids: 10 / 11',
    atLimit: () => session({ vault_ids: vaultIds.slice(0, 10) }),
    accepted: 201,
    pastLimit: () => session({ vault_ids: vaultIds }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'budget amount: 15 characters / 16',
    atLimit: () => session({ budget: { type: 'limit', max_list_cost: { amount: '9'.repeat(15), currency: 'USD' } } }),
    accepted: 201,
    pastLimit: () => session({ budget: { type: 'limit', max_list_cost: { amount: '9'.repeat(16), currency: 'USD' } } }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'budget amount: 1 character / empty',
    atLimit: () => session({ budget: { type: 'limit', max_list_cost: { amount: '1', currency: 'USD' } } }),
    accepted: 201,
    pastLimit: () => session({ budget: { type: 'limit', max_list_cost: { amount: '', currency: 'USD' } } }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'session initial_events: 0 / (none below)',
    atLimit: () => session({ initial_events: [] }),
    accepted: 201,
    pastLimit: () => session({ initial_events: many(51, () => userMessage) }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'SendEvents events: 50 / 51',
    atLimit: () => s.api('POST', `/sessions/${sessionId}/events`, { body: { events: many(50, () => userMessage) } }),
    accepted: 202,
    pastLimit: () => s.api('POST', `/sessions/${sessionId}/events`, { body: { events: many(51, () => userMessage) } }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'SendEvents events: 1 / 0',
    atLimit: () => s.api('POST', `/sessions/${sessionId}/events`, { body: { events: [userMessage] } }),
    accepted: 202,
    pastLimit: () => s.api('POST', `/sessions/${sessionId}/events`, { body: { events: [] } }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'session resources at create: 100 / 101',
    atLimit: () => session({ resources: many(100, (i) => ({ type: 'file', file_id: fileId, mount_path: `/f${i}` })) }),
    accepted: 201,
    pastLimit: () => session({ resources: many(101, (i) => ({ type: 'file', file_id: fileId, mount_path: `/f${i}` })) }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'resource file_id: 128 characters (then looked up) / 129',
    atLimit: () => session({ resources: [{ type: 'file', file_id: `file_${'a'.repeat(123)}` }] }),
    accepted: (res) => {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    },
    pastLimit: () => session({ resources: [{ type: 'file', file_id: `file_${'a'.repeat(124)}` }] }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'resource mount_path: 4096 characters / 4097',
    atLimit: () =>
      session({ resources: [{ type: 'file', file_id: fileId, mount_path: `/${'m'.repeat(200)}`.repeat(20) + `/${'x'.repeat(4096 - 20 * 201 - 1)}` }] }),
    accepted: 201,
    pastLimit: () =>
      session({ resources: [{ type: 'file', file_id: fileId, mount_path: `/${'m'.repeat(200)}`.repeat(20) + `/${'x'.repeat(4097 - 20 * 201 - 1)}` }] }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'resource mount_path: 1 character / empty',
    atLimit: () => session({ resources: [{ type: 'file', file_id: fileId, mount_path: 'a' }] }),
    accepted: 201,
    pastLimit: () => session({ resources: [{ type: 'file', file_id: fileId, mount_path: '' }] }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'repository authorization_token: 1024 / 1025',
    atLimit: () => repoResource({ authorization_token: 't'.repeat(1024) }),
    accepted: 201,
    pastLimit: () => repoResource({ authorization_token: 't'.repeat(1025) }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'repository authorization_token: 1 / empty',
    atLimit: () => repoResource({ authorization_token: 't' }),
    accepted: 201,
    pastLimit: () => repoResource({ authorization_token: '' }),
    refused: [400, 'invalid_request'],
  },
  // repositories are cloned while the session provisions: at create only the shape is checked
  {
    limit: 'branch name: 255 / 256',
    atLimit: () => repoResource({ checkout: { type: 'branch', name: LONG_BRANCH } }),
    accepted: 201,
    pastLimit: () => repoResource({ checkout: { type: 'branch', name: `${LONG_BRANCH}b` } }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'branch name: 1 / empty',
    atLimit: () => repoResource({ checkout: { type: 'branch', name: 'main' } }),
    accepted: 201,
    pastLimit: () => repoResource({ checkout: { type: 'branch', name: '' } }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'commit sha: 7 / 6',
    atLimit: () => repoResource({ checkout: { type: 'commit', sha: repo.sha.slice(0, 7) } }),
    accepted: 201,
    pastLimit: () => repoResource({ checkout: { type: 'commit', sha: repo.sha.slice(0, 6) } }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'commit sha: 64 / 65',
    atLimit: () => repoResource({ checkout: { type: 'commit', sha: 'a'.repeat(64) } }),
    accepted: 201,
    pastLimit: () => repoResource({ checkout: { type: 'commit', sha: 'a'.repeat(65) } }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'files list ids[]: 100 / 101',
    atLimit: () => s.api('GET', `/files?${many(100, (i) => `ids[]=file_${i}`).join('&')}`),
    accepted: 200,
    pastLimit: () => s.api('GET', `/files?${many(101, (i) => `ids[]=file_${i}`).join('&')}`),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'session resources list limit: 1000 / 1001',
    atLimit: () => s.api('GET', `/sessions/${sessionId}/resources?limit=1000`),
    accepted: 200,
    pastLimit: () => s.api('GET', `/sessions/${sessionId}/resources?limit=1001`),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'session resources list limit: 1 / 0',
    atLimit: () => s.api('GET', `/sessions/${sessionId}/resources?limit=1`),
    accepted: (res) => {
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(1);
      expect(res.body.next_page).toEqual(expect.any(String));
    },
    pastLimit: () => s.api('GET', `/sessions/${sessionId}/resources?limit=0`),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'routine description: 2048 / 2049',
    atLimit: () => routine({ description: 'd'.repeat(2048) }),
    accepted: 201,
    pastLimit: () => routine({ description: 'd'.repeat(2049) }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'routine metadata key: 64 / 65',
    atLimit: () => routine({ metadata: { ['k'.repeat(64)]: 'v' } }),
    accepted: 201,
    pastLimit: () => routine({ metadata: { ['k'.repeat(65)]: 'v' } }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'routine metadata value: 512 / 513',
    atLimit: () => routine({ metadata: { k: 'v'.repeat(512) } }),
    accepted: 201,
    pastLimit: () => routine({ metadata: { k: 'v'.repeat(513) } }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'routine cron expression: 256 / 257',
    atLimit: () => routine({ schedule: { type: 'cron', expression: CRON_256, timezone: 'UTC' } }),
    accepted: 201,
    pastLimit: () => routine({ schedule: { type: 'cron', expression: `${CRON_256},`, timezone: 'UTC' } }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'routine initial_events: 50 / 51',
    atLimit: () => routine({ initial_events: many(50, () => userMessage) }),
    accepted: 201,
    pastLimit: () => routine({ initial_events: many(51, () => userMessage) }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'webhook url: 2048 characters / 2049',
    atLimit: () => webhook({ url: `https://hooks.example.com/${'a'.repeat(2048 - 26)}` }),
    accepted: 201,
    pastLimit: () => webhook({ url: `https://hooks.example.com/${'a'.repeat(2049 - 26)}` }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'webhook events: 32 entries / 33',
    atLimit: () => webhook({ events: many(32, () => 'agent.created') }),
    accepted: 201,
    pastLimit: () => webhook({ events: many(33, () => 'agent.created') }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'webhook events: 1 entry / none',
    atLimit: () => webhook({ events: ['agent.created'] }),
    accepted: 201,
    pastLimit: () => webhook({ events: [] }),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'subscription credential: 100000 / 100001',
    atLimit: () => subscription('c'.repeat(100_000)),
    accepted: 200,
    pastLimit: () => subscription('c'.repeat(100_001)),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'subscription credential: 1 / empty',
    atLimit: () => subscription('c'),
    accepted: 200,
    pastLimit: () => subscription(''),
    refused: [400, 'invalid_request'],
  },
  {
    limit: 'subscription label: 60 / 61',
    atLimit: () => s.api('PUT', '/model-subscriptions/openai', { body: { credential: 'c', label: 'l'.repeat(60) } }),
    accepted: 200,
    pastLimit: () => s.api('PUT', '/model-subscriptions/openai', { body: { credential: 'c', label: 'l'.repeat(61) } }),
    refused: [400, 'invalid_request'],
  },
];

describe('limits at their boundaries', () => {
  it('the cron expression at the limit is 256 characters', () => {
    expect(CRON_256).toHaveLength(256);
  });

  it.each(TABLE.map((row) => [row.limit, row] as const))('%s', async (_name, row) => {
    const ok = await row.atLimit();
    if (typeof row.accepted === 'number') expect(ok.status, JSON.stringify(ok.body).slice(0, 300)).toBe(row.accepted);
    else row.accepted(ok);
    expectError(await row.pastLimit(), ...row.refused);
  });
});
