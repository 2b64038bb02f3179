// Agents over real HTTP: shapes field by field, defaults, engines and models, every limit at its
// boundary, domain errors, PATCH rules, prompt versions, archive and delete.
// Secrets: agents-secrets.test.ts. Scopes and universes: agents-access.test.ts. GraphQL: agents-graphql.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { DETAIL_KEYS, LIST_KEYS, createAgent, expectError, seedSkill } from '../helpers/agents.js';
import { AGENT_TYPES, EFFORTS_BY_TYPE } from '../../src/agents/rules.js';
import { CAPABILITY_IDS } from '../../src/catalog/capability-ids.js';
import { REASONING_EFFORT_VALUES } from '../../src/sessions/contract.js';
import { currentHarness, defaultModel, engineModels } from '../../src/catalog/catalog.js';

let s: TestServer;
let skillA: { skillId: string; revisionId: string };
let skillB: { skillId: string; revisionId: string };
beforeAll(async () => {
  s = await startTestServer();
  skillA = await seedSkill(s);
  skillB = await seedSkill(s);
});
afterAll(async () => {
  await s?.stop();
});

const create = (body: unknown = {}) => createAgent(s, body);
const db = async () => (await import('../../src/db/client.js')).prisma;

describe('create', () => {
  it('an empty body makes a hermes agent with the default model and no capabilities', async () => {
    const res = await s.api('POST', '/agents', { body: {} });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['agent']);
    const a = res.body.agent;
    expect(Object.keys(a).sort()).toEqual(DETAIL_KEYS);
    const who = await s.api('GET', '/whoami');
    expect(a).toEqual({
      id: expect.stringMatching(/^agent_[0-9a-z]{26}$/),
      name: a.displayName,
      displayName: expect.stringMatching(/^[a-z]+-[a-z]+$/),
      slug: expect.stringMatching(/^[a-z0-9-]+$/),
      agentType: 'hermes',
      llm: 'claude-sonnet-4-5',
      harnessVersion: currentHarness('hermes'),
      reasoningEffort: null,
      capabilities: [],
      version: 1,
      archived: false,
      sessionCount: 0,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      description: null,
      prompt: null,
      promptVersion: null,
      mcpServers: [],
      skills: [],
      instructions: [],
      customData: [],
      metadata: {},
      defaultSessionId: null,
      universe: who.body.universe.slug,
      multiagent: null,
    });
    expect(Math.abs(Date.parse(a.createdAt) - Date.now())).toBeLessThan(60_000);
  });

  it('a request without a body is the same as {}', async () => {
    const res = await s.api('POST', '/agents');
    expect(res.status).toBe(201);
    expect(res.body.agent).toMatchObject({ agentType: 'hermes', capabilities: [] });
  });

  it('malformed JSON and non-object bodies are 400 invalid_request', async () => {
    expectError(await s.api('POST', '/agents', { raw: '{"name": ' }), 400, 'invalid_request');
    expectError(await s.api('POST', '/agents', { body: [] }), 400, 'invalid_request');
    expectError(await s.api('POST', '/agents', { body: 'hermes' }), 400, 'invalid_request');
    expectError(await s.api('POST', '/agents', { body: { name: 5 } }), 400, 'invalid_request');
  });

  it('takes every field and returns them in the detail', async () => {
    const a = await create({
      name: 'Researcher',
      description: 'finds things',
      agentType: 'claude_code',
      llm: 'claude-opus-4-5',
      reasoningEffort: 'high',
      prompt: 'You research.',
      displayName: 'Research Bot',
      capabilities: ['exa.search', 'tinyfish.fetch'],
      instructions: [{ name: 'STYLE.md', content: 'be brief' }, { name: 'EMPTY.md' }],
      skills: [
        { type: 'skill', skillId: skillA.skillId },
        { type: 'skill', skillId: skillB.skillId, version: skillB.revisionId },
        { type: 'github', url: 'https://github.com/o/r', ref: 'main', tokenSecretRef: 'GH_TOKEN' },
        { type: 'github', url: 'https://github.com/o/public' },
      ],
      mcpServers: [
        { name: 'search', url: 'https://mcp.example.com/sse', tools: { include: ['find'] } },
        { type: 'url', name: 'all', url: 'https://mcp2.example.com/' },
      ],
      customData: [
        { id: 'sheet1', name: 'sales_q1', kind: 'spreadsheet', config: { tab: 'Q1' } },
        { id: 'api', name: 'crm', kind: 'private_api', scope: 'user', description: 'the CRM', uri: 'https://crm.example.com' },
      ],
      metadata: { team: 'growth', nested: { a: [1, 2] } },
    });
    expect(a).toMatchObject({
      name: 'Researcher',
      description: 'finds things',
      agentType: 'claude_code',
      llm: 'claude-opus-4-5',
      reasoningEffort: 'high',
      harnessVersion: currentHarness('claude_code'),
      prompt: 'You research.',
      promptVersion: 1,
      displayName: 'Research Bot',
      slug: 'research-bot',
      capabilities: ['exa.search', 'tinyfish.fetch'],
      version: 1,
    });
    expect(a.instructions).toEqual([
      { name: 'STYLE.md', content: 'be brief' },
      { name: 'EMPTY.md', content: '' },
    ]);
    expect(a.skills).toEqual([
      { type: 'skill', skillId: skillA.skillId, version: 'latest' },
      { type: 'skill', skillId: skillB.skillId, version: skillB.revisionId },
      { type: 'github', url: 'https://github.com/o/r', ref: 'main', tokenSecretRef: 'GH_TOKEN' },
      { type: 'github', url: 'https://github.com/o/public', ref: null, tokenSecretRef: null },
    ]);
    expect(a.mcpServers).toEqual([
      { type: 'url', name: 'search', url: 'https://mcp.example.com/sse', tools: { include: ['find'], exclude: [] } },
      { type: 'url', name: 'all', url: 'https://mcp2.example.com/', tools: { include: [], exclude: [] } },
    ]);
    expect(a.customData).toEqual([
      { id: 'sheet1', name: 'sales_q1', kind: 'spreadsheet', scope: 'creator', description: null, uri: null, config: { tab: 'Q1' } },
      { id: 'api', name: 'crm', kind: 'private_api', scope: 'user', description: 'the CRM', uri: 'https://crm.example.com', config: {} },
    ]);
    expect(a.metadata).toEqual({ team: 'growth', nested: { a: [1, 2] } });
  });

  it("a fetched agent's lists can be sent back unchanged", async () => {
    const a = await create({
      skills: [{ type: 'github', url: 'https://github.com/o/r' }],
      customData: [{ id: 'x', name: 'x', kind: 'doc' }],
      mcpServers: [{ name: 'm', url: 'https://m.example' }],
      instructions: [{ name: 'A.md' }],
    });
    const back = await s.api('POST', '/agents', {
      body: { skills: a.skills, customData: a.customData, mcpServers: a.mcpServers, instructions: a.instructions },
    });
    expect(back.status, JSON.stringify(back.body)).toBe(201);
    expect(back.body.agent.skills).toEqual(a.skills);
    const patched = await s.api('PATCH', `/agents/${a.id}`, { body: { skills: a.skills, customData: a.customData, mcpServers: a.mcpServers } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  });

  it('mints unique slugs from displayName; name defaults to displayName', async () => {
    const a = await create({ displayName: 'Twin' });
    const b = await create({ displayName: 'Twin' });
    expect(a).toMatchObject({ slug: 'twin', name: 'Twin' });
    expect(b.slug).toMatch(/^twin-[0-9a-f]{6}$/);
    expect((await create({ displayName: 'Ünïcode  Agent!!' })).slug).toBe('unicode-agent');
    expect((await create({ displayName: '***' })).slug).toMatch(/^agent(-[0-9a-f]{6})?$/);
    const auto = await create();
    expect(auto.slug).toMatch(new RegExp(`^${auto.displayName}(-[0-9a-f]{6})?$`));
  });

  it('deduplicates capabilities; every known capability id is accepted', async () => {
    expect((await create({ capabilities: ['mm.i2v', 'mm.i2v'] })).capabilities).toEqual(['mm.i2v']);
    expect((await create({ capabilities: [...CAPABILITY_IDS] })).capabilities).toEqual([...CAPABILITY_IDS]);
  });

  it('an explicit prompt, even empty, is prompt version 1; null is no prompt', async () => {
    expect(await create({ prompt: '' })).toMatchObject({ prompt: '', promptVersion: 1 });
    expect(await create({ prompt: null })).toMatchObject({ prompt: null, promptVersion: null });
  });

  it('refuses unknown capability ids, unknown fields and malformed items with 400 invalid_request', async () => {
    const bad = await s.api('POST', '/agents', { body: { capabilities: ['exa.search', 'made.up'] } });
    expectError(bad, 400, 'invalid_request');
    expect(bad.body.error.message).toContain('made.up');
    const unknown = await s.api('POST', '/agents', { body: { nope: true } });
    expectError(unknown, 400, 'invalid_request');
    expect(unknown.body.error.message).toContain('nope');
    for (const body of [
      { agentType: 'robot' },
      { reasoningEffort: 'turbo' },
      { llm: '' },
      { displayName: '' },
      { capabilities: 'exa.search' },
      { metadata: [] },
      { instructions: [{ name: 'notes.txt' }] },
      { instructions: [{ name: '' }] },
      { instructions: [{ content: 'x' }] },
      { instructions: [{ name: 'a.md', extra: 1 }] },
      { customData: [{ id: 'x', name: 'Bad-Name', kind: 'doc' }] },
      { customData: [{ id: '', name: 'ok', kind: 'doc' }] },
      { customData: [{ id: 'x', name: 'ok', kind: 'video' }] },
      { customData: [{ id: 'x', name: 'ok', kind: 'doc', scope: 'everyone' }] },
      { customData: [{ id: 'x', name: 'ok', kind: 'doc', config: { n: 1 } }] },
      { customData: [{ id: 'x', name: 'ok' }] },
      { mcpServers: [{ name: 'x', url: 'not a url' }] },
      { mcpServers: [{ name: 'x' }] },
      { mcpServers: [{ url: 'https://x.example' }] },
      { mcpServers: [{ type: 'stdio', name: 'x', url: 'https://x.example' }] },
      { mcpServers: [{ name: 'x', url: 'https://x.example', tools: { include: [''] } }] },
      { mcpServers: [{ name: 'x', url: 'https://x.example', authorization_token: 'secret' }] },
      { skills: [{ type: 'skill', skillId: 's', version: 'v2' }] },
      { skills: [{ type: 'skill' }] },
      { skills: [{ type: 'github' }] },
      { skills: [{ type: 'github', url: 'nope' }] },
      { skills: [{ type: 'github', url: 'https://github.com/o/r', skillId: 'x' }] },
      { skills: [{ type: 'zip', url: 'https://x' }] },
      { skills: [{ skillId: 'skill_1' }] },
    ]) {
      expectError(await s.api('POST', '/agents', { body }), 400, 'invalid_request');
    }
  });

  it.each([
    ['name', (n: number) => ({ name: 'n'.repeat(n) }), 60],
    ['displayName', (n: number) => ({ displayName: 'd'.repeat(n) }), 60],
    ['description', (n: number) => ({ description: 'x'.repeat(n) }), 500],
    ['prompt', (n: number) => ({ prompt: 'p'.repeat(n) }), 100_000],
    [
      'skills',
      (n: number) => ({
        skills: Array.from({ length: n }, (_, i) =>
          i % 2 ? { type: 'skill', skillId: skillA.skillId } : { type: 'github', url: `https://github.com/o/r${i}` },
        ),
      }),
      20,
    ],
    ['mcpServers', (n: number) => ({ mcpServers: Array.from({ length: n }, (_, i) => ({ name: `m${i}`, url: 'https://m.example' })) }), 20],
    ['mcp server name', (n: number) => ({ mcpServers: [{ name: 'm'.repeat(n), url: 'https://m.example' }] }), 255],
    [
      'tools.include',
      (n: number) => ({ mcpServers: [{ name: 'm', url: 'https://m.example', tools: { include: Array.from({ length: n }, (_, i) => `t${i}`) } }] }),
      200,
    ],
    [
      'tools.exclude',
      (n: number) => ({ mcpServers: [{ name: 'm', url: 'https://m.example', tools: { exclude: Array.from({ length: n }, (_, i) => `t${i}`) } }] }),
      200,
    ],
    ['instructions', (n: number) => ({ instructions: Array.from({ length: n }, (_, i) => ({ name: `i${i}.md` })) }), 20],
  ] as const)('%s: %i accepted, one more refused', async (_name, body, max) => {
    expect((await s.api('POST', '/agents', { body: body(max) })).status).toBe(201);
    expectError(await s.api('POST', '/agents', { body: body(max + 1) }), 400, 'invalid_request');
  });

  it('a 150,000-character instruction name is refused at once, without blocking other requests (no regex backtracking)', { timeout: 5000 }, async () => {
    const slow = s.api('POST', '/agents', { body: { instructions: [{ name: 'A'.repeat(150_000) }] } });
    await new Promise((r) => setTimeout(r, 100));
    const [res, who] = await Promise.all([slow, s.api('GET', '/whoami')]);
    expectError(res, 400, 'invalid_request');
    expect(who.status).toBe(200);
    expect((await s.api('POST', '/agents', { body: { instructions: [{ name: `${'A'.repeat(252)}.md` }] } })).status).toBe(201);
    expectError(await s.api('POST', '/agents', { body: { instructions: [{ name: 'md' }] } }), 400, 'invalid_request');
  });

  it('mcp server name must be non-empty', async () => {
    expectError(await s.api('POST', '/agents', { body: { mcpServers: [{ name: '', url: 'https://m.example' }] } }), 400, 'invalid_request');
    expect((await s.api('POST', '/agents', { body: { mcpServers: [{ name: 'm', url: 'https://m.example' }] } })).status).toBe(201);
  });

  it('honours Idempotency-Key: a retry returns the first agent and creates nothing', async () => {
    const headers = { 'idempotency-key': 'create-agent-1' };
    const first = await s.api('POST', '/agents', { body: { displayName: 'Once' }, headers });
    const again = await s.api('POST', '/agents', { body: { displayName: 'Once' }, headers });
    expect(again.status).toBe(201);
    expect(again.body.agent.id).toBe(first.body.agent.id);
    const list = await s.api('GET', '/agents');
    expect(list.body.agents.filter((a: any) => a.displayName === 'Once')).toHaveLength(1);
    expectError(await s.api('POST', '/agents', { body: { displayName: 'Other' }, headers }), 400, 'invalid_request');
  });
});

describe('engines and models', () => {
  it.each(AGENT_TYPES)('%s: created with its default model and current harness', async (agentType) => {
    const a = await create({ agentType });
    expect(a).toMatchObject({ agentType, llm: defaultModel(agentType), harnessVersion: currentHarness(agentType) });
    for (const m of engineModels(agentType)) expect((await s.api('POST', '/agents', { body: { agentType, llm: m.id } })).status).toBe(201);
  });

  it('hermes runs Anthropic and OpenAI models; each engine refuses models it does not run (422 invalid_spec)', async () => {
    for (const llm of ['claude-sonnet-4-5', 'claude-opus-4-5', 'claude-haiku-4-5', 'gpt-5', 'gpt-5-mini', 'gpt-4.1', 'o3', 'o4-mini']) {
      expect((await create({ llm })).llm).toBe(llm);
    }
    expect((await create({ llm: 'claude-sonnet-4-5-20250929' })).llm).toBe('claude-sonnet-4-5-20250929');
    expectError(await s.api('POST', '/agents', { body: { llm: 'gpt-2' } }), 422, 'invalid_spec');
    expectError(await s.api('POST', '/agents', { body: { agentType: 'codex', llm: 'claude-sonnet-4-5' } }), 422, 'invalid_spec');
    expectError(await s.api('POST', '/agents', { body: { agentType: 'claude_code', llm: 'gpt-5' } }), 422, 'invalid_spec');
    expectError(await s.api('POST', '/agents', { body: { agentType: 'kimi_code', llm: 'claude-sonnet-4-5' } }), 422, 'invalid_spec');
  });

  it('reasoningEffort: exactly the values of the spec table per agentType (others 422 invalid_spec)', async () => {
    for (const agentType of AGENT_TYPES) {
      for (const effort of REASONING_EFFORT_VALUES) {
        const res = await s.api('POST', '/agents', { body: { agentType, reasoningEffort: effort } });
        if (EFFORTS_BY_TYPE[agentType].includes(effort)) {
          expect(res.status, `${agentType} ${effort}`).toBe(201);
          expect(res.body.agent.reasoningEffort).toBe(effort);
        } else {
          expectError(res, 422, 'invalid_spec');
        }
      }
      // null (or omitted) is the engine default everywhere, even where efforts are not supported.
      expect((await create({ agentType, reasoningEffort: null })).reasoningEffort).toBeNull();
    }
  });

  it('matches the spec table literally', () => {
    expect(EFFORTS_BY_TYPE).toEqual({
      hermes: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max', 'ultra'],
      claude_code: ['low', 'medium', 'high', 'xhigh', 'max'],
      codex: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'],
      openclaw: [],
      pi: ['off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'],
      dsh: [],
      kimi_code: [],
      opencode: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'],
    });
  });
});

describe('skill attachments', () => {
  it('must name a skill of the universe, and a pinned revision of that skill (422 invalid_spec otherwise)', async () => {
    await s.api('POST', '/universes', { body: { slug: 'skills-elsewhere' } });
    const foreign = await seedSkill(s, 'skills-elsewhere');
    for (const skills of [
      [{ type: 'skill', skillId: 'skill_missing' }],
      [{ type: 'skill', skillId: foreign.skillId }],
      [{ type: 'skill', skillId: skillA.skillId, version: skillB.revisionId }],
      [{ type: 'skill', skillId: skillA.skillId, version: 'skr_missing' }],
      [
        { type: 'skill', skillId: skillA.skillId },
        { type: 'skill', skillId: 'skill_missing' },
      ],
    ]) {
      expectError(await s.api('POST', '/agents', { body: { skills } }), 422, 'invalid_spec');
    }
    const a = await create({ skills: [{ type: 'skill', skillId: skillA.skillId, version: skillA.revisionId }] });
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { skills: [{ type: 'skill', skillId: foreign.skillId }] } }), 422, 'invalid_spec');
    expect((await s.api('GET', `/agents/${a.id}`)).body.agent.skills).toEqual([{ type: 'skill', skillId: skillA.skillId, version: skillA.revisionId }]);
    const inB = await s.api('POST', '/agents', {
      headers: { 'x-universe': 'skills-elsewhere' },
      body: { skills: [{ type: 'skill', skillId: foreign.skillId }] },
    });
    expect(inB.status).toBe(201);
  });
});

