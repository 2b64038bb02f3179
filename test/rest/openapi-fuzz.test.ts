// Property-based requests for every operation of the OpenAPI document the service publishes,
// built from the document itself (test/helpers/schema-arbitraries.ts): path ids of real rows,
// query parameters and bodies generated from their schemas, valid ones and ones broken in one
// place (wrong types, out-of-range numbers, null bodies, missing required fields, oversized
// strings, unknown keys). Each request is judged by Ajv against the same document, then:
//   - every answer validates against the document (status, content type, body) and is no 5xx;
//   - a request the document refuses answers 4xx in the envelope;
//   - a request the document accepts is not refused as malformed (400 invalid_request): what the
//     server enforces, the document says (the few rules it cannot say are listed below).
// Fixed seed and FUZZ_RUNS (3) requests per operation and kind in CI; `npm run fuzz` runs 40 with a
// new seed each time (FUZZ_SEED, FUZZ_RUNS override; a failure names its seed to replay).
import fc from 'fast-check';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ResponseValidator, type OpenApiDocument } from '../helpers/openapi-validator.js';
import { SchemaArbitraries, type JsonSchema } from '../helpers/schema-arbitraries.js';
import { answerProblem } from '../helpers/fuzz-requests.js';

type FormatsPlugin = (ajv: Ajv2020) => Ajv2020;
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? addFormatsModule) as unknown as FormatsPlugin;

const SEED = Number(process.env.FUZZ_SEED || 20261127);
const RUNS = Number(process.env.FUZZ_RUNS || 3);
const PARALLEL = 4;

/**
 * Refusals (400 invalid_request) of requests the document accepts, per operation, by message,
 * with why the document does not say them: rules over uploaded bytes, over the state of other
 * rows, or over combinations of fields. Anything else the server refuses, the document must say.
 */
const DOMAIN_REFUSALS: Record<string, { message: RegExp; why: string }[]> = {
  createSkill: [{ message: /./, why: 'the bundle must hold a SKILL.md with front matter (the bytes of an upload)' }],
  createSkillRevision: [{ message: /./, why: 'the bundle must hold a SKILL.md with front matter (the bytes of an upload)' }],
  createRoutine: [{ message: /schedule\.(expression|timezone)/, why: "the values of a cron expression's fields; IANA time zone names" }],
  updateRoutine: [{ message: /schedule\.(expression|timezone)/, why: "the values of a cron expression's fields; IANA time zone names" }],
  updateSession: [{ message: /budget can only be attached at create/, why: "the session's state: a budget is set at create only" }],
  rotateSessionResourceToken: [{ message: /only a repository resource/, why: 'the kind of the resource named in the path' }],
  sendLegacyMessage: [
    { message: /deprecated send delivers|needs its bytes|parts must contain/, why: "the deprecated send's parts (its schema is the event part union; open)" },
  ],
  createAgent: [{ message: /multiagent: agent .* not found in this universe/, why: "another row: a coordinator's roster names agents of its universe" }],
  updateAgent: [
    { message: /defaultSessionId: .* is not a session of this agent/, why: "another row: the session must be one of this agent's" },
    { message: /multiagent: agent .* not found in this universe/, why: "another row: a coordinator's roster names agents of its universe" },
  ],
  createEnvironment: [{ message: /is listed twice/, why: 'a package named twice (names compare case-insensitively)' }],
  updateEnvironment: [{ message: /is listed twice/, why: 'a package named twice (names compare case-insensitively)' }],
  listFiles: [{ message: /ids\[\] cannot be combined/, why: 'a combination of query parameters' }],
};

/** Query parameters whose values the service hands out (cursors, event ids): a generated one names nothing. */
const OPAQUE = new Set(['cursor', 'page', 'after']);

// The edge rules of the document's description: no NUL or unpaired surrogate in any JSON string
// or key, no control character in a query string.
const NOT_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
function edgeRefuses(value: unknown): boolean {
  if (typeof value === 'string') return NOT_TEXT.test(value);
  if (Array.isArray(value)) return value.some(edgeRefuses);
  if (value && typeof value === 'object') return Object.entries(value).some(([k, v]) => k === '__proto__' || NOT_TEXT.test(k) || edgeRefuses(v));
  return false;
}

interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: { name: string; in: string; required?: boolean; schema: JsonSchema }[];
  body?: { mediaType: string; schema: JsonSchema; required: boolean };
  feed: boolean;
}

interface GeneratedRequest {
  target: string;
  query: Record<string, string>;
  /** A path id that names nothing: a 4xx. */
  brokenPath: boolean;
  /**
   * An opaque value (cursor, event id) the service never handed out: most lists refuse it (400),
   * some read it as "nothing after it" (200); either way no 5xx and a documented answer.
   */
  undetermined: boolean;
  body:
    | { kind: 'none' }
    | { kind: 'json'; value: unknown }
    | { kind: 'form'; fields: Record<string, unknown> }
    | { kind: 'urlencoded'; fields: Record<string, unknown> };
}

let s: TestServer;
let doc: OpenApiDocument & { components: { schemas: Record<string, JsonSchema> } };
let responses: ResponseValidator;
let arbs: SchemaArbitraries;
let ajv: Ajv2020;
let ajvQuery: Ajv2020;
const known: Record<string, string[]> = {};

beforeAll(async () => {
  s = await startTestServer();
  doc = (await (await fetch(`${s.base}/openapi.json`)).json()) as typeof doc;
  responses = new ResponseValidator(doc);
  arbs = new SchemaArbitraries(doc.components.schemas);
  const makeAjv = (coerceTypes: boolean) => {
    const a = new Ajv2020({ strict: false, allErrors: false, validateFormats: true, coerceTypes });
    addFormats(a);
    a.addFormat('binary', true);
    // 2020-12's content keywords are annotations to Ajv; the document uses them for JSON-in-a-string
    a.removeKeyword('contentSchema');
    a.addKeyword({
      keyword: 'contentSchema',
      type: 'string',
      schemaType: 'object',
      validate: (schema: { type?: string }, data: string) => {
        try {
          const v: unknown = JSON.parse(data);
          return schema.type !== 'object' || (v !== null && typeof v === 'object' && !Array.isArray(v));
        } catch {
          return false;
        }
      },
    });
    a.addSchema({
      $id: 'https://fuzz.test/components.json',
      $defs: JSON.parse(JSON.stringify(doc.components.schemas).replaceAll('"#/components/schemas/', '"https://fuzz.test/components.json#/$defs/')),
    });
    return a;
  };
  ajv = makeAjv(false);
  ajvQuery = makeAjv(true);

  // Real rows, so generated requests reach the code behind the lookups.
  const ok = async (method: string, path: string, body: unknown) => {
    const res = await s.api(method, path, { body });
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
    return res.body;
  };
  const agent = (await ok('POST', '/agents', { displayName: 'Fuzz' })).agent;
  const session = (await ok('POST', '/sessions', { agent: agent.id })).session;
  const form = new FormData();
  form.append('file', new Blob(['a,b\n1,2\n']), 'f.csv');
  const file = (await s.api('POST', '/files', { form })).body;
  const resource = await ok('POST', `/sessions/${session.id}/resources`, { type: 'file', file_id: file.id });
  const skillForm = new FormData();
  skillForm.append('files', new Blob(['---\nname: fuzz-skill\ndescription: fuzzed\n---\n']), 'SKILL.md');
  const skill = (await s.api('POST', '/skills', { form: skillForm })).body;
  const routine = await ok('POST', '/routines', {
    name: 'fuzz',
    target: { type: 'new_session', agent: agent.id },
    initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'x' }] }],
  });
  const webhook = await ok('POST', '/webhooks', { url: 'https://hooks.example.com/h', events: ['agent.created'] });
  const environment = await ok('POST', '/environments', { name: 'fuzz-env' });
  const vault = await ok('POST', '/vaults', { name: 'fuzz-vault' });
  const connection = await ok('POST', '/channels/connections', { platform: 'loopback' });
  const channelHook = await ok('POST', '/channels/webhooks', { url: 'https://hooks.example.com/c' });
  const binding = await ok('POST', '/channels/bindings', { connection_id: connection.id, thread_id: 'T-1', destination: { webhook: channelHook.id } });
  const slug = (await s.api('GET', '/whoami')).body.universe.slug;
  Object.assign(known, {
    'agents/{id}': [agent.id],
    'sessions/{id}': [session.id, agent.id],
    'resources/{rid}': [resource.id],
    'files/{file_id}': [file.id],
    'skills/{skillId}': [skill.skill.id],
    'revisions/{revisionId}': [skill.revision.id],
    'routines/{id}': [routine.id],
    'webhooks/{id}': [webhook.id, channelHook.id],
    'environments/{id}': [environment.id],
    'vaults/{id}': [vault.id],
    'connections/{id}': [connection.id],
    'bindings/{id}': [binding.id],
    'apps/{id}': ['chapp_01aaaaaaaaaaaaaaaaaaaaaaaa'],
    'universes/{slug}': [slug],
    'secrets/{key}': ['FUZZ_KEY'],
    'credentials/{key}': ['FUZZ_KEY'],
    'model-subscriptions/{provider}': ['anthropic', 'openai'],
    'threads/{thread_id}': ['T-1'],
    'inbound/{app_id}': ['chapp_01aaaaaaaaaaaaaaaaaaaaaaaa'],
    'connect/{token}': ['nope'],
  });
});
afterAll(async () => {
  await s?.stop();
});

