// Request generators for fuzzing the REST route table (test/rest/fuzz.test.ts, bench/fuzz-throughput.ts):
// for a route, fast-check arbitraries of path ids, query strings, headers and bodies. Bodies
// start from the route's own zod schema (as JSON Schema), so many are valid or nearly so and
// reach the deep code; then leaves are swapped for hostile values (NUL, lone surrogates, huge
// strings, wrong types, `__proto__` keys, deep nesting, bytes that are not UTF-8).
import fc from 'fast-check';
import { z } from 'zod';
import type { RestRoute } from '../../rest/route.js';

export interface FuzzRequest {
  method: string;
  /** Path and query after `/v1`, already encoded. */
  target: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  /** Routes that stream (SSE): read the status, then hang up. */
  stream: boolean;
}

/** Real ids per path parameter (`<segment before>/{name}`), so some requests reach real rows. */
export type KnownIds = Record<string, string[]>;

type JsonSchema = { [k: string]: unknown };
const HUGE = 'h'.repeat(70_000);

const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ud83d',
  '__proto__',
  'constructor',
  'prototype',
  '../../etc/passwd',
  '%00',
  '%',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '\u202e\u0301',
  '\r\n\r\nX: y',
  '\u{1F600}',
  'agent_01aaaaaaaaaaaaaaaaaaaaaaaa',
  'sess_',
  HUGE,
];
const hostileString = fc.oneof(fc.constantFrom(...HOSTILE_STRINGS), fc.string({ unit: 'binary', maxLength: 40 }));
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom<unknown>(-1, 0, 1.5, -1e308, 2 ** 53 + 1, true, false, null, [], {}, [[[[[]]]]], { nested: { a: [1, '2', null] } }),
  fc.constantFrom<unknown>(JSON.parse('{"__proto__":{"polluted":"yes"}}'), { constructor: { prototype: { polluted: 'yes' } } }),
  fc.jsonValue({ maxDepth: 2 }),
);

/** An arbitrary for values of a JSON Schema (as zod emits it), limited to 8 levels of arrays and objects. */
function fromSchema(schema: JsonSchema | undefined, defs: Record<string, JsonSchema>, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 8) return fc.constant(null);
  const ref = schema.$ref as string | undefined;
  if (ref) return fromSchema(defs[decodeURIComponent(ref.split('/').pop()!)], defs, depth);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const union = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (union?.length) return fc.oneof(...union.map((s) => fromSchema(s, defs, depth)));
  if (Array.isArray(schema.allOf) && schema.allOf.length) return fromSchema(schema.allOf[0] as JsonSchema, defs, depth);
  const type = schema.type;
  if (Array.isArray(type)) return fc.oneof(...type.map((t) => fromSchema({ ...schema, type: t }, defs, depth)));
  switch (type) {
    case 'string': {
      const min = (schema.minLength as number | undefined) ?? 0;
      const max = Math.max(min, Math.min((schema.maxLength as number | undefined) ?? 24, min + 24));
      if (schema.format === 'uri' || schema.format === 'url')
        return fc.constantFrom('https://example.com/x', 'https://hooks.example.com/h', 'http://127.0.0.1:1/');
      if (typeof schema.pattern === 'string') {
        try {
          return fc.stringMatching(new RegExp(schema.pattern)).filter((v) => v.length >= min && v.length <= max + 40);
        } catch {
          /* a pattern fast-check cannot generate from: plain strings */
        }
      }
      return fc.string({ minLength: min, maxLength: max });
    }
    case 'integer':
      return fc.integer({ min: (schema.minimum as number | undefined) ?? -5, max: Math.min((schema.maximum as number | undefined) ?? 2000, 1e9) });
    case 'number':
      return fc.double({
        noNaN: true,
        noDefaultInfinity: true,
        min: (schema.minimum as number | undefined) ?? -1e6,
        max: (schema.maximum as number | undefined) ?? 1e6,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const min = (schema.minItems as number | undefined) ?? 0;
      const max = Math.max(min, Math.min((schema.maxItems as number | undefined) ?? 3, min + 2));
      return fc.array(fromSchema(schema.items as JsonSchema | undefined, defs, depth + 1), { minLength: min, maxLength: max });
    }
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const keys = Object.keys(props);
      if (!keys.length) return fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 12 }), { maxKeys: 3 });
      const model = Object.fromEntries(keys.map((k) => [k, fromSchema(props[k], defs, depth + 1)]));
      return fc.record(model, { requiredKeys: ((schema.required as string[] | undefined) ?? []).filter((k) => keys.includes(k)) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** `value` with its n-th leaf (or the whole value) replaced. */
function replaceLeaf(value: unknown, n: number, replacement: unknown): unknown {
  const leaves: { parent: Record<string, unknown> | unknown[]; key: string | number }[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach((x, i) => (x !== null && typeof x === 'object' ? walk(x) : leaves.push({ parent: v, key: i })));
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) x !== null && typeof x === 'object' ? walk(x) : leaves.push({ parent: v as Record<string, unknown>, key: k });
  };
  const copy = structuredClone(value);
  walk(copy);
  if (!leaves.length) return replacement;
  const leaf = leaves[n % leaves.length]!;
  (leaf.parent as Record<string | number, unknown>)[leaf.key] = replacement;
  return copy;
}

const utf8 = (text: string) => new TextEncoder().encode(text);

/** Values shaped by the route's body schema (often valid, sometimes not quite). */
export function validBodyArbitrary(route: RestRoute): fc.Arbitrary<unknown> {
  if (route.body) {
    try {
      const json = z.toJSONSchema(route.body, { io: 'input', unrepresentable: 'any' }) as JsonSchema & { $defs?: Record<string, JsonSchema> };
      return fromSchema(json, json.$defs ?? {});
    } catch {
      /* a schema JSON Schema cannot express: arbitrary JSON */
    }
  }
  return fc.jsonValue({ maxDepth: 3 });
}

function bodyArbitrary(route: RestRoute): fc.Arbitrary<Uint8Array> {
  const validish = validBodyArbitrary(route);
  const text = fc
    .oneof(
      { weight: 4, arbitrary: validish.map((v) => JSON.stringify(v) ?? 'null') },
      { weight: 4, arbitrary: fc.tuple(validish, fc.nat(), hostileValue).map(([v, n, h]) => JSON.stringify(replaceLeaf(v, n, h)) ?? 'null') },
      // an own `__proto__` / constructor key next to valid fields
      {
        weight: 1,
        arbitrary: validish.map((v) => `{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"v":${JSON.stringify(v) ?? 'null'}}`),
      },
      { weight: 1, arbitrary: fc.integer({ min: 60, max: 20_000 }).map((d) => '{"a":'.repeat(d) + '1' + '}'.repeat(d)) },
      { weight: 1, arbitrary: fc.constantFrom('', '{', '{"a":}', 'null', '[]', '"str"', '1e999', '{"a":1}{"b":2}', '\ufeff{}') },
      { weight: 1, arbitrary: hostileValue.map((v) => JSON.stringify(v) ?? 'null') },
    )
    .map(utf8);
  const bytes = fc.oneof(
    { weight: 12, arbitrary: text },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) }, // not UTF-8, not JSON
    { weight: 1, arbitrary: fc.constant(new Uint8Array(1024 * 1024 + 7).fill(0x61)) }, // over the body limit
  );
  return bytes;
}

