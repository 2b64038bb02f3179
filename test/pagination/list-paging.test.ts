// Cursor paging of the lists that used to stop at 1000: GET /agents (`limit`, `?cursor=` ←
// `nextCursor`, like GET /skills) and GET /routines, GET /routines/{id}/runs (`limit`, `?page=` ←
// `next_page`, like GET /files). Walking the pages returns every item once, newest first; a
// plain GET keeps answering everything up to 1000; a cursor this service did not issue is 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { newId } from '../../src/ids.js';

let s: TestServer;
const UNIVERSE = 'paging-lists';
const inU = { 'x-universe': UNIVERSE };
beforeAll(async () => {
  s = await startTestServer();
  expect((await s.api('POST', '/universes', { body: { slug: UNIVERSE } })).status).toBe(201);
});
afterAll(async () => {
  await s?.stop();
});

/** Every page from `first` on, following `next` until it is null. */
async function walk(path: (after: string | null) => string, items: (body: any) => any[], next: (body: any) => string | null) {
  const pages: string[][] = [];
  let after: string | null = null;
  do {
    const res = await s.api('GET', path(after), { headers: inU });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    pages.push(items(res.body).map((x) => x.id));
    after = next(res.body);
  } while (after !== null && pages.length < 20);
  return pages;
}
const q = (cursor: string | null) => (cursor === null ? '' : encodeURIComponent(cursor));

describe('GET /agents', () => {
  it('pages by limit and nextCursor; a plain GET lists all with nextCursor null; a foreign cursor is 400', async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await s.api('POST', '/agents', { body: {}, headers: inU })).body.agent.id);
    const all = await s.api('GET', '/agents', { headers: inU });
    expect(all.body.agents.map((a: any) => a.id)).toEqual([...made].reverse());
    expect(all.body.nextCursor).toBeNull();
    const pages = await walk(
      (c) => `/agents?limit=2${c ? `&cursor=${q(c)}` : ''}`,
      (b) => b.agents,
      (b) => b.nextCursor,
    );
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual([...made].reverse());
    // The filter still applies across pages.
    await s.api('POST', `/agents/${made[0]}/archive`, { headers: inU });
    expect(
      (
        await walk(
          (c) => `/agents?archived=false&limit=3${c ? `&cursor=${q(c)}` : ''}`,
          (b) => b.agents,
          (b) => b.nextCursor,
        )
      ).flat(),
    ).toEqual(made.slice(1).reverse());
    for (const bad of ['garbage', Buffer.from('GPC:S:rtn_01abc').toString('base64')]) {
      const res = await s.api('GET', `/agents?cursor=${q(bad)}`, { headers: inU });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    for (const limit of ['0', '1001', 'x']) expect((await s.api('GET', `/agents?limit=${limit}`, { headers: inU })).status).toBe(400);
  });
});

describe('GET /routines and /routines/{id}/runs', () => {
  it('page by limit and next_page, newest first, every item once', async () => {
    const agent = (await s.api('POST', '/agents', { body: {}, headers: inU })).body.agent;
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await s.api('POST', '/routines', {
        headers: inU,
        body: {
          name: `r${i}`,
          target: { type: 'new_session', agent: agent.id },
          initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }],
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      made.push(res.body.id);
    }
    const all = await s.api('GET', '/routines', { headers: inU });
    expect(all.body).toEqual({ data: expect.any(Array), next_page: null });
    expect(all.body.data.map((r: any) => r.id)).toEqual([...made].reverse());
    const pages = await walk(
      (c) => `/routines?limit=2${c ? `&page=${q(c)}` : ''}`,
      (b) => b.data,
      (b) => b.next_page,
    );
    expect(pages.map((p) => p.length)).toEqual([2, 1]);
    expect(pages.flat()).toEqual([...made].reverse());

    // Runs: written directly (what a fire records) so that paging, not firing, is under test.
    const { prisma } = await import('../../src/db/client.js');
    const runs: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = newId('rrun');
      await prisma.routineRun.create({ data: { id, routineId: made[0]!, triggerType: 'manual', errorType: 'unknown_error', errorMessage: `run ${i}` } });
      runs.push(id);
    }
    const walked = await walk(
      (c) => `/routines/${made[0]}/runs?limit=2${c ? `&page=${q(c)}` : ''}`,
      (b) => b.data,
      (b) => b.next_page,
    );
    expect(walked.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(walked.flat()).toEqual([...runs].reverse());
    expect((await s.api('GET', `/routines/${made[0]}/runs`, { headers: inU })).body.next_page).toBeNull();
    const bad = await s.api('GET', `/routines/${made[0]}/runs?page=${q(Buffer.from(`GPC:S:${made[1]}`).toString('base64'))}`, { headers: inU });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
  });
});