function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(ops)) {
      const op = raw as unknown as {
        operationId: string;
        parameters?: Operation['parameters'];
        requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema }> };
        responses: Record<string, { content?: Record<string, unknown> }>;
      };
      const content = op.requestBody?.content ?? {};
      const mediaType = ['application/json', 'multipart/form-data', 'application/x-www-form-urlencoded'].find((t) => content[t]);
      out.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId,
        parameters: (op.parameters ?? []).filter((p) => p.in === 'path' || p.in === 'query'),
        body: mediaType ? { mediaType, schema: content[mediaType]!.schema, required: op.requestBody?.required ?? false } : undefined,
        feed: Object.values(op.responses).some((r) => r.content?.['text/event-stream']),
      });
    }
  }
  return out;
}

/** Path, query and body of a request; `broken`: one part of it is generated invalid. */
function requestArbitrary(op: Operation, broken: boolean): fc.Arbitrary<GeneratedRequest> {
  const segments = op.path.split('/').filter(Boolean);
  const pathArb = (brokenId: boolean) =>
    fc
      .tuple(
        ...segments.map((seg, i) => {
          if (!seg.startsWith('{')) return fc.constant(seg);
          const ids = known[`${segments[i - 1]}/${seg}`] ?? ['x'];
          // a broken id: one that names nothing (wrong shape, or the right shape and no row)
          if (brokenId)
            return fc
              .constantFrom('0', '%00', 'x'.repeat(300), `${ids[0]!.split('_')[0]}_01zzzzzzzzzzzzzzzzzzzzzzzz`)
              .map((v) => (v === '%00' ? v : encodeURIComponent(v)));
          return fc.constantFrom(...ids).map(encodeURIComponent);
        }),
      )
      .map((parts) => `/${parts.join('/')}`);
  const query = op.parameters.filter((p) => p.in === 'query');
  const queryArb = (brokenName: string | null) =>
    fc.record(
      Object.fromEntries(
        query
          .filter((p) => !OPAQUE.has(p.name) || p.name === brokenName)
          // an opaque value broken: one never handed out (not empty, which some lists read as absent)
          .map((p) => [
            p.name,
            (p.name === brokenName ? arbs.invalid(p.schema) : arbs.valid(p.schema)).map(queryValue).map((v) => (OPAQUE.has(p.name) && v === '' ? 'x' : v)),
          ]),
      ),
      { requiredKeys: query.filter((p) => p.required || p.name === brokenName).map((p) => p.name) },
    ) as fc.Arbitrary<Record<string, string>>;
  const bodyArb = (invalid: boolean): fc.Arbitrary<GeneratedRequest['body']> => {
    if (!op.body) return fc.constant({ kind: 'none' as const });
    const values = invalid ? fc.oneof(fc.constant(null), arbs.invalid(op.body.schema)) : arbs.valid(op.body.schema);
    if (op.body.mediaType === 'application/json') return values.map((value) => ({ kind: 'json' as const, value }));
    const kind = op.body.mediaType === 'multipart/form-data' ? ('form' as const) : ('urlencoded' as const);
    return values.map((v) => ({ kind, fields: v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {} }));
  };
  return fc.constantFrom(...breakable(op, broken)).chain((what) =>
    fc.tuple(pathArb(what === 'path'), queryArb(what.startsWith('query:') ? what.slice(6) : null), bodyArb(what === 'body')).map(([target, q, body]) => ({
      target,
      query: q,
      body,
      brokenPath: what === 'path',
      undetermined: what.startsWith('query:') && OPAQUE.has(what.slice(6)),
    })),
  );
}

