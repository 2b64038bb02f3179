// Input hygiene at the edge, once: every /v1 request is checked here before auth, the database
// or a handler sees it, so nothing further in can be handed a NUL byte, a lone surrogate or a
// 10,000-level JSON document.
//
//  - query string: valid percent-encoded UTF-8, no control characters   → 400 invalid_request
//  - path ids: the shape of the route's parameter (`file_<ulid>` …)      → 404 not_found,
//    answered by the router after the token check (a missing token is 401 whatever the id)
//  - body: JSON where the route takes JSON, else                         → 415 unsupported_media_type
//    (multipart only where the route streams it: uploads, skill bundles);
//    at most JSON_BODY_LIMIT_BYTES                                       → 413 payload_too_large
//    valid UTF-8, syntactically JSON, nested at most JSON_MAX_DEPTH,
//    no NUL / lone surrogate in any string or key, no `__proto__` key    → 400 invalid_request,
//                                                                          naming the field
// The same body checks guard /auth and the JSON bodies of /graphql (answered in GraphQL's shape).
import express, { type Request, type Response, type NextFunction, type RequestHandler } from 'express';
import { isUtf8 } from 'node:buffer';
import querystring from 'node:querystring';
import { parse as parseGraphql, visit } from 'graphql';
import { sendError } from '../wire/error-envelope.js';
import { plainUrl } from './plain-url.js';
import { LONE_SURROGATE, textProblem } from '../wire/text.js';

export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;
export const JSON_MAX_DEPTH = 64;
const MAX_PATH_PARAM_LENGTH = 256;

const JSON_TYPES = ['application/json', 'application/*+json'];
const CONTROL_CHAR = /[\u0000-\u001f\u007f]/;

const MALFORMED = 'malformed JSON body';

export class InputError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------------------------------------
// Pure checks (exported for tests)

/** Where a JSON document nests deeper than `max` (scanning the text, before parsing it). */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return false;
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  if (IDENT.test(key)) return parent ? `${parent}.${key}` : key;
  return `${parent}[${JSON.stringify(key)}]`;
}

/**
 * The first forbidden string or key in a parsed JSON value, as a message naming the field
 * (`metadata.note contains a NUL character`), or null. `value` must already be depth-checked.
 */
export function findJsonProblem(value: unknown, path = ''): string | null {
  if (typeof value === 'string') {
    const p = textProblem(value);
    return p ? `${path || 'body'} ${p}` : null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = findJsonProblem(value[i], childPath(path, i));
      if (p) return p;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      const where = path || 'body';
      if (key === '__proto__') return `${where} has a key "__proto__", which is not allowed`;
      const kp = textProblem(key);
      if (kp) return `a key of ${where} ${kp}`;
      const p = findJsonProblem((value as Record<string, unknown>)[key], childPath(path, key));
      if (p) return p;
    }
  }
  return null;
}

