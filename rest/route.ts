// A REST route is data: method, path, scope, input schemas, a pre-parsed GraphQL document,
// how to build its variables, and how to shape its result into the spec's body.
import { parse, type DocumentNode } from 'graphql';
import type { z } from 'zod';
import type { Scope } from '../src/auth/scopes.js';
import { outputConverter, toGraphQLInput } from '../src/contract/values.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteInput<B, Q> {
  params: Record<string, string>;
  query: Q;
  body: B;
  /** Lower-cased request headers. */
  headers: Record<string, string | undefined>;
}

/** GraphQL `data` of a route's document; converted to the REST body by the response schema. */
export type GraphQLData = Record<string, unknown>;

/**
 * What a signed route reads (see `RestRoute.signed`): its path parameters, the headers (lower-cased
 * names, one value each), the query string's values and the body's exact bytes.
 */
export interface SignedRequest {
  method: string;
  params: Record<string, string>;
  headers: Record<string, string | undefined>;
  query: Record<string, string>;
  body: Buffer;
}

/** A signed route's answer: a string body is sent as text/plain, anything else as JSON. */
export interface SignedAnswer {
  status: number;
  body: unknown;
}

/** One frame of an SSE route: `id:` and `event:` from the event, `data:` the event itself. */
export interface StreamEvent {
  id: string;
  type: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a route table holds routes of every body/query type
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
  /**
   * GraphQL variables. Default: the path parameters by name, plus `input` (the validated body
   * in its GraphQL shape) when the route has a body.
   */
  variables?: (input: RouteInput<B, Q>) => Record<string, unknown>;
  /**
   * Maps `data` of the GraphQL result to the REST body. Default: the document aliases its
   * root fields to the response's keys and selects the response schema's fields
   * (`selectionOf`), so `data` converts to the body by the response schema itself. Set only
   * where the answer is not the data (the deprecated send answers 410 with an error body).
   */
  result?: (data: GraphQLData) => unknown;
  /**
   * Picks the part of `data` that the response schema describes (default: `data` itself, for
   * documents that alias their root field to the answer's key); converted by that schema.
   */
  pick?: (data: GraphQLData) => unknown;
  status?: number;
  response: z.ZodType;
  /** Error codes this route can answer with (documented in OpenAPI). */
  errors?: string[];
  /** POSTs that create accept Idempotency-Key. */
  idempotent?: boolean;
  /**
   * Served as server-sent events: the feed yields the events (`id`, `type` and the JSON body,
   * documented by `response`), each serialised once for every subscriber. The GraphQL
   * subscription of the same events reads the same feed.
   */
  feed?: (ctx: import('../src/graphql/context.js').Context, input: RouteInput<B, Q>) => Promise<AsyncIterator<StreamEvent>>;
  /**
   * Byte streams (upload, download) that GraphQL cannot carry: handled here after the same
   * context and scope check; `document` is then empty.
   */
  raw?: (req: import('express').Request, res: import('express').Response, ctx: import('../src/graphql/context.js').Context) => Promise<void>;
  /**
   * Called without a token by a party that signs the exact bytes it sends (a platform's webhook):
   * matched from this table ahead of the per-token rate limit, the input hygiene and the token
   * check (rest/signed-route.ts), handed its raw body (at most `bodyLimit` bytes), it verifies the
   * caller itself and returns the answer; an AppError it throws is answered in the envelope.
   * `document` is then empty; `rawRequestBody` / `rawResponseContent` document it.
   */
  signed?: { bodyLimit: number; handle: (request: SignedRequest) => Promise<SignedAnswer> };
  /** OpenAPI request body for raw routes (e.g. multipart/form-data). */
  rawRequestBody?: Record<string, unknown>;
  /** OpenAPI success content for raw routes (e.g. application/octet-stream). */
  rawResponseContent?: Record<string, unknown>;
}

export function defineRoute<B = unknown, Q = unknown>(route: RestRoute<B, Q>): RestRoute<B, Q> {
  const body = route.body;
  const variables =
    route.variables ??
    (({ params, body: value }: RouteInput<B, Q>) => ({
      ...params,
      ...(body ? { input: toGraphQLInput(body, value) } : {}),
    }));
  const pick = route.pick ?? ((data: GraphQLData) => data);
  // The answer's conversion is compiled once per route (on first use), not walked per request.
  const convert = outputConverter(route.response);
  const result = route.result ?? ((data: GraphQLData) => convert(pick(data)));
  return { ...route, variables, result, parsed: route.raw || route.feed || route.signed ? undefined : parse(route.document, { noLocation: true }) };
}
