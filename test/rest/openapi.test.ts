// The REST route table: every route's GraphQL document validates against the schema (and
// compiles with graphql-jit, as the REST executor runs it), every
// spec path exists in /v1/openapi.json, and the document is OpenAPI 3.1.
import { describe, expect, it } from 'vitest';
import { validate } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { schema } from '../../src/graphql/schema.js';
import { routes } from '../../rest/routes/index.js';
import { buildOpenApi } from '../../rest/openapi.js';
import { CONNECTION_PLATFORMS, LINK_FLOW_PLATFORMS } from '../../src/channels/contract.js';
import { flowOf } from '../../src/channels/connections.js';

describe('REST route table', () => {
  const withDocument = routes.filter((r) => r.parsed);
  it.each(withDocument.map((r) => [`${r.method} ${r.path}`, r] as const))(
    '%s: its GraphQL document validates and compiles with graphql-jit',
    (_name, route) => {
      expect(validate(schema, route.parsed!)).toEqual([]);
      const compiled = compileQuery(schema, route.parsed!);
      expect(isCompiledQuery(compiled) ? [] : compiled.errors).toEqual([]);
    },
  );

  it('every route without a GraphQL document is a byte stream, an event feed or a signed inbound call', () => {
    expect(withDocument.length).toBeGreaterThan(0);
    expect(routes.filter((r) => !r.parsed && !r.raw && !r.feed && !r.signed).map((r) => `${r.method} ${r.path}`)).toEqual([]);
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
  it("bounds every integer a request can carry to GraphQL's 32-bit Int, which the core takes", () => {
    // Request bodies and parameters, with the components they reference (responses excluded).
    const seen = new Set<string>();
    const unbounded: string[] = [];
    const walk = (v: unknown, where: string): void => {
      if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${where}/${i}`));
      if (!v || typeof v !== 'object') return;
      const o = v as Record<string, unknown>;
      if (typeof o.$ref === 'string') {
        const name = o.$ref.split('/').pop()!;
        if (!seen.has(name)) {
          seen.add(name);
          walk(doc.components.schemas[name], `#${name}`);
        }
      }
      const type = o.type;
      if (type === 'integer' || (Array.isArray(type) && type.includes('integer'))) {
        if (!(typeof o.maximum === 'number' && o.maximum <= 2 ** 31 - 1 && typeof o.minimum === 'number' && o.minimum >= -(2 ** 31))) unbounded.push(where);
      }
      for (const [k, x] of Object.entries(o)) walk(x, `${where}/${k}`);
    };
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(ops)) {
        walk(op.parameters, `${method} ${path} parameters`);
        walk(op.requestBody, `${method} ${path} body`);
      }
    }
    expect(seen.size).toBeGreaterThan(0);
    expect(unbounded).toEqual([]);
  });
  it('marks a request body required exactly where the server refuses a request without one', () => {
    const optional = ['createAgent', 'updateAgent', 'updateSession'];
    for (const r of routes.filter((x) => x.body)) {
      const op = doc.paths[r.path][r.method.toLowerCase()];
      expect(op.requestBody.required, r.operationId).toBe(!r.body!.safeParse({}).success);
    }
    for (const id of [
      'createSession',
      'createRoutine',
      'createWebhookEndpoint',
      'createVault',
      'createEnvironment',
      'createUniverse',
      'putVaultCredential',
      'createChannelWebhook',
    ]) {
      const r = routes.find((x) => x.operationId === id)!;
      expect(doc.paths[r.path][r.method.toLowerCase()].requestBody.required, id).toBe(true);
    }
    for (const id of optional) {
      const r = routes.find((x) => x.operationId === id)!;
      expect(doc.paths[r.path][r.method.toLowerCase()].requestBody.required, id).toBe(false);
    }
  });
  it('documents X-Universe, Last-Event-ID, cookie sign-in, path id shapes and the edge rules', () => {
    expect(doc.components.securitySchemes.cookieAuth).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'as_session' });
    expect(doc.security).toEqual([{ bearerAuth: [] }, { cookieAuth: [] }]);
    expect(doc.info.description).toMatch(/control characters/);
    expect(doc.info.description).toMatch(/unpaired UTF-16 surrogate/);
    for (const r of routes.filter((x) => x.scope)) {
      const names = (doc.paths[r.path][r.method.toLowerCase()].parameters ?? []).map((p: { name: string }) => p.name);
      expect(names, r.operationId).toContain('X-Universe');
      if (r.feed) expect(names, r.operationId).toContain('Last-Event-ID');
    }
    const agentId = doc.paths['/agents/{id}'].get.parameters.find((p: { name: string }) => p.name === 'id');
    expect(new RegExp(agentId.schema.pattern).test('agent_01abc')).toBe(true);
    expect(new RegExp(agentId.schema.pattern).test('0')).toBe(false);
    const key = doc.paths['/agents/{id}/secrets/{key}'].put.parameters.find((p: { name: string }) => p.name === 'key');
    expect(new RegExp(key.schema.pattern).test('bad-key')).toBe(false);
    expect(doc.paths['/sessions'].post.responses['400'].description).toMatch(/too_many_resources/);
  });
  it("has request examples the server takes (each parses with its route's body schema)", () => {
    const withExample = routes.filter((r) => r.body && doc.paths[r.path][r.method.toLowerCase()].requestBody.content['application/json'].example !== undefined);
    expect(withExample.length).toBeGreaterThanOrEqual(12);
    for (const r of withExample) {
      const example = doc.paths[r.path][r.method.toLowerCase()].requestBody.content['application/json'].example;
      const parsed = r.body!.safeParse(example);
      expect(parsed.success, `${r.operationId}: ${parsed.success ? '' : JSON.stringify(parsed.error.issues)}`).toBe(true);
    }
  });
  it('names the link-flow platforms (callback_url) as the connections code decides them', () => {
    for (const p of CONNECTION_PLATFORMS.filter((x) => x !== 'imessage')) {
      expect((LINK_FLOW_PLATFORMS as readonly string[]).includes(p), p).toBe(flowOf(p) === 'link');
    }
  });
  it('carries the spec paths built so far', () => {
    const paths = Object.keys(doc.paths);
    for (const p of ['/whoami', '/universes', '/universes/{slug}', '/openapi.json']) expect(paths).toContain(p);
  });
});