/** Percent-encodes a string's UTF-8 bytes (a lone surrogate becomes U+FFFD, as a client would send). */
function encodeSegment(s: string): string {
  return [...utf8(s)].map((b) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0')}`)).join('');
}
const rawSegments = fc.constantFrom('%ff', '%', '%zz', '%2e%2e', '%00', '%c0%ae', '%ed%a0%80', '..', '.');

function segmentArbitrary(key: string, known: KnownIds): fc.Arbitrary<string> {
  const ids = known[key] ?? [];
  const prefix = /^(\w+)_/.exec(ids[0] ?? '')?.[1];
  const options: fc.Arbitrary<string>[] = [hostileString.map(encodeSegment), rawSegments];
  if (ids.length) options.push(fc.constantFrom(...ids), fc.constantFrom(...ids), fc.constantFrom(...ids));
  if (prefix) options.push(fc.stringMatching(/^[0-9a-z]{26}$/).map((t) => `${prefix}_${t}`));
  return fc.oneof(...options);
}

function queryArbitrary(route: RestRoute): fc.Arbitrary<string> {
  let names: string[] = [];
  if (route.query) {
    try {
      names = Object.keys(((z.toJSONSchema(route.query, { io: 'input', unrepresentable: 'any' }) as JsonSchema).properties ?? {}) as object);
    } catch {
      /* no names: random ones only */
    }
  }
  const name = fc.oneof(
    ...(names.length ? [fc.constantFrom(...names)] : []),
    fc.constantFrom('x', '__proto__', 'constructor', 'limit[]', ''),
    fc.string({ maxLength: 6 }),
  );
  const value = fc.oneof(
    fc.constantFrom('1', '0', '-1', '100', '1001', '1e3', 'true', 'null', 'abc', 'file_01abc', 'R1BDOlM6c2tpbGxfMDE='),
    hostileString.filter((v) => v.length < 5000),
  );
  const pair = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(name, value).map(([n, v]) => `${encodeSegment(n)}=${encodeSegment(v)}`) },
    { weight: 1, arbitrary: fc.constantFrom('x=%ff', 'x=%00', '%00=1', 'x=%', 'x=%e2%82', 'ids[]=a&ids[]=b', 'a=1&a=2', 'x') },
  );
  return fc.array(pair, { maxLength: 4 }).map((pairs) => (pairs.length ? `?${pairs.join('&')}` : ''));
}