describe('read', () => {
  it('lists items with the list fields only, newest first; detail by id equals the create answer', async () => {
    const older = await create({ displayName: 'Older' });
    const a = await create({ displayName: 'Listed', prompt: 'p' });
    const list = await s.api('GET', '/agents');
    expect(list.status).toBe(200);
    expect(Object.keys(list.body)).toEqual(['agents', 'nextCursor']);
    expect(list.body.nextCursor).toBeNull();
    for (const item of list.body.agents) expect(Object.keys(item).sort()).toEqual([...LIST_KEYS].sort());
    const ids = list.body.agents.map((x: any) => x.id);
    expect(ids[0]).toBe(a.id);
    expect(ids.indexOf(older.id)).toBe(1);
    expect(ids).toEqual([...ids].sort().reverse());
    const {
      slug,
      description,
      prompt,
      promptVersion,
      mcpServers,
      skills,
      instructions,
      customData,
      metadata,
      defaultSessionId,
      universe,
      multiagent,
      ...listed
    } = a;
    expect(list.body.agents[0]).toEqual(listed);
    const one = await s.api('GET', `/agents/${a.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ agent: a });
  });

  it('?archived=true|false filters; anything else is 400', async () => {
    const live = await create();
    const gone = await create();
    await s.api('POST', `/agents/${gone.id}/archive`);
    const archived = (await s.api('GET', '/agents?archived=true')).body.agents.map((x: any) => x.id);
    const active = (await s.api('GET', '/agents?archived=false')).body.agents.map((x: any) => x.id);
    expect(archived).toContain(gone.id);
    expect(archived).not.toContain(live.id);
    expect(active).toContain(live.id);
    expect(active).not.toContain(gone.id);
    expectError(await s.api('GET', '/agents?archived=maybe'), 400, 'invalid_request');
  });

  it('unknown ids are 404 not_found on every agent path; the slug is not an address', async () => {
    const a = await create({ displayName: 'Addressed' });
    for (const [method, path, body] of [
      ['GET', '/agents/agent_nope', undefined],
      ['PATCH', '/agents/agent_nope', {}],
      ['DELETE', '/agents/agent_nope', undefined],
      ['POST', '/agents/agent_nope/archive', undefined],
      ['PUT', '/agents/agent_nope/prompt', { prompt: 'x' }],
      ['GET', '/agents/agent_nope/prompt/versions', undefined],
      ['GET', '/agents/agent_nope/secrets', undefined],
      ['PUT', '/agents/agent_nope/secrets/K', { value: 'v' }],
      ['DELETE', '/agents/agent_nope/secrets/K', undefined],
      ['GET', `/agents/${a.slug}`, undefined],
    ] as const) {
      expectError(await s.api(method, path, { body }), 404, 'not_found');
    }
  });
});

describe('update', () => {
  it('replaces capabilities whole, [] revokes all; merges metadata with null deleting; replaces skills and mcpServers; bumps version', async () => {
    const a = await create({
      capabilities: ['exa.search', 'exa.contents'],
      metadata: { keep: 1, drop: 2 },
      mcpServers: [{ name: 'a', url: 'https://a.example' }],
      skills: [{ type: 'skill', skillId: skillA.skillId }],
    });
    let r = await s.api('PATCH', `/agents/${a.id}`, { body: { capabilities: ['mm.i2v'] } });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.agent).sort()).toEqual(DETAIL_KEYS);
    expect(r.body.agent).toMatchObject({ capabilities: ['mm.i2v'], version: 2, metadata: { keep: 1, drop: 2 }, mcpServers: [{ name: 'a' }] });
    r = await s.api('PATCH', `/agents/${a.id}`, { body: { capabilities: [] } });
    expect(r.body.agent).toMatchObject({ capabilities: [], version: 3 });
    r = await s.api('PATCH', `/agents/${a.id}`, { body: { metadata: { drop: null, added: 'x', keep: { now: 'an object' } } } });
    expect(r.body.agent.metadata).toEqual({ keep: { now: 'an object' }, added: 'x' });
    r = await s.api('PATCH', `/agents/${a.id}`, { body: { metadata: { never: null } } });
    expect(r.body.agent.metadata).toEqual({ keep: { now: 'an object' }, added: 'x' });
    r = await s.api('PATCH', `/agents/${a.id}`, {
      body: { mcpServers: [{ name: 'b', url: 'https://b.example' }], skills: [{ type: 'skill', skillId: skillB.skillId, version: skillB.revisionId }] },
    });
    expect(r.body.agent.mcpServers).toEqual([{ type: 'url', name: 'b', url: 'https://b.example', tools: { include: [], exclude: [] } }]);
    expect(r.body.agent.skills).toEqual([{ type: 'skill', skillId: skillB.skillId, version: skillB.revisionId }]);
    expect(r.body.agent.version).toBe(6);
    r = await s.api('PATCH', `/agents/${a.id}`, { body: { skills: [], mcpServers: [] } });
    expect(r.body.agent).toMatchObject({ skills: [], mcpServers: [], capabilities: [], version: 7 });
    r = await s.api('PATCH', `/agents/${a.id}`, { body: {} });
    expect(r.body.agent.version).toBe(8);
    expect((await s.api('GET', `/agents/${a.id}`)).body.agent).toEqual(r.body.agent);
  });

  it('omitted fields are preserved', async () => {
    const a = await create({
      displayName: 'Keep Me',
      description: 'd',
      prompt: 'p',
      capabilities: ['exa.search'],
      metadata: { m: 1 },
      reasoningEffort: 'low',
      customData: [{ id: 'c', name: 'c', kind: 'doc' }],
      instructions: [{ name: 'I.md' }],
    });
    const r = await s.api('PATCH', `/agents/${a.id}`, { body: { displayName: 'Renamed' } });
    const { displayName, version, ...rest } = r.body.agent;
    const { displayName: _d, version: _v, ...before } = a;
    expect(rest).toEqual(before);
    expect(displayName).toBe('Renamed');
    expect(version).toBe(2);
    expect(rest.slug).toBe('keep-me');
  });

  it('also takes name, description (null clears), llm, instructions and customData; not agentType or prompt', async () => {
    const a = await create({ description: 'old' });
    const r = await s.api('PATCH', `/agents/${a.id}`, {
      body: {
        name: 'New',
        description: null,
        llm: 'gpt-5',
        instructions: [{ name: 'N.md', content: 'n' }],
        customData: [{ id: 'd', name: 'd', kind: 'other' }],
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.agent).toMatchObject({
      name: 'New',
      description: null,
      llm: 'gpt-5',
      instructions: [{ name: 'N.md', content: 'n' }],
      customData: [{ id: 'd', kind: 'other', scope: 'creator' }],
    });
    for (const body of [{ agentType: 'codex' }, { prompt: 'x' }, { slug: 'mine' }, { version: 3 }, { archived: true }, { unknown: 1 }]) {
      expectError(await s.api('PATCH', `/agents/${a.id}`, { body }), 400, 'invalid_request');
    }
    const p = await s.api('PATCH', `/agents/${a.id}`, { body: { prompt: 'x' } });
    expect(p.body.error.message).toContain('PUT /agents/{id}/prompt');
  });

  it('llm and reasoningEffort must fit the engine (422 invalid_spec); reasoningEffort null clears', async () => {
    const a = await create({ agentType: 'claude_code', reasoningEffort: 'high' });
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { llm: 'gpt-5' } }), 422, 'invalid_spec');
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { reasoningEffort: 'minimal' } }), 422, 'invalid_spec');
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { reasoningEffort: 'turbo' } }), 400, 'invalid_request');
    let r = await s.api('PATCH', `/agents/${a.id}`, { body: { reasoningEffort: 'max', llm: 'claude-haiku-4-5' } });
    expect(r.body.agent).toMatchObject({ reasoningEffort: 'max', llm: 'claude-haiku-4-5', version: 2 });
    r = await s.api('PATCH', `/agents/${a.id}`, { body: { reasoningEffort: null } });
    expect(r.body.agent).toMatchObject({ reasoningEffort: null, version: 3 });
    const o = await create({ agentType: 'openclaw' });
    expectError(await s.api('PATCH', `/agents/${o.id}`, { body: { reasoningEffort: 'low' } }), 422, 'invalid_spec');
    expect((await s.api('PATCH', `/agents/${o.id}`, { body: { reasoningEffort: null } })).status).toBe(200);
    // A refused PATCH changes nothing, not even the version.
    expect((await s.api('GET', `/agents/${a.id}`)).body.agent.version).toBe(3);
  });

  it("harnessVersion moves the agent to the platform's current engine version", async () => {
    const a = await create({ agentType: 'codex' });
    const prisma = await db();
    await prisma.agent.update({ where: { id: a.id }, data: { harnessVersion: '0.0.1-old' } });
    expect((await s.api('GET', `/agents/${a.id}`)).body.agent.harnessVersion).toBe('0.0.1-old');
    const r = await s.api('PATCH', `/agents/${a.id}`, { body: { harnessVersion: 'latest' } });
    expect(r.body.agent.harnessVersion).toBe(currentHarness('codex'));
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { harnessVersion: '' } }), 400, 'invalid_request');
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { harnessVersion: null } }), 400, 'invalid_request');
    // Any PATCH moves it too (the next session runs the current CLI); a refused one does not.
    await prisma.agent.update({ where: { id: a.id }, data: { harnessVersion: '0.0.2-old' } });
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { displayName: 'x'.repeat(61) } }), 400, 'invalid_request');
    expect((await s.api('GET', `/agents/${a.id}`)).body.agent.harnessVersion).toBe('0.0.2-old');
    const renamed = await s.api('PATCH', `/agents/${a.id}`, { body: { displayName: 'Renamed' } });
    expect(renamed.body.agent.harnessVersion).toBe(currentHarness('codex'));
  });

  it.each([
    ['displayName', (n: number) => ({ displayName: 'x'.repeat(n) }), 60],
    ['name', (n: number) => ({ name: 'x'.repeat(n) }), 60],
    ['description', (n: number) => ({ description: 'x'.repeat(n) }), 500],
    ['skills', (n: number) => ({ skills: Array.from({ length: n }, (_, i) => ({ type: 'github', url: `https://github.com/o/r${i}` })) }), 20],
    ['mcpServers', (n: number) => ({ mcpServers: Array.from({ length: n }, (_, i) => ({ name: `m${i}`, url: 'https://m.example' })) }), 20],
    [
      'tools.include',
      (n: number) => ({ mcpServers: [{ name: 'm', url: 'https://m.example', tools: { include: Array.from({ length: n }, (_, i) => `t${i}`) } }] }),
      200,
    ],
  ] as const)('PATCH %s: %i accepted, one more refused', async (_name, body, max) => {
    const a = await create();
    expect((await s.api('PATCH', `/agents/${a.id}`, { body: body(max) })).status).toBe(200);
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: body(max + 1) }), 400, 'invalid_request');
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { capabilities: ['nope'] } }), 400, 'invalid_request');
  });

  it('expectedVersion mismatch is 409 version_conflict; a match applies', async () => {
    const a = await create();
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { metadata: { a: 1 }, expectedVersion: 7 } }), 409, 'version_conflict');
    const ok = await s.api('PATCH', `/agents/${a.id}`, { body: { metadata: { a: 1 }, expectedVersion: 1 } });
    expect(ok.body.agent.version).toBe(2);
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { metadata: { a: 2 }, expectedVersion: 1 } }), 409, 'version_conflict');
    expect((await s.api('GET', `/agents/${a.id}`)).body.agent.metadata).toEqual({ a: 1 });
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { expectedVersion: 0 } }), 400, 'invalid_request');
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { expectedVersion: 1.5 } }), 400, 'invalid_request');
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { expectedVersion: '2' } }), 400, 'invalid_request');
  });

  it('concurrent PATCHes with the same expectedVersion: exactly one wins', async () => {
    const a = await create();
    const answers = await Promise.all(['x', 'y', 'z'].map((w) => s.api('PATCH', `/agents/${a.id}`, { body: { metadata: { w }, expectedVersion: 1 } })));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    for (const r of answers.filter((x) => x.status === 409)) expectError(r, 409, 'version_conflict');
    expect((await s.api('GET', `/agents/${a.id}`)).body.agent.version).toBe(2);
  });

  it('concurrent PATCHes without expectedVersion all apply: no lost metadata keys, one version each', async () => {
    const a = await create();
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => s.api('PATCH', `/agents/${a.id}`, { body: { metadata: { [`k${i}`]: i } } })));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const after = (await s.api('GET', `/agents/${a.id}`)).body.agent;
    expect(after.version).toBe(6);
    expect(after.metadata).toEqual({ k0: 0, k1: 1, k2: 2, k3: 3, k4: 4 });
  });
});

