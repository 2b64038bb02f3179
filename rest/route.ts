// A REST route is data: method, path, scope, input schemas, a pre-parsed GraphQL document,
// how to build its variables, and how to shape its result into the spec's body.
import { parse, type DocumentNode } from 'graphql';
import type { z } from 'zod';
import type { Scope } from '../src/auth/scopes.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteInput<B, Q> {
  params: Record<string, string>;
  query: Q;
  body: B;
  /** Lower-cased request headers. */
  headers: Record<string, string | undefined>;
}

export interface RestRoute<B = any, Q = any> {
  method: HttpMethod;
  /** OpenAPI-style path relative to /v1, e.g. `/agents/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /** Minimum token scope; null for public routes. */
  scope: Scope | null;
  /** Extra requirement beyond scope, documented in OpenAPI (e.g. personal tokens only). */
  note?: string;
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  /** GraphQL source; parsed once when the route table loads. */
  document: string;
  parsed?: DocumentNode;
  variables?: (input: RouteInput<B, Q>) => Record<string, unknown>;
  /** Maps `data` of the GraphQL result to the REST body. */
  result: (data: any) => unknown;
  status?: number;
  response: z.ZodType;
  /** Error codes this route can answer with (documented in OpenAPI). */
  errors?: string[];
  /** POSTs that create accept Idempotency-Key. */
  idempotent?: boolean;
  /** A subscription served as server-sent events; `result` maps each payload's data. */
  stream?: boolean;
  /**
   * Byte streams (upload, download) that GraphQL cannot carry: handled here after the same
   * context and scope check; `document` is then empty.
   */
  raw?: (req: import('express').Request, res: import('express').Response, ctx: import('../src/graphql/context.js').Context) => Promise<void>;
  /** OpenAPI request body for raw routes (e.g. multipart/form-data). */
  rawRequestBody?: Record<string, unknown>;
  /** OpenAPI success content for raw routes (e.g. application/octet-stream). */
  rawResponseContent?: Record<string, unknown>;
}

export function defineRoute<B = any, Q = any>(route: RestRoute<B, Q>): RestRoute<B, Q> {
  return { ...route, parsed: route.raw ? undefined : parse(route.document, { noLocation: true }) };
}