/** Decodes and checks a JSON body; throws InputError (400) with the reason. */
export function parseJsonBody(buf: Buffer, maxDepth = JSON_MAX_DEPTH): unknown {
  if (!isUtf8(buf)) throw new InputError(400, 'invalid_request', 'the body is not valid UTF-8');
  const text = buf.toString('utf8');
  if (jsonDepthExceeds(text, maxDepth)) throw new InputError(400, 'invalid_request', `JSON nested deeper than ${maxDepth} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InputError(400, 'invalid_request', MALFORMED);
  }
  const problem = findJsonProblem(value);
  if (problem) throw new InputError(400, 'invalid_request', problem);
  return value;
}

/** Each `name=value` of a raw query string, decoded; throws InputError (400) on bad input. */
export function checkQueryString(raw: string, what = 'query parameter'): void {
  if (!raw) return;
  for (const pair of raw.split('&')) {
    const eq = pair.indexOf('=');
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent((eq === -1 ? pair : pair.slice(0, eq)).replace(/\+/g, ' '));
      value = eq === -1 ? '' : decodeURIComponent(pair.slice(eq + 1).replace(/\+/g, ' '));
    } catch {
      throw new InputError(400, 'invalid_request', `a ${what} is not valid percent-encoded UTF-8`);
    }
    if (CONTROL_CHAR.test(name)) throw new InputError(400, 'invalid_request', `a ${what} name contains a control character`);
    if (CONTROL_CHAR.test(value)) throw new InputError(400, 'invalid_request', `${what} ${name} contains a control character`);
  }
}

// ---------------------------------------------------------------------------------------------
// Path ids: the shape of each route parameter, keyed by `<segment before it>/{<name>}`.

const idOf = (...prefixes: string[]) => new RegExp(`^(?:${prefixes.join('|')})_[0-9a-z]{1,64}$`);
export const PATH_PARAM_SHAPES: Record<string, RegExp> = {
  'agents/{id}': idOf('agent'),
  'sessions/{id}': idOf('sess', 'agent'),
  'resources/{rid}': idOf('sesrsc'),
  'files/{file_id}': idOf('file'),
  'skills/{skillId}': idOf('skill'),
  'revisions/{revisionId}': idOf('skr'),
  'routines/{id}': idOf('rtn'),
  'webhooks/{id}': idOf('whep'),
  'memory-stores/{id}': idOf('memstore'),
  'memories/{memory_id}': idOf('mem'),
  'versions/{version_id}': idOf('memver'),
  // a session's thread (multiagent); a channel connection's `threads/{thread_id}` is the platform's own id
  'sessions/{id}/threads/{thread_id}': idOf('sthr'),
  'outcomes/{outcome_id}': idOf('outc'),
  // created slugs are stricter (3 to 40, no dash at the ends); personal ones are derived from emails
  'universes/{slug}': /^[a-z0-9][a-z0-9-]{0,63}$/,
};

/**
 * The shape of the parameter at `segments[i]`: by the whole template up to it (where the same
 * `<segment>/{name}` means different things on different routes), else by the segment before it.
 */
export function pathParamShape(segments: string[], i: number, table: Record<string, RegExp> = PATH_PARAM_SHAPES): RegExp | undefined {
  return (
    table[
      segments
        .slice(0, i + 1)
        .filter(Boolean)
        .join('/')
    ] ?? table[`${segments[i - 1]}/${segments[i]}`]
  );
}

interface CompiledRoute {
  method: string;
  segments: string[];
  /** Content types the route reads its body as; empty when it takes no body (one is ignored). */
  bodyTypes: string[];
}

/** What the edge needs to know of a route (the REST route table provides it). */
export interface EdgeRoute {
  method: string;
  /** `/agents/{id}` */
  path: string;
  /** Takes a JSON body. */
  body?: unknown;
  /** Reads its own body (uploads); `rawRequestBody.content` names the media types it takes. */
  raw?: unknown;
  rawRequestBody?: Record<string, unknown>;
}

function compile(routes: EdgeRoute[]): CompiledRoute[] {
  return routes.map((r) => ({
    method: r.method,
    segments: r.path.split('/').filter(Boolean),
    bodyTypes: r.raw && r.rawRequestBody ? Object.keys((r.rawRequestBody as { content?: object }).content ?? {}) : r.body ? ['application/json'] : [],
  }));
}

type PathMatcher = (rawPath: string) => { routes: CompiledRoute[]; segments: string[] } | null;

/**
 * The templates a path can match (same number of segments, each literal equal), in table order;
 * grouped at start-up by segment count and first segment, so a request compares only its group.
 */
function pathMatcher(compiled: CompiledRoute[]): PathMatcher {
  const isParam = (s: string | undefined) => s === undefined || s.startsWith('{');
  const groups = new Map<string, CompiledRoute[]>();
  const paramFirst = new Map<number, CompiledRoute[]>();
  for (const c of compiled) {
    const n = c.segments.length;
    if (!paramFirst.has(n))
      paramFirst.set(
        n,
        compiled.filter((o) => o.segments.length === n && isParam(o.segments[0])),
      );
    if (isParam(c.segments[0])) continue;
    const key = `${n}/${c.segments[0]}`;
    if (!groups.has(key))
      groups.set(
        key,
        compiled.filter((o) => o.segments.length === n && (isParam(o.segments[0]) || o.segments[0] === c.segments[0])),
      );
  }
  return (rawPath) => {
    const segments = rawPath.split('/').filter(Boolean);
    const group = groups.get(`${segments.length}/${segments[0]}`) ?? paramFirst.get(segments.length) ?? [];
    const found = group.filter((c) => c.segments.every((s, i) => s.startsWith('{') || s === segments[i]));
    return found.length ? { routes: found, segments } : null;
  };
}

/** Throws InputError (404) when a path parameter cannot name anything. */
function checkPathParams(template: string[], segments: string[]): void {
  template.forEach((part, i) => {
    if (!part.startsWith('{')) return;
    let value: string;
    try {
      value = decodeURIComponent(segments[i]!);
    } catch {
      throw new InputError(404, 'not_found', `${part.slice(1, -1)} does not name any resource`);
    }
    const shape = pathParamShape(template, i);
    const ok = shape ? shape.test(value) : value.length <= MAX_PATH_PARAM_LENGTH && !CONTROL_CHAR.test(value) && !LONE_SURROGATE.test(value);
    if (!ok) throw new InputError(404, 'not_found', `${part.slice(1, -1)} does not name any resource`);
  });
}

// ---------------------------------------------------------------------------------------------
// Middleware

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
}

/** A declared charset other than UTF-8 is refused (JSON is UTF-8, RFC 8259). */
function charsetOk(req: Request): boolean {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '');
  return !m || /^utf-?8$/i.test(m[1]!);
}

const readRaw = (limit: number) => express.raw({ type: () => true, limit, inflate: true });

/** Maps body-parser's errors (size, encoding, aborted) to an InputError. */
function fromBodyParser(err: Error & { type?: string; status?: number }, limit: number): InputError {
  if (err.type === 'entity.too.large') return new InputError(413, 'payload_too_large', `request body over ${limit} bytes`);
  if (err.type === 'encoding.unsupported') return new InputError(415, 'unsupported_media_type', 'unsupported Content-Encoding (identity, gzip, deflate, br)');
  return new InputError(400, 'invalid_request', err.message || 'unreadable request body');
}

const answerRest = (res: Response, err: InputError) => sendError(res, err.status, err.code, err.message);

/** What to do with a body that is refused: answer at once (`/auth`), or leave it for the router (`/v1`). */
type OnRefused = (req: Request, res: Response, next: NextFunction, err: InputError) => void;
const answerAtOnce: OnRefused = (_req, res, _next, err) => answerRest(res, err);

/** Reads a JSON body (when there is one), checks it and sets `req.body`; a refused one goes to `refused`. */
function jsonBodyHandler(limit: number, refused: OnRefused = answerAtOnce): RequestHandler {
  const read = readRaw(limit);
  return (req, res, next) => {
    if (!hasBody(req)) return next();
    if (!charsetOk(req)) return refused(req, res, next, new InputError(415, 'unsupported_media_type', 'JSON bodies must be UTF-8'));
    read(req, res, (err?: unknown) => {
      if (err) return refused(req, res, next, fromBodyParser(err as Error, limit));
      const buf = req.body as unknown;
      req.body = undefined;
      if (!Buffer.isBuffer(buf) || buf.length === 0) return next();
      try {
        req.body = parseJsonBody(buf);
      } catch (e) {
        return refused(req, res, next, e instanceof InputError ? e : new InputError(400, 'invalid_request', 'malformed JSON body'));
      }
      next();
    });
  };
}

const FORM_TYPE = 'application/x-www-form-urlencoded';

/**
 * Bodies of non-REST endpoints (`/auth`): JSON, or with `forms` also HTML form posts (checked like
 * a query string, then parsed); anything else 415.
 */
export function jsonBody(limit = JSON_BODY_LIMIT_BYTES, opts: { forms?: boolean } = {}): RequestHandler {
  const parse = jsonBodyHandler(limit);
  const readForm = readRaw(limit);
  return (req, res, next) => {
    if (!hasBody(req)) return next();
    if (opts.forms && req.is(FORM_TYPE)) {
      return readForm(req, res, (err?: unknown) => {
        if (err) return answerRest(res, fromBodyParser(err as Error, limit));
        const buf = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const text = buf.toString('utf8');
        try {
          if (!isUtf8(buf)) throw new InputError(400, 'invalid_request', 'the body is not valid UTF-8');
          checkQueryString(text, 'form field');
        } catch (e) {
          return answerRest(res, e as InputError);
        }
        req.body = querystring.parse(text);
        next();
      });
    }
    if (!req.is(JSON_TYPES))
      return answerRest(res, new InputError(415, 'unsupported_media_type', `send the body as application/json${opts.forms ? ` or ${FORM_TYPE}` : ''}`));
    parse(req, res, next);
  };
}

/** What Yoga reads in a POST (its request parsers): JSON, `application/graphql`, forms. */
const GRAPHQL_POST_TYPES = [...JSON_TYPES, 'application/graphql', 'multipart/form-data', 'application/x-www-form-urlencoded'];

/**
 * /graphql: the query string and JSON POST bodies get the same checks, answered as GraphQL
 * errors. Yoga still parses the body itself (it is handed the bytes it would have read), so its
 * own GraphQL-over-HTTP answers, malformed JSON included, stay as they are.
 */
export function graphqlInputHygiene(limit = JSON_BODY_LIMIT_BYTES): RequestHandler {
  const read = express.raw({ type: () => true, limit, inflate: false });
  const answer = (res: Response, err: InputError) => {
    if (!res.headersSent) res.status(err.status).json({ errors: [{ message: err.message, extensions: { code: err.code } }] });
  };
  return (req, res, next) => {
    try {
      checkQueryString(queryOf(req));
    } catch (e) {
      return answer(res, e as InputError);
    }
    if (req.method === 'GET') {
      const problem = graphqlLiteralProblem(new URLSearchParams(queryOf(req)).get('query'));
      return problem ? answer(res, new InputError(400, 'invalid_request', problem)) : next();
    }
    // A POST in a type Yoga does not read was a 415 with an empty body: said in GraphQL's error shape.
    if (req.method === 'POST' && !req.is(GRAPHQL_POST_TYPES))
      return answer(res, new InputError(415, 'unsupported_media_type', 'send the operation as application/json: {"query": …, "variables": …}'));
    const identity = (req.headers['content-encoding'] ?? 'identity').toLowerCase() === 'identity';
    if (req.method !== 'POST' || !identity || !hasBody(req) || !req.is(JSON_TYPES)) return next();
    read(req, res, (err?: unknown) => {
      if (err) return answer(res, fromBodyParser(err as Error, limit));
      const buf = req.body as unknown;
      req.body = undefined;
      if (!Buffer.isBuffer(buf) || buf.length === 0) return next();
      try {
        const parsed = parseJsonBody(buf) as { query?: unknown } | null;
        const problem = graphqlLiteralProblem(parsed && typeof parsed === 'object' ? parsed.query : null);
        if (problem) return answer(res, new InputError(400, 'invalid_request', problem));
      } catch (e) {
        if (!(e instanceof InputError) || e.message !== MALFORMED) return answer(res, e as InputError);
      }
      req.body = buf;
      next();
    });
  };
}

/**
 * A string literal of a GraphQL document that cannot be stored as text (`"a\\u0000b"` in the query
 * itself, not in a variable). Only documents with a `\\u` escape are parsed here; a document that
 * does not parse is left to Yoga's own answer.
 */
function graphqlLiteralProblem(query: unknown): string | null {
  if (typeof query !== 'string' || !/\\u/i.test(query)) return null;
  let problem: string | null = null;
  try {
    visit(parseGraphql(query, { noLocation: true }), {
      StringValue(node) {
        problem ??= textProblem(node.value);
      },
    });
  } catch {
    return null;
  }
  return problem && `a string in the GraphQL document ${problem}`;
}

function queryOf(req: Request): string {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  return q === -1 ? '' : url.slice(q + 1);
}

// What is refused here on /v1 is answered by the router once the token is checked (spec: a
// missing, unknown, revoked or expired token is 401 whatever else is wrong with the request; a
// token without the scope 403): a path id that cannot exist (404), a query string, content type
// or body that cannot be read (400, 413, 415).
const pathProblems = new WeakMap<object, InputError>();
const refusedInputs = new WeakMap<object, InputError>();

/** The 404 for a path id that cannot name anything, when inputHygiene found one on this request. */
export function pathParamProblem(req: object): InputError | undefined {
  return pathProblems.get(req);
}

/** What inputHygiene refused on this request (the first problem: query, then path, then body), for the router to answer after auth. */
export function refusedInput(req: object): InputError | undefined {
  return refusedInputs.get(req);
}

const leaveForRouter: OnRefused = (req, _res, next, err) => {
  refusedInputs.set(req, err);
  next();
};

/**
 * The /v1 edge: query string, path ids and body, checked against the route table (mount before
 * the REST router, in place of a body parser). Nothing is answered here: what is refused is
 * recorded (refusedInput) and no further part of the request is read.
 */
export function inputHygiene(routes: EdgeRoute[], limit = JSON_BODY_LIMIT_BYTES): RequestHandler {
  const matchPath = pathMatcher(compile(routes));
  const parse = jsonBodyHandler(limit, leaveForRouter);
  return (req: Request, res: Response, next: NextFunction) => {
    try {
      checkQueryString(queryOf(req));
      const match = matchPath(plainUrl(req.url)?.path ?? req.path);
      if (!match) return next(); // the router answers 404
      try {
        for (const route of match.routes) checkPathParams(route.segments, match.segments);
      } catch (e) {
        pathProblems.set(req, e as InputError);
        throw e;
      }
      const route = match.routes.find((r) => r.method === req.method);
      if (!route || !route.bodyTypes.length || !hasBody(req)) return next(); // no body to read (405: the router answers)
      const json = route.bodyTypes.includes('application/json');
      if (!req.is(route.bodyTypes) && !(json && req.is(JSON_TYPES))) {
        throw new InputError(415, 'unsupported_media_type', `send the body as ${route.bodyTypes.join(' or ')}`);
      }
      if (!req.is(JSON_TYPES)) return next(); // multipart: the route streams it itself
    } catch (e) {
      // no (more of the) body is read for a request that will be refused
      return leaveForRouter(req, res, next, e as InputError);
    }
    parse(req, res, next);
  };
}
