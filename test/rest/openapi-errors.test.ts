// Error answers are documented: every route of the table is called the ways a client gets it
// wrong (no token, a token of too low a scope, ids that do not exist, a body of the wrong shape,
// a limit out of range), and api() checks each answer's status, content type and body against
// /v1/openapi.json. None may be a 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../rest/routes/index.js';
import type { RestRoute } from '../../rest/route.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { pathParamShape } from '../../src/http/input-hygiene.js';

let s: TestServer;
let readToken: string;
beforeAll(async () => {
  s = await startTestServer();
  readToken = await s.mintToken('read');
});
afterAll(async () => s?.stop());

/** The route's path with ids of the right shape that name nothing. */
function missing(route: RestRoute): string {
  const parts = route.path.split('/');
  return parts
    .map((part, i) => {
      const param = /^\{(\w+)\}$/.exec(part)?.[1];
      if (!param) return part;
      if (param === 'provider') return 'anthropic';
      if (param === 'slug') return 'no-such-universe';
      const shape = pathParamShape(parts, i);
      const prefix = shape ? /\(\?:(\w+)/.exec(shape.source)?.[1] : undefined;
      return prefix ? `${prefix}_01jz0000000000000000000000` : `missing_${param}`;
    })
    .join('/');
}
const name = (route: RestRoute) => `${route.method} ${route.path}`;
/** Routes that read a JSON body get `{}`; the others get none (a body they do not read is 415). */
const bodyOf = (route: RestRoute) => (route.body ? { body: {} } : {});
const hasBody = (route: RestRoute) => !!route.body;

describe('error answers of every route are documented', () => {
  it.each(routes.filter((r) => r.scope).map((r) => [name(r), r] as const))('%s without a token: 401 invalid_token', async (_n, route) => {
    const res = await s.api(route.method, missing(route), { token: null, ...bodyOf(route) });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_token');
  });

  it.each(routes.filter((r) => r.scope === 'write' || r.scope === 'admin').map((r) => [name(r), r] as const))(
    '%s with a read token: 403 insufficient_scope',
    async (_n, route) => {
      const res = await s.api(route.method, missing(route), { token: readToken, ...bodyOf(route) });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('insufficient_scope');
    },
  );

  // Feeds would stay open on a real id; here every id names nothing, and the answer comes first.
  it.each(routes.filter((r) => r.path.includes('{') && !r.path.startsWith('/connect')).map((r) => [name(r), r] as const))(
    '%s with ids that name nothing: a documented 4xx',
    async (_n, route) => {
      const res = await s.api(route.method, missing(route), bodyOf(route));
      expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(400);
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
    },
  );

  it.each(routes.filter(hasBody).map((r) => [name(r), r] as const))('%s with a body that is not an object: a documented 4xx', async (_n, route) => {
    const res = await s.api(route.method, missing(route), { raw: '[1, 2, 3]' });
    expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(400);
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
  });

  it.each(routes.filter((r) => r.method === 'GET' && r.query && !r.feed).map((r) => [name(r), r] as const))(
    '%s?limit=0: a documented 4xx or an answer',
    async (_n, route) => {
      const res = await s.api('GET', `${missing(route)}?limit=0`);
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
    },
  );
});
