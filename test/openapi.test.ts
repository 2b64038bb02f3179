// The REST route table: every route's GraphQL document validates against the schema, every
// spec path exists in /v1/openapi.json, and the document is OpenAPI 3.1.
import { describe, expect, it } from 'vitest';
import { validate } from 'graphql';
import { schema } from '../src/graphql/schema.js';
import { routes } from '../rest/routes/index.js';
import { buildOpenApi } from '../rest/openapi.js';

describe('REST route table', () => {
  it.each(routes.filter((r) => !r.raw).map((r) => [`${r.method} ${r.path}`, r] as const))('%s: its GraphQL document validates', (_name, route) => {
    expect(validate(schema, route.parsed!)).toEqual([]);
  });

  it('has no duplicate method+path and unique operation ids', () => {
    const keys = routes.map((r) => `${r.method} ${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    const ids = routes.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('OpenAPI document', () => {
  const doc = buildOpenApi(routes) as any;
  it('is OpenAPI 3.1 with the error envelope and bearer auth', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.schemas.Error.properties.error.properties.code.type).toBe('string');
    expect(doc.components.securitySchemes.bearerAuth.scheme).toBe('bearer');
  });
  it('lists every route with its method, request body and error responses', () => {
    for (const r of routes) {
      const op = doc.paths[r.path]?.[r.method.toLowerCase()];
      expect(op, `${r.method} ${r.path}`).toBeTruthy();
      expect(op.responses[String(r.status ?? 200)]).toBeTruthy();
      if (r.body) expect(op.requestBody.content['application/json'].schema).toBeTruthy();
      if (r.scope) expect(op.responses['401']).toBeTruthy();
    }
  });
  it('carries the spec paths built so far', () => {
    const paths = Object.keys(doc.paths);
    for (const p of ['/whoami', '/universes', '/universes/{slug}', '/openapi.json']) expect(paths).toContain(p);
  });
});