describe('prompt versions', () => {
  it('a changed prompt is a new version; the same prompt is unchanged; versions list newest first', async () => {
    const a = await create({ prompt: 'v1' });
    expect(await s.api('PUT', `/agents/${a.id}/prompt`, { body: { prompt: 'v1' } })).toMatchObject({ status: 200, body: { version: 1, unchanged: true } });
    expect((await s.api('GET', `/agents/${a.id}`)).body.agent.version).toBe(1);
    expect((await s.api('PUT', `/agents/${a.id}/prompt`, { body: { prompt: 'v2', note: 'shorter' } })).body).toEqual({ version: 2, unchanged: false });
    expect((await s.api('PUT', `/agents/${a.id}/prompt`, { body: { prompt: 'v1' } })).body).toEqual({ version: 3, unchanged: false });
    const versions = await s.api('GET', `/agents/${a.id}/prompt/versions`);
    expect(versions.status).toBe(200);
    expect(Object.keys(versions.body)).toEqual(['versions']);
    expect(versions.body.versions.map((v: any) => [v.version, v.active, v.content, v.note])).toEqual([
      [3, true, 'v1', null],
      [2, false, 'v2', 'shorter'],
      [1, false, 'v1', null],
    ]);
    for (const v of versions.body.versions) expect(Object.keys(v).sort()).toEqual(['active', 'content', 'createdAt', 'note', 'version']);
    const detail = (await s.api('GET', `/agents/${a.id}`)).body.agent;
    expect(detail).toMatchObject({ prompt: 'v1', promptVersion: 3, version: 3 });
  });

  it('an agent created without a prompt starts at version 1; no versions before', async () => {
    const a = await create();
    expect((await s.api('GET', `/agents/${a.id}/prompt/versions`)).body).toEqual({ versions: [] });
    expect((await s.api('PUT', `/agents/${a.id}/prompt`, { body: { prompt: '' } })).body).toEqual({ version: 1, unchanged: false });
    expect((await s.api('PUT', `/agents/${a.id}/prompt`, { body: { prompt: '' } })).body).toEqual({ version: 1, unchanged: true });
  });

  it('concurrent saves number their versions one after the other', async () => {
    const a = await create();
    const answers = await Promise.all(['a', 'b', 'c', 'd'].map((prompt) => s.api('PUT', `/agents/${a.id}/prompt`, { body: { prompt } })));
    expect(answers.map((r) => r.body.version).sort()).toEqual([1, 2, 3, 4]);
    const versions = (await s.api('GET', `/agents/${a.id}/prompt/versions`)).body.versions;
    expect(versions.filter((v: any) => v.active)).toHaveLength(1);
    expect(versions[0].active).toBe(true);
  });

  it('prompt is required, a string, at most 100000 characters; note at most 500', async () => {
    const a = await create();
    expectError(await s.api('PUT', `/agents/${a.id}/prompt`, { body: {} }), 400, 'invalid_request');
    expectError(await s.api('PUT', `/agents/${a.id}/prompt`, { body: { prompt: null } }), 400, 'invalid_request');
    expectError(await s.api('PUT', `/agents/${a.id}/prompt`, { body: { prompt: 7 } }), 400, 'invalid_request');
    expectError(await s.api('PUT', `/agents/${a.id}/prompt`, { body: { prompt: 'x', extra: 1 } }), 400, 'invalid_request');
    expect((await s.api('PUT', `/agents/${a.id}/prompt`, { body: { prompt: 'p'.repeat(100_000) } })).status).toBe(200);
    expectError(await s.api('PUT', `/agents/${a.id}/prompt`, { body: { prompt: 'p'.repeat(100_001) } }), 400, 'invalid_request');
    expect((await s.api('PUT', `/agents/${a.id}/prompt`, { body: { prompt: 'n', note: 'n'.repeat(500) } })).status).toBe(200);
    expectError(await s.api('PUT', `/agents/${a.id}/prompt`, { body: { prompt: 'm', note: 'n'.repeat(501) } }), 400, 'invalid_request');
  });
});