const headerValue = fc.oneof(
  fc.string({ unit: 'grapheme-ascii', maxLength: 40 }),
  fc.constantFrom('', 'x'.repeat(300), 'ümlaut'.normalize('NFD').replace(/[^\x20-\x7e]/g, '?')),
);
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/merge-patch+json',
  'text/plain',
  'application/xml',
  'multipart/form-data',
  'multipart/form-data; boundary=XX',
  'application/x-www-form-urlencoded',
  '',
  'garbage',
];

/** One request to `route`: path ids, query, headers and (for bodied methods) a body. */
export function requestArbitrary(route: RestRoute, known: KnownIds, adminToken: string): fc.Arbitrary<FuzzRequest> {
  const parts = route.path.split('/').filter(Boolean);
  const segments = fc.tuple(...parts.map((part, i) => (part.startsWith('{') ? segmentArbitrary(`${parts[i - 1]}/${part}`, known) : fc.constant(part))));
  // fetch cannot send a GET body; a DELETE may carry one (and should be ignored)
  const none = fc.constant<Uint8Array | undefined>(undefined);
  const body =
    route.method === 'GET'
      ? none
      : fc.oneof(
          { weight: route.method === 'DELETE' ? 4 : 1, arbitrary: none },
          { weight: route.method === 'DELETE' ? 1 : 7, arbitrary: bodyArbitrary(route) },
        );
  // Usually just a token and JSON; now and then odd universes, keys, encodings and accepts.
  const extra = fc.record(
    {
      'x-universe': headerValue,
      'idempotency-key': headerValue,
      'last-event-id': headerValue,
      'content-encoding': fc.constantFrom('gzip', 'br', 'identity', 'x-unknown'),
      accept: fc.constantFrom('*/*', 'text/html', 'application/json', 'text/event-stream'),
    },
    { requiredKeys: [] },
  );
  const headers = fc
    .tuple(
      fc.oneof(
        { weight: 12, arbitrary: fc.constant(`Bearer ${adminToken}`) },
        { weight: 1, arbitrary: fc.constantFrom('', 'Bearer ', 'Bearer ast_nope', 'Basic YTpi', `Bearer ${adminToken}x`) },
      ),
      fc.oneof({ weight: 6, arbitrary: fc.constant('application/json') }, { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) }),
      fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: extra }),
    )
    .map(([authorization, contentType, more]) => ({ authorization, 'content-type': contentType, ...more }));
  return fc.tuple(segments, queryArbitrary(route), headers, body).map(([segs, query, hdrs, bytes]) => {
    const h: Record<string, string> = {};
    for (const [k, v] of Object.entries(hdrs)) if (v !== undefined && v !== '') h[k] = v;
    if (bytes === undefined) delete h['content-encoding'];
    return { method: route.method, target: `/${segs.join('/')}${query}`, headers: h, body: bytes, stream: !!route.feed };
  });
}

export interface FuzzAnswer {
  status: number;
  contentType: string | null;
  text: string;
}

/** Sends one request; streams are read to their status and headers only. */
export async function sendFuzzRequest(base: string, req: FuzzRequest, timeoutMs = 15_000): Promise<FuzzAnswer> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), timeoutMs);
  try {
    const res = await fetch(base + req.target, { method: req.method, headers: req.headers, body: req.body?.slice(), signal: ctl.signal });
    const contentType = res.headers.get('content-type');
    if (res.status < 300 && contentType?.startsWith('text/event-stream')) {
      ctl.abort();
      return { status: res.status, contentType, text: '' };
    }
    return { status: res.status, contentType, text: await res.text() };
  } finally {
    clearTimeout(timer);
  }
}

/** Why an answer breaks the rules (a 5xx, or a non-2xx body that is not exactly the envelope), or null. */
export function answerProblem(answer: FuzzAnswer): string | null {
  // The one 5xx the spec names: 501 coming_soon (an imessage channel app or connection).
  const comingSoon = answer.status === 501 && answer.text.includes('"code":"coming_soon"');
  if (answer.status >= 500 && !comingSoon) return `status ${answer.status}: ${answer.text.slice(0, 300)}`;
  if (answer.status < 300) return null;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return `status ${answer.status} with a body that is not JSON: ${answer.text.slice(0, 200)}`;
  }
  const env = body as { error?: { code?: unknown; message?: unknown } };
  const ok =
    body !== null &&
    typeof body === 'object' &&
    Object.keys(body).join() === 'error' &&
    env.error !== null &&
    typeof env.error === 'object' &&
    Object.keys(env.error!).sort().join() === 'code,message' &&
    typeof env.error!.code === 'string' &&
    typeof env.error!.message === 'string';
  return ok ? null : `status ${answer.status} without the envelope: ${answer.text.slice(0, 200)}`;
}

/** A readable description of a request for failure reports. */
export function describeRequest(req: FuzzRequest): string {
  const body = req.body ? new TextDecoder().decode(req.body.slice(0, 300)) : '';
  return `${req.method} /v1${req.target.slice(0, 300)} ${JSON.stringify({ ...req.headers, authorization: req.headers.authorization ? '…' : undefined })} ${body}`;
}
