// Property-based fuzzing of every route of the REST route table over real HTTP, with an admin
// token: generated path ids (real ones among them), query strings, headers and bodies (from the
// route's own schema, then broken: NUL, lone surrogates, huge strings, wrong types, deep nesting,
// `__proto__` keys, bytes that are not UTF-8, over-limit sizes). For every answer: never a 5xx,
// every non-2xx body exactly `{error: {code, message}}`. Afterwards: no prototype was polluted
// and the service still answers /healthz. Bounded: a fixed seed, FUZZ_RUNS runs per route.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { routes } from '../../rest/routes/index.js';
import { requestArbitrary, sendFuzzRequest, answerProblem, describeRequest, type KnownIds } from '../helpers/fuzz-requests.js';

const SEED = Number(process.env.FUZZ_SEED || 20261123);
const RUNS = Number(process.env.FUZZ_RUNS || 14);
/** Resources fuzzed at once. */
const PARALLEL = 4;

let s: TestServer;
const known: KnownIds = {};

beforeAll(async () => {
  s = await startTestServer();
  // Real rows for the generated ids to hit now and then.
  const agent = (await s.api('POST', '/agents', { body: { displayName: 'Fuzz' } })).body.agent;
  const session = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body.session;
  const form = new FormData();
  form.append('file', new Blob(['a,b\n1,2\n']), 'f.csv');
  const file = (await s.api('POST', '/files', { form })).body;
  const resource = (await s.api('POST', `/sessions/${session.id}/resources`, { body: { type: 'file', file_id: file.id } })).body;
  const skillForm = new FormData();
  skillForm.append('files', new Blob(['---\nname: fuzz-skill\ndescription: fuzzed\n---\n']), 'SKILL.md');
  const skill = (await s.api('POST', '/skills', { form: skillForm })).body;
  const routine = (
    await s.api('POST', '/routines', {
      body: {
        name: 'fuzz',
        target: { type: 'new_session', agent: agent.id },
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'x' }] }],
      },
    })
  ).body;
  const webhook = (await s.api('POST', '/webhooks', { body: { url: 'https://hooks.example.com/h', events: ['agent.created'] } })).body;
  const slug = (await s.api('GET', '/whoami')).body.universe.slug;
  Object.assign(known, {
    'agents/{id}': [agent.id],
    'sessions/{id}': [session.id, agent.id],
    'resources/{rid}': [resource.id],
    'files/{file_id}': [file.id],
    'skills/{skillId}': [skill.skill.id],
    'revisions/{revisionId}': [skill.revision.id],
    'routines/{id}': [routine.id],
    'webhooks/{id}': [webhook.id],
    'universes/{slug}': [slug],
    'secrets/{key}': ['FUZZ_KEY'],
    'model-subscriptions/{provider}': ['anthropic', 'openai'],
  } satisfies KnownIds);
  for (const [key, ids] of Object.entries(known))
    expect(
      ids.every((id) => typeof id === 'string' && id.length > 0),
      key,
    ).toBe(true);
});
afterAll(async () => {
  await s?.stop();
});

describe('fuzzing every route', () => {
  it(
    `${routes.length} routes × ${RUNS} generated requests: never a 5xx, always the envelope`,
    async () => {
      const failures: string[] = [];
      // Routes of one resource run one after the other (deletes last), resources in parallel: the
      // generated requests are the same on every run (fixed seeds) and their interleaving stays
      // within what concurrent clients of different resources would do.
      const groups = new Map<string, { route: (typeof routes)[number]; seed: number }[]>();
      routes.forEach((route, i) => {
        const key = route.path.split('/')[1]!;
        groups.set(key, [...(groups.get(key) ?? []), { route, seed: SEED + i }]);
      });
      const queue = [...groups.values()].map((g) => [...g.filter((r) => r.route.method !== 'DELETE'), ...g.filter((r) => r.route.method === 'DELETE')]);
      let sent = 0;
      const statuses = new Map<number, number>();
      const worker = async () => {
        for (let group = queue.shift(); group; group = queue.shift())
          for (const { route, seed } of group) {
            const run = await fc.check(
              fc.asyncProperty(requestArbitrary(route, known, s.adminToken), async (req) => {
                sent++;
                let answer;
                try {
                  answer = await sendFuzzRequest(s.base, req);
                } catch (err) {
                  throw new Error(`no answer (${(err as Error).message}) to ${describeRequest(req)}`);
                }
                statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
                // a page (the hosted connect page) answers a browser (Accept: text/html) with HTML, as documented
                const page = route.rawResponseContent?.['text/html'] && req.headers.accept === 'text/html' && answer.contentType?.startsWith('text/html');
                const problem = page ? null : answerProblem(answer);
                if (problem) throw new Error(`${problem}\n  request: ${describeRequest(req)}`);
              }),
              { seed, numRuns: RUNS, endOnFailure: true },
            );
            if (run.failed)
              failures.push(
                `${route.method} ${route.path} (seed ${seed}): ${'errorInstance' in run && run.errorInstance instanceof Error ? run.errorInstance.message : 'interrupted'}`,
              );
          }
      };
      await Promise.all(Array.from({ length: PARALLEL }, worker));
      expect(failures, failures.join('\n\n')).toEqual([]);
      expect(sent).toBeGreaterThanOrEqual(routes.length * RUNS);
      // the generators reach both sides: accepted requests and every kind of refusal
      const seen = [...statuses.keys()];
      if (process.env.FUZZ_VERBOSE) console.log(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])));
      if (RUNS >= 10) {
        for (const status of [200, 400, 401, 404, 413, 415]) expect(seen, `statuses seen: ${seen.join(', ')}`).toContain(status);
        expect(seen.some((st) => st === 201 || st === 202)).toBe(true);
      }
    },
    Math.max(120_000, RUNS * 15_000),
  );

  it('left no prototype polluted and the service serving', async () => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(Object.prototype)).toEqual([]);
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
    expect((Array.prototype as unknown as Record<string, unknown>).polluted).toBeUndefined();
    const health = await fetch(`${s.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true });
    expect((await s.api('GET', '/whoami')).status).toBe(200);
  });
});
