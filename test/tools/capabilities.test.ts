// Platform capabilities as tools over HTTP: fake vendors speaking Exa's and OpenAI Images' wire
// formats, the fake model provider driving the calls. Exactly the granted set is offered and
// runs; a revocation applies to the next call without a restart; a missing vendor key is a
// clear tool error; each call is priced from the catalog into consumed_cost and the wallet;
// generated images become downloadable session files shown as image parts.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startFakeVendors, type FakeVendors } from '../fake-vendors/vendors.js';
import { TINY_PNG } from '../fake-vendors/mcp-server.js';
import { readySession, sendText, waitForEvents } from '../helpers/sessions.js';

let s: TestServer;
let fake: FakeProvider;
let vendors: FakeVendors;

beforeAll(async () => {
  process.env.OUTBOUND_ALLOW = '127.0.0.0/8';
  fake = await startFakeProvider();
  vendors = await startFakeVendors();
  Object.assign(process.env, {
    EXA_API_KEY: vendors.keys.exa,
    EXA_BASE_URL: vendors.exaBaseUrl,
    GPTIMAGE_API_KEY: vendors.keys.openai,
    GPTIMAGE_BASE_URL: vendors.openaiBaseUrl,
  });
  s = await startTestServer({ anthropicApiKey: 'sk-ant-test', anthropicBaseUrl: fake.anthropicBaseUrl });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
  await vendors?.close();
  for (const k of ['OUTBOUND_ALLOW', 'EXA_API_KEY', 'EXA_BASE_URL', 'GPTIMAGE_API_KEY', 'GPTIMAGE_BASE_URL']) delete process.env[k];
});
beforeEach(() => {
  fake.reset();
  vendors.requests.length = 0;
});

const toolNames = (i = 0) => fake.requests[i]!.body.tools.map((t: any) => t.name).sort();
const results = (events: any[]) => events.filter((e) => e.type === 'agent.tool_result').map((e) => e.part);
const SANDBOX = ['bash', 'edit_file', 'read_file', 'write_file'];

async function usageRows(sessionId: string) {
  const { prisma } = await import('../../src/db/client.js');
  return prisma.modelUsage.findMany({ where: { sessionId, model: { contains: '.' } }, orderBy: { createdAt: 'asc' } });
}