describe('archive and delete', () => {
  it('archive makes the agent read-only; archive is idempotent; reads still work', async () => {
    const a = await create({ prompt: 'p' });
    await s.api('PUT', `/agents/${a.id}/secrets/KEEP`, { body: { value: 'v' } });
    const r = await s.api('POST', `/agents/${a.id}/archive`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.agent).sort()).toEqual(DETAIL_KEYS);
    expect(r.body.agent).toMatchObject({ archived: true, version: 3 });
    const again = await s.api('POST', `/agents/${a.id}/archive`);
    expect(again.body.agent).toMatchObject({ archived: true, version: 3 });
    for (const [method, path, body] of [
      ['PATCH', `/agents/${a.id}`, { metadata: { x: 1 } }],
      ['PATCH', `/agents/${a.id}`, {}],
      ['PUT', `/agents/${a.id}/prompt`, { prompt: 'x' }],
      ['PUT', `/agents/${a.id}/secrets/K`, { value: 'x' }],
      ['DELETE', `/agents/${a.id}/secrets/KEEP`, undefined],
    ] as const) {
      expectError(await s.api(method, path, { body }), 409, 'conflict');
    }
    // A stale expectedVersion on an archived agent: read-only wins.
    expectError(await s.api('PATCH', `/agents/${a.id}`, { body: { expectedVersion: 1 } }), 409, 'conflict');
    expect((await s.api('GET', `/agents/${a.id}`)).body.agent).toMatchObject({ archived: true, version: 3, prompt: 'p' });
    expect((await s.api('GET', `/agents/${a.id}/prompt/versions`)).status).toBe(200);
    expect((await s.api('GET', `/agents/${a.id}/secrets`)).body.secrets).toEqual([{ key: 'KEEP', description: '' }]);
    expect((await s.api('GET', '/agents')).body.agents.find((x: any) => x.id === a.id).archived).toBe(true);
  });

  it('delete removes an agent without sessions, with its prompt versions and secrets; an archived agent can be deleted', async () => {
    const a = await create({ prompt: 'p' });
    await s.api('PUT', `/agents/${a.id}/secrets/K`, { body: { value: 'v' } });
    await s.api('POST', `/agents/${a.id}/archive`);
    const res = await s.api('DELETE', `/agents/${a.id}`);
    expect(res).toMatchObject({ status: 200, body: { ok: true } });
    expectError(await s.api('GET', `/agents/${a.id}`), 404, 'not_found');
    expectError(await s.api('DELETE', `/agents/${a.id}`), 404, 'not_found');
    const prisma = await db();
    expect(await prisma.promptVersion.count({ where: { agentId: a.id } })).toBe(0);
    expect(await prisma.agentSecret.count({ where: { agentId: a.id } })).toBe(0);
    expect((await s.api('GET', '/agents')).body.agents.map((x: any) => x.id)).not.toContain(a.id);
  });

  it('delete with sessions (any status) is 409 agent_has_sessions; sessionCount counts them', async () => {
    const b = await create();
    const prisma = await db();
    const { universeId } = await prisma.agent.findUniqueOrThrow({ where: { id: b.id } });
    await prisma.session.create({ data: { id: 'sess_fortest1', universeId, agentId: b.id, agentType: 'hermes', llm: b.llm, status: 'terminated' } });
    expectError(await s.api('DELETE', `/agents/${b.id}`), 409, 'agent_has_sessions');
    expect((await s.api('GET', `/agents/${b.id}`)).body.agent.sessionCount).toBe(1);
    await prisma.session.create({ data: { id: 'sess_fortest2', universeId, agentId: b.id, agentType: 'hermes', llm: b.llm, status: 'idle' } });
    expect((await s.api('GET', '/agents')).body.agents.find((x: any) => x.id === b.id).sessionCount).toBe(2);
    await prisma.session.deleteMany({ where: { agentId: b.id } });
    expect((await s.api('DELETE', `/agents/${b.id}`)).body).toEqual({ ok: true });
  });
});