/** What a broken request of the operation breaks: its body, one query parameter or a path id. */
function breakable(op: Operation, broken: boolean): string[] {
  if (!broken) return ['nothing'];
  return [
    ...(op.body ? ['body', 'body'] : []),
    ...op.parameters.filter((p) => p.in === 'query').map((p) => `query:${p.name}`),
    ...(op.parameters.some((p) => p.in === 'path') ? ['path'] : []),
  ];
}

function queryValue(v: unknown): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map(String).join(',');
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

const compiled = new Map<string, ValidateFunction>();
function schemaCheck(key: string, schema: JsonSchema, value: unknown, coerce = false): boolean {
  let fn = compiled.get(key);
  if (!fn) {
    const rewritten = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"https://fuzz.test/components.json#/$defs/')) as JsonSchema;
    fn = (coerce ? ajvQuery : ajv).compile(rewritten);
    compiled.set(key, fn);
  }
  return fn(coerce ? structuredClone(value) : value) as boolean;
}

/** Whether the document accepts the request (body and query; path ids are real rows). */
function documentAccepts(op: Operation, req: GeneratedRequest): boolean {
  if (req.brokenPath) return false;
  for (const p of op.parameters.filter((x) => x.in === 'query')) {
    const v = req.query[p.name];
    if (v === undefined) {
      if (p.required) return false;
      continue;
    }
    if (/[\u0000-\u001f\u007f]/.test(v)) return false;
    if (!schemaCheck(`${op.operationId} q ${p.name}`, { type: 'object', properties: { v: p.schema } }, { v }, true)) return false;
  }
  const body = req.body;
  if (!op.body || body.kind === 'none') return true;
  if (body.kind === 'json') return !edgeRefuses(body.value) && schemaCheck(`${op.operationId} body`, op.body.schema, body.value);
  return schemaCheck(`${op.operationId} form`, op.body.schema, body.fields, true);
}

async function send(op: Operation, req: GeneratedRequest) {
  const qs = new URLSearchParams(req.query).toString();
  const target = `${req.target}${qs ? `?${qs}` : ''}`;
  const headers: Record<string, string> = { authorization: `Bearer ${s.adminToken}` };
  let body: string | FormData | undefined;
  if (req.body.kind === 'json') {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(req.body.value) ?? 'null';
  } else if (req.body.kind === 'form') {
    const form = new FormData();
    for (const [k, v] of Object.entries(req.body.fields)) {
      if (k === 'file' || k === 'files') form.append(k, new Blob([String(v ?? '')]), 'fuzz.txt');
      else form.append(k, typeof v === 'string' ? v : JSON.stringify(v));
    }
    body = form;
  } else if (req.body.kind === 'urlencoded') {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(Object.entries(req.body.fields).map(([k, v]) => [k, queryValue(v)])).toString();
  }
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), 15_000);
  try {
    const res = await fetch(`${s.base}${target}`, { method: op.method, headers, body, signal: ctl.signal, redirect: 'manual' });
    const contentType = res.headers.get('content-type');
    if (res.status < 300 && contentType?.startsWith('text/event-stream')) {
      ctl.abort();
      return { target, status: res.status, contentType, text: '', parsed: null as unknown };
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return { target, status: res.status, contentType, text, parsed };
  } finally {
    clearTimeout(timer);
  }
}