describe('granted capabilities', () => {
  it('offers exactly the granted set; exa.search runs against the vendor, its cost is metered', async () => {
    const { session } = await readySession(s, { capabilities: ['exa.search', 'gptimage.generate'] });
    fake.enqueue({ kind: 'tool_call', name: 'exa_search', input: { query: 'agent platforms', num_results: 12 } }, { kind: 'text', text: 'found' });
    await sendText(s, session.id, 'search');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(toolNames()).toEqual([...SANDBOX, 'exa_search', 'gptimage_generate'].sort());
    const offered = fake.requests[0]!.body.tools.find((t: any) => t.name === 'exa_search');
    expect(offered.input_schema).toMatchObject({ type: 'object', required: ['query'], properties: { query: { type: 'string' } } });

    const [r] = results(events);
    expect(r).toMatchObject({ tool_name: 'exa_search', status: 'ok', result: { request_id: 'req_search_1' } });
    expect(r.result.results).toHaveLength(12);
    expect(r.result.results[0]).toEqual({
      title: 'Result 0 for agent platforms',
      url: 'https://example.com/0',
      published_date: '2026-01-01T00:00:00.000Z',
      author: null,
      text: expect.any(String),
    });
    expect(r.result.results[0].text.length).toBeLessThanOrEqual(2000);
    // The vendor got its wire format and the platform key.
    const req = vendors.requests.find((q) => q.path === '/exa/search')!;
    expect(req.headers['x-api-key']).toBe(vendors.keys.exa);
    expect(req.body).toEqual({ query: 'agent platforms', type: 'auto', numResults: 12, contents: { text: { maxCharacters: 2000 } } });
    // $0.007 a request + $0.001 for each result over 10.
    const [usage] = await usageRows(session.id);
    expect(usage).toMatchObject({ provider: 'exa', model: 'exa.search', billing: 'platform', costNanoUsd: 9_000_000n });
  });

  it('gptimage.generate stores the image as a session file, shows it as an image part, and charges consumed_cost and the wallet', async () => {
    const { session } = await readySession(
      s,
      { capabilities: ['gptimage.generate'] },
      { budget: { type: 'limit', max_list_cost: { amount: '1000', currency: 'USD' } } },
    );
    const { prisma } = await import('../../src/db/client.js');
    const universeId = (await prisma.session.findUniqueOrThrow({ where: { id: session.id } })).universeId;
    const balanceBefore = (await prisma.universe.findUniqueOrThrow({ where: { id: universeId } })).balanceNanoUsd;
    fake.enqueue({ kind: 'tool_call', name: 'gptimage_generate', input: { prompt: 'a red fox', n: 2, quality: 'high' } }, { kind: 'text', text: 'drawn' });
    await sendText(s, session.id, 'draw');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const [r] = results(events);
    expect(r).toMatchObject({ status: 'ok', result: { size: '1024x1024', quality: 'high' } });
    expect(r.result.files).toHaveLength(2);
    expect(vendors.requests.find((q) => q.path === '/openai/v1/images/generations')!.body).toEqual({
      model: 'gpt-image-1',
      prompt: 'a red fox',
      n: 2,
      size: '1024x1024',
      quality: 'high',
      output_format: 'png',
    });
    const shown = events.find((e) => e.type === 'agent.message' && e.parts?.[0]?.type === 'image');
    expect(shown.parts).toEqual(
      r.result.files.map((f: any, i: number) => ({
        type: 'image',
        index: i,
        media_type: 'image/png',
        uri: `/v1/files/${f.file_id}/content`,
        data: null,
        alt: 'a red fox',
        width: 1024,
        height: 1024,
      })),
    );
    const listed = (await s.api('GET', `/files?scope_id=${session.id}`)).body.data;
    expect(listed.map((f: any) => f.id).sort()).toEqual(r.result.files.map((f: any) => f.file_id).sort());
    expect(listed.every((f: any) => f.downloadable && f.mime_type === 'image/png' && f.size_bytes === TINY_PNG.length)).toBe(true);

    // 2 high-quality 1024² images at $0.167: 33.4 cents of list price.
    const [usage] = await usageRows(session.id);
    expect(usage).toMatchObject({ model: 'gptimage.generate', costNanoUsd: 334_000_000n });
    const budget = (await s.api('GET', `/sessions/${session.id}`)).body.session.budget;
    expect(Number(budget.consumed_cost.amount)).toBeGreaterThanOrEqual(33);
    const charge = await prisma.walletEntry.findFirst({ where: { usageId: usage!.id } });
    expect(charge).toMatchObject({ kind: 'charge', amountNanoUsd: -334_000_000n });
    const balanceAfter = (await prisma.universe.findUniqueOrThrow({ where: { id: universeId } })).balanceNanoUsd;
    expect(balanceBefore - balanceAfter).toBeGreaterThanOrEqual(334_000_000n);
  });

  it('a capability reaching the budget ends the turn with budget_reached', async () => {
    const { session } = await readySession(
      s,
      { capabilities: ['gptimage.generate'] },
      { budget: { type: 'limit', max_list_cost: { amount: '2', currency: 'USD' } } },
    );
    fake.enqueue({ kind: 'tool_call', name: 'gptimage_generate', input: { prompt: 'a fox', quality: 'medium' } }, { kind: 'text', text: 'never' });
    await sendText(s, session.id, 'draw');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(results(events)[0].status).toBe('ok');
    expect(events.at(-1).stop_reason).toEqual({ type: 'budget_reached' });
    expect((await s.api('GET', `/sessions/${session.id}`)).body.session.budget).toMatchObject({ reached: true });
  });
});

