// The /v1 dispatcher (rest/router.ts, node:http level) answers as Express's router did on the
// tricky cases: HEAD and OPTIONS, trailing and doubled slashes, the mount's case, unknown paths,
// wrong methods, percent-encoded ids; and what stays with Express under /v1 still does.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { compileRoutes } from '../../rest/route-matcher.js';
import { defineRoute } from '../../rest/route.js';
import { isRestRequest } from '../../src/http/app.js';
import { parseQuery, plainUrl } from '../../src/http/plain-url.js';
import express from 'express';
import { z } from 'zod';

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

let s: TestServer;
let agentId: string;

/** A request with the path exactly as written (fetch would normalise some of these). */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(s.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, method, path, headers: { authorization: `Bearer ${s.adminToken}`, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const json = (a: RawAnswer) => JSON.parse(a.text) as { agent?: { id: string }; error?: { code: string; message: string } };

beforeAll(async () => {
  s = await startTestServer();
  agentId = (await s.api('POST', '/agents', { body: { displayName: 'Dispatch' } })).body.agent.id;
});
afterAll(async () => {
  await s?.stop();
});

describe('the /v1 dispatcher', () => {
  it('serves GET with RateLimit headers and a JSON body of its stated length, without an ETag', async () => {
    const res = await raw('GET', `/v1/agents/${agentId}`);
    expect(res.status).toBe(200);
    expect(json(res).agent!.id).toBe(agentId);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
    expect(res.headers['ratelimit-limit']).toBeDefined();
    expect(res.headers['ratelimit-remaining']).toBeDefined();
    expect(res.headers.etag).toBeUndefined();
  });

  it('answers HEAD as GET without the body (same length), and OPTIONS with 405 and Allow', async () => {
    const get = await raw('GET', `/v1/agents/${agentId}`);
    const head = await raw('HEAD', `/v1/agents/${agentId}`);
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    const options = await raw('OPTIONS', `/v1/agents/${agentId}`);
    expect(options.status).toBe(405);
    expect(options.headers.allow).toBe('GET, PATCH, DELETE');
    expect(json(options).error).toEqual({ code: 'method_not_allowed', message: 'method not allowed; use GET, PATCH, DELETE' });
    // HEAD of a path without GET is a wrong method too.
    const headPost = await raw('HEAD', '/v1/agents/agent_x/archive');
    expect(headPost.status).toBe(405);
    expect(headPost.headers.allow).toBe('POST');
  });

  it('takes one trailing slash and the mount in any case; not a doubled slash or another case of a route', async () => {
    expect((await raw('GET', `/v1/agents/${agentId}/`)).status).toBe(200);
    expect((await raw('GET', `/V1/agents/${agentId}`)).status).toBe(200);
    expect((await raw('GET', `/v1/agents/${agentId}?unused=1`)).status).toBe(200);
    const doubled = await raw('GET', `/v1/agents/${agentId}//`);
    expect(doubled.status).toBe(404);
    expect(json(doubled).error).toEqual({ code: 'not_found', message: `no route for GET /v1/agents/${agentId}//` });
    expect(json(await raw('GET', `/v1//agents/${agentId}`)).error!.message).toBe(`no route for GET /v1//agents/${agentId}`);
    expect((await raw('GET', `/v1/Agents/${agentId}`)).status).toBe(404);
  });

  it('a route that declares query parameters refuses others (every list alike); one that declares none ignores them', async () => {
    for (const list of ['agents', 'sessions', 'skills', 'files', 'routines', 'environments', 'vaults']) {
      const res = await raw('GET', `/v1/${list}?unknown=1`);
      expect(res.status, list).toBe(400);
      expect(json(res).error).toEqual({ code: 'invalid_request', message: 'query: Unrecognized key: "unknown"' });
    }
    expect((await raw('GET', `/v1/agents/${agentId}?unused=1`)).status).toBe(200);
  });

  it('answers unknown paths with the 404 envelope (the mount itself included) and wrong methods with 405', async () => {
    for (const [path, shown] of [
      ['/v1/nope', '/v1/nope'],
      ['/v1', '/v1/'],
      ['/v1/', '/v1/'],
      ['/v1?x=1', '/v1/'],
    ] as const) {
      const res = await raw('GET', path);
      expect(res.status, path).toBe(404);
      expect(json(res).error, path).toEqual({ code: 'not_found', message: `no route for GET ${shown}` });
      expect(res.headers['ratelimit-limit'], path).toBeDefined();
    }
    expect(json(await raw('OPTIONS', '/v1/nope')).error!.message).toBe('no route for OPTIONS /v1/nope');
    const wrong = await raw('PUT', `/v1/agents/${agentId}`);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('GET, PATCH, DELETE');
    const list = await raw('DELETE', '/v1/agents');
    expect(list.headers.allow).toBe('GET, POST');
  });

  it('decodes percent-encoded ids; one that cannot name anything is 404 before any lookup', async () => {
    const encoded = await raw('GET', `/v1/agents/${agentId.replace('agent_', 'agent%5F')}`);
    expect(encoded.status).toBe(200);
    expect(json(encoded).agent!.id).toBe(agentId);
    for (const bad of ['%E0%A4%A', 'agent_x%2Fy', 'x%00']) {
      const res = await raw('GET', `/v1/agents/${bad}`);
      expect(res.status, bad).toBe(404);
      expect(json(res).error, bad).toEqual({ code: 'not_found', message: 'id does not name any resource' });
    }
    expect(json(await raw('GET', '/v1/agents/agent_zzzz')).error).toEqual({ code: 'not_found', message: 'agent not found' });
  });

  it("leaves the OpenAPI document to Express and serves the platforms' inbound endpoint as a signed route (no token, no rate limit)", async () => {
    const doc = await raw('GET', '/v1/openapi.json', { authorization: '' });
    expect(doc.status).toBe(200);
    expect(doc.headers['ratelimit-limit']).toBeUndefined();
    expect(JSON.parse(doc.text).openapi).toMatch(/^3\./);
    // other methods: 405 with Allow, as on every other /v1 path (was 404)
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const other = await raw(method, '/v1/openapi.json', { authorization: '' });
      expect(other.status, method).toBe(405);
      expect(other.headers.allow).toBe('GET');
      expect(json(other).error!.code).toBe('method_not_allowed');
    }
    const inbound = await raw('GET', '/v1/channels/inbound/chapp_x', { authorization: '' });
    expect(json(inbound).error).toEqual({ code: 'not_found', message: 'channel app not found' });
    expect(inbound.headers['ratelimit-limit']).toBeUndefined();
    // Any media type reaches the route (its signature covers the bytes as sent), none is parsed.
    const xml = await raw('POST', '/v1/channels/inbound/chapp_x', { authorization: '', 'content-type': 'text/xml' }, '<x/>');
    expect(json(xml).error!.code).toBe('not_found');
    const other = await raw('PUT', '/v1/channels/inbound/chapp_x', { authorization: '' });
    expect(other.status).toBe(405);
    expect(other.headers.allow).toBe('POST, GET');
    expect(other.headers['ratelimit-limit']).toBeUndefined();
    // Deeper paths are not the inbound endpoint's: the dispatcher answers them.
    expect(json(await raw('GET', '/v1/channels/inbound/x/y')).error!.message).toBe('no route for GET /v1/channels/inbound/x/y');
  });

  it('keeps the origin guard: a cookie-authenticated cross-origin change is refused before the rate limit', async () => {
    const cookie = await s.login();
    const res = await raw('POST', '/v1/agents', { authorization: '', cookie, origin: 'http://evil.example', 'content-type': 'application/json' });
    expect(res.status).toBe(403);
    expect(json(res).error!.code).toBe('forbidden');
    expect(res.headers['ratelimit-limit']).toBeUndefined();
  });
});

describe("the hot path without Express's prototypes (src/http/plain-url.ts)", () => {
  it('reads path and query as Express does, and leaves URLs Express parses otherwise to Express', () => {
    const app = express();
    const viaExpress = (url: string) => {
      const req = Object.setPrototypeOf({ url, headers: {} }, app.request) as express.Request;
      return { path: req.path, query: { ...req.query } };
    };
    for (const url of ['/agents/agent_1', '/agents/agent_1?', '/agents/a?x=1&x=2&y=%20z+w', '/agents?archived=true&a[b]=c', '/a/%2F/b?q=%E2%9C%93', '/?&&=']) {
      const plain = plainUrl(url)!;
      expect(plain, url).not.toBeNull();
      expect({ path: plain.path, query: { ...parseQuery(plain.query) } }, url).toEqual(viaExpress(url));
    }
    for (const url of ['/agents/a#frag', '/agents/a?x=1#f', '/a b', '/a\tb', 'agents', '/a?b=\u00a0']) expect(plainUrl(url), url).toBeNull();
  });

  it("serves GET with a query, a fragment (Express's parser) and a raw route on the same dispatcher", async () => {
    expect(json(await raw('GET', `/v1/agents/${agentId}#part`)).agent!.id).toBe(agentId);
    const archived = await raw('GET', '/v1/agents?archived=false');
    expect(archived.status).toBe(200);
    expect((JSON.parse(archived.text) as { agents: { id: string }[] }).agents.map((a) => a.id)).toContain(agentId);
    expect((await raw('GET', '/v1/agents?archived=maybe')).status).toBe(400);
    // An anonymous GET (rate-limited by address, through Express's request API) is still answered.
    const anonymous = await raw('GET', `/v1/agents/${agentId}`, { authorization: '' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['ratelimit-limit']).toBeDefined();
  });
});

describe('route matching (rest/route-matcher.ts)', () => {
  const route = (method: 'GET' | 'POST', path: string) =>
    defineRoute({
      method,
      path,
      operationId: `${method}${path}`,
      summary: '',
      tag: 't',
      scope: null,
      document: '',
      raw: async () => undefined,
      response: z.unknown(),
    });
  const table = [route('GET', '/x/{id}'), route('POST', '/x/literal'), route('GET', '/x/literal'), route('GET', '/y/{a}/z/{b}')];
  const match = compileRoutes(table);

  it('tries routes in table order: a parameter route registered first wins over a later literal one', () => {
    const found = match('GET', '/x/literal');
    expect(found.kind === 'route' && found.route).toBe(table[0]);
    const post = match('POST', '/x/literal');
    expect(post.kind === 'route' && post.route).toBe(table[1]);
  });

  it('decodes each parameter and names 405 by the first matching path', () => {
    expect(match('GET', '/y/a%20b/z/c')).toMatchObject({ kind: 'route', params: { a: 'a b', b: 'c' } });
    expect(match('DELETE', '/x/other')).toEqual({ kind: 'method_not_allowed', allow: 'GET' });
    expect(match('DELETE', '/x/literal')).toEqual({ kind: 'method_not_allowed', allow: 'GET' });
    expect(match('GET', '/q')).toEqual({ kind: 'not_found' });
  });

  it('routes /v1 (any case, with query or fragment) to the dispatcher, not /v10 or the OpenAPI GET', () => {
    expect(isRestRequest('GET', '/v1')).toBe(true);
    expect(isRestRequest('GET', '/V1/agents?x')).toBe(true);
    expect(isRestRequest('GET', '/v1#f')).toBe(true);
    expect(isRestRequest('GET', '/v10/agents')).toBe(false);
    expect(isRestRequest('GET', '/graphql')).toBe(false);
    expect(isRestRequest('GET', '/v1/openapi.json')).toBe(false);
    expect(isRestRequest('POST', '/v1/openapi.json')).toBe(false);
    expect(isRestRequest('POST', '/v1/channels/inbound/chapp_1')).toBe(true);
  });
});