describe('requests generated from the OpenAPI document', () => {
  it(
    `every operation × ${RUNS} valid and ${RUNS} broken requests: documented answers, 4xx for what the document refuses, never 5xx`,
    async () => {
      const ops = operations().filter((op) => op.operationId !== 'getOpenApi');
      expect(ops.length).toBeGreaterThan(90);
      const failures: string[] = [];
      const tally = { accepted: 0, refused: 0, validSent: 0, invalidSent: 0 };
      // One worker per resource family, deletes last, as test/rest/fuzz.test.ts does.
      const groups = new Map<string, Operation[]>();
      for (const op of ops) {
        const key = op.path.split('/')[1]!;
        groups.set(key, [...(groups.get(key) ?? []), op]);
      }
      const queue = [...groups.values()].map((g) => [...g.filter((o) => o.method !== 'DELETE'), ...g.filter((o) => o.method === 'DELETE')]);
      let index = 0;
      const worker = async () => {
        for (let group = queue.shift(); group; group = queue.shift())
          for (const op of group) {
            const seed = SEED + index++;
            for (const broken of [false, true]) {
              if (!breakable(op, broken).length) continue;
              const run = await fc.check(
                fc.asyncProperty(requestArbitrary(op, broken), async (req) => {
                  const valid = documentAccepts(op, req);
                  if (valid) tally.validSent++;
                  else tally.invalidSent++;
                  const answer = await send(op, req);
                  const where = `${op.method} ${op.path} (${op.operationId}) → ${answer.status} ${answer.text.slice(0, 300)}\n  request: ${answer.target} ${JSON.stringify(req.body).slice(0, 400)}`;
                  const problem = answerProblem({ status: answer.status, contentType: answer.contentType, text: answer.text });
                  if (problem) throw new Error(`${problem}\n  ${where}`);
                  try {
                    responses.check({
                      method: op.method,
                      path: answer.target,
                      status: answer.status,
                      contentType: answer.contentType,
                      body: answer.parsed,
                      empty: answer.text === '' && !answer.contentType?.startsWith('text/event-stream'),
                    });
                  } catch (err) {
                    throw new Error(`${(err as Error).message.split('\n')[0]}\n  ${where}`);
                  }
                  if (req.undetermined) return;
                  // (501 coming_soon, the one 5xx the spec names, answers imessage before any other check)
                  const comingSoon = answer.status === 501 && (answer.parsed as { error?: { code?: string } } | null)?.error?.code === 'coming_soon';
                  if (!valid && (answer.status < 400 || (answer.status >= 500 && !comingSoon)))
                    throw new Error(`the document refuses this request, the server answered ${answer.status}\n  ${where}`);
                  if (valid) {
                    const code = (answer.parsed as { error?: { code?: string } } | null)?.error?.code;
                    const message = (answer.parsed as { error?: { message?: string } } | null)?.error?.message ?? '';
                    const excused = DOMAIN_REFUSALS[op.operationId]?.some((r) => r.message.test(message));
                    if (answer.status === 400 && code === 'invalid_request' && !excused) {
                      throw new Error(
                        `the document accepts this request, the server refused it as invalid: the document is looser than the server\n  ${where}`,
                      );
                    }
                    if (answer.status < 300) tally.accepted++;
                  } else tally.refused++;
                }),
                { seed: seed * 2 + (broken ? 1 : 0), numRuns: RUNS, endOnFailure: true },
              );
              if (run.failed)
                failures.push(
                  `${op.method} ${op.path} ${broken ? 'broken' : 'valid'} (seed ${seed * 2 + (broken ? 1 : 0)}): ${run.errorInstance instanceof Error ? run.errorInstance.message : String(run.errorInstance)}`,
                );
            }
          }
      };
      await Promise.all(Array.from({ length: PARALLEL }, worker));
      if (process.env.FUZZ_VERBOSE) console.log(tally);
      expect(failures, failures.join('\n\n')).toEqual([]);
      // the generators reach both sides
      expect(tally.validSent).toBeGreaterThan(ops.length);
      expect(tally.invalidSent).toBeGreaterThan(ops.length / 2);
      expect(tally.accepted).toBeGreaterThan(ops.length / 2);
    },
    Math.max(300_000, RUNS * 40_000),
  );
});