describe('ungranted, revoked, unavailable', () => {
  it('an ungranted capability is not offered and refused if called', async () => {
    const { session } = await readySession(s, { capabilities: ['exa.search'] });
    fake.enqueue({ kind: 'tool_call', name: 'exa_contents', input: { urls: ['https://example.com/a'] } }, { kind: 'text', text: 'ok' });
    await sendText(s, session.id, 'read');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(toolNames()).not.toContain('exa_contents');
    expect(results(events)[0]).toMatchObject({
      status: 'error',
      result: { error: expect.stringContaining('exa.contents is not granted'), capability: 'exa.contents' },
    });
    expect(vendors.requests).toHaveLength(0);
  });

  it('PATCH revoking a capability mid-session refuses its next call, without a restart', async () => {
    const { agent, session } = await readySession(s, { capabilities: ['exa.contents'] });
    fake.enqueue(
      { kind: 'tool_call', name: 'exa_contents', input: { urls: ['https://example.com/a', 'https://example.com/missing'] } },
      { kind: 'text', text: 'read one' },
    );
    await sendText(s, session.id, 'read');
    let events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(results(events)[0]).toMatchObject({
      status: 'ok',
      result: {
        results: [{ url: 'https://example.com/a', title: 'Title of https://example.com/a', text: 'Content of https://example.com/a' }],
        failed: [{ url: 'https://example.com/missing', error: 'CRAWL_NOT_FOUND', http_status: 404 }],
      },
    });
    expect((await usageRows(session.id))[0]).toMatchObject({ model: 'exa.contents', costNanoUsd: 1_000_000n });

    expect((await s.api('PATCH', `/agents/${agent.id}`, { body: { capabilities: [] } })).status).toBe(200);
    fake.enqueue({ kind: 'tool_call', name: 'exa_contents', input: { urls: ['https://example.com/b'] } }, { kind: 'text', text: 'refused' });
    await sendText(s, session.id, 'again');
    events = await waitForEvents(s, session.id, 'session.status_idle', 2);
    expect(toolNames(2)).not.toContain('exa_contents');
    expect(results(events)[1]).toMatchObject({ status: 'error', result: { error: expect.stringContaining('not granted') } });
    expect(vendors.requests.filter((q) => q.path === '/exa/contents')).toHaveLength(1);
  });

  it('a missing vendor key is a clear tool error', async () => {
    const saved = process.env.EXA_API_KEY;
    delete process.env.EXA_API_KEY;
    try {
      const { session } = await readySession(s, { capabilities: ['exa.search'] });
      fake.enqueue({ kind: 'tool_call', name: 'exa_search', input: { query: 'x' } }, { kind: 'text', text: 'ok' });
      await sendText(s, session.id, 'search');
      const events = await waitForEvents(s, session.id, 'session.status_idle');
      expect(results(events)[0]).toMatchObject({
        status: 'error',
        result: { error: 'exa.search is unavailable: the service has no Exa credentials: the operator must set EXA_API_KEY' },
      });
      expect(await usageRows(session.id)).toHaveLength(0);
    } finally {
      process.env.EXA_API_KEY = saved;
    }
  });

  it('bad arguments and a vendor refusal are tool errors; nothing is charged', async () => {
    const { session } = await readySession(s, { capabilities: ['exa.search'] });
    const saved = process.env.EXA_API_KEY;
    fake.enqueue({ kind: 'tool_call', name: 'exa_search', input: { query: '' } }, { kind: 'text', text: 'hm' });
    await sendText(s, session.id, 'search');
    let events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(results(events)[0]).toMatchObject({ status: 'error', result: { error: expect.stringContaining('invalid arguments for exa_search') } });
    process.env.EXA_API_KEY = 'wrong-key';
    try {
      fake.enqueue({ kind: 'tool_call', name: 'exa_search', input: { query: 'x' } }, { kind: 'text', text: 'hm' });
      await sendText(s, session.id, 'again');
      events = await waitForEvents(s, session.id, 'session.status_idle', 2);
      expect(results(events)[1]).toMatchObject({ status: 'error', result: { error: 'exa.search: Exa refused the request (HTTP 401): Invalid API key' } });
      expect(JSON.stringify(events)).not.toContain('wrong-key');
    } finally {
      process.env.EXA_API_KEY = saved;
    }
    expect(await usageRows(session.id)).toHaveLength(0);
  });
});
