// Builds the OpenAPI 3.1 document from the route table and its zod schemas.
import { z } from 'zod';
import type { RestRoute } from './route.js';
import { ErrorEnvelope } from './schemas.js';
import { STATUS_BY_CODE } from '../src/errors.js';
import { PATH_PARAM_SHAPES, pathParamShape } from '../src/http/input-hygiene.js';
import { SECRET_KEY_PATTERN } from '../src/agents/rules.js';
import { CREDENTIAL_KEY } from '../src/vaults/contract.js';
import { SESSION_COOKIE } from '../src/auth/viewer.js';
import { REQUEST_EXAMPLES } from './examples.js';

type JsonSchema = Record<string, unknown>;

const COMMON_ERRORS = ['invalid_token', 'insufficient_scope', 'universe_mismatch', 'rate_limited'];
/** The HTTP server itself answers these on any path (src/http/server-limits.ts). */
const SERVER_ERRORS = ['request_timeout', 'headers_too_large'];

/** Errors the shared edge can answer for a route, whatever its own rules: documented everywhere they can happen. */
function edgeErrors(route: RestRoute): string[] {
  return [
    ...SERVER_ERRORS,
    ...(route.scope ? COMMON_ERRORS : []),
    // query and body validation (zod), malformed JSON, multipart parse errors; on every route the
    // input hygiene of src/http/input-hygiene.ts (a query string with NUL or invalid UTF-8)
    'invalid_request',
    // input hygiene: a body over the limit, a content type the route does not read
    ...(route.body || route.rawRequestBody ? ['payload_too_large', 'unsupported_media_type'] : []),
    // a reused Idempotency-Key with another body; one still in progress
    ...(route.idempotent ? ['invalid_request', 'conflict'] : []),
  ];
}

/** Keys whose value is a map of names to schemas (not a schema itself). */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);

/**
 * A request schema as client generators read it. With openapi-typescript's defaults a property
 * that has a `default` is non-optional in its generated type (right for a response, which the
 * server fills; wrong for a request, which may leave it out): in request schemas the default
 * moves into the description, so an omitted field stays optional in generated clients. And a
 * binary part is described the OpenAPI 3.1 way (contentMediaType, no `type: string`), so it is not
 * typed as a string (openapi-typescript gives it `unknown`: a Blob or a Buffer is accepted).
 */
export function forRequests(node: unknown, keepOwnDefault = false): unknown {
  if (Array.isArray(node)) return node.map((n) => forRequests(n));
  if (!node || typeof node !== 'object') return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node as JsonSchema)) {
    if (SCHEMA_MAPS.has(key) && value && typeof value === 'object') {
      out[key] = Object.fromEntries(Object.entries(value as JsonSchema).map(([name, sub]) => [name, forRequests(sub)]));
    } else if (key === 'default' && !keepOwnDefault) {
    } else {
      out[key] = forRequests(value);
    }
  }
  const source = node as JsonSchema;
  if ('default' in source && !keepOwnDefault) {
    const said = typeof source.description === 'string' ? source.description : '';
    // Said once: many descriptions already name their default in words.
    if (!/default/i.test(said)) out.description = `${said ? `${said.replace(/\.?$/, '.')} ` : ''}Default: \`${JSON.stringify(source.default)}\`.`;
  }
  if (out.type === 'string' && out.format === 'binary') {
    delete out.type;
    delete out.format;
    out.contentMediaType = 'application/octet-stream';
  }
  return out;
}

function toSchema(schema: z.ZodType, io: 'input' | 'output', components: Record<string, JsonSchema>): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io,
    target: 'draft-2020-12',
    unrepresentable: 'any',
    reused: 'inline',
    override: (ctx) => {
      // Dates travel as ISO strings.
      if ((ctx.zodSchema as { _zod?: { def?: { type?: string } } })._zod?.def?.type === 'date') {
        ctx.jsonSchema.type = 'string';
        ctx.jsonSchema.format = 'date-time';
      }
    },
  }) as JsonSchema & { $defs?: Record<string, JsonSchema>; $schema?: string };
  delete json.$schema;
  // A shape read as input (defaults optional) and as output (defaults filled) differs: input
  // components take the `Input` suffix, as their GraphQL input types do.
  const componentName = (name: string) => (io === 'input' && !name.endsWith('Input') ? `${name}Input` : name);
  const toComponents = (value: unknown) =>
    JSON.parse(JSON.stringify(value).replace(/"#\/\$defs\/([^"]+)"/g, (_m, name: string) => `"#/components/schemas/${componentName(name)}"`));
  for (const [name, def] of Object.entries(json.$defs ?? {})) {
    delete def.id;
    components[componentName(name)] = io === 'input' ? (forRequests(toComponents(def)) as JsonSchema) : toComponents(def);
  }
  delete json.$defs;
  return toComponents(json);
}

/** How a stream's event schema is named to a reader: its component, else plain words. */
const eventTypeName = (schema: JsonSchema) =>
  typeof schema.$ref === 'string' ? `a ${schema.$ref.replace('#/components/schemas/', '')} (${schema.$ref})` : 'one event as JSON';

/** A request body's schema as clients read it (forRequests). */
const requestSchema = (schema: z.ZodType, components: Record<string, JsonSchema>) => forRequests(toSchema(schema, 'input', components)) as JsonSchema;

/**
 * A path parameter's schema: the shape the edge checks (src/http/input-hygiene.ts; an id of
 * another shape is 404 after the token check), a key's pattern where the route checks one.
 */
const PATH_PARAM_PATTERNS: Record<string, RegExp> = {
  ...PATH_PARAM_SHAPES,
  'secrets/{key}': SECRET_KEY_PATTERN,
  'credentials/{key}': CREDENTIAL_KEY,
};
function pathParameters(path: string) {
  const segments = path.split('/');
  return segments.flatMap((seg, i) => {
    const m = /^\{(\w+)\}$/.exec(seg);
    if (!m) return [];
    const pattern = pathParamShape(segments, i, PATH_PARAM_PATTERNS);
    return [
      {
        name: m[1],
        in: 'path',
        required: true,
        schema: pattern ? { type: 'string', pattern: pattern.source } : { type: 'string', minLength: 1, maxLength: 256 },
      },
    ];
  });
}

const X_UNIVERSE = {
  name: 'X-Universe',
  in: 'header',
  required: false,
  schema: { type: 'string', maxLength: 64 },
  description:
    "The slug of one of your universes to act in (default: the token's universe, else your personal one); a token bound to another universe answers 403 universe_mismatch",
};
const LAST_EVENT_ID = {
  name: 'Last-Event-ID',
  in: 'header',
  required: false,
  schema: { type: 'string', maxLength: 64 },
  description: 'Resume after this event id (what an EventSource sends on reconnect); `?after=` wins when both are given',
};

/** The rules the edge applies to every request, whatever the operation's schemas say. */
const EDGE_RULES =
  "Every request, before its operation's rules: a query string must be valid percent-encoded UTF-8 without control characters (U+0000 to U+001F, U+007F); a JSON body must be valid UTF-8, at most 1 MiB (413 payload_too_large), nested at most 64 levels, without a NUL character or an unpaired UTF-16 surrogate in any string or key and without a `__proto__` key (each 400 invalid_request); a body `null` is not an object (400). A missing or unknown token is 401 before a path id of the wrong shape is 404.";

function queryParameters(route: RestRoute, components: Record<string, JsonSchema>) {
  if (!route.query) return [];
  const json = toSchema(route.query, 'input', components) as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, schema]) => ({
    name,
    in: 'query',
    required: json.required?.includes(name) ?? false,
    schema,
    ...(schema.description ? { description: schema.description } : {}),
  }));
}

/** A request example, where rest/examples.ts has one for the operation. */
function exampleOf(route: RestRoute): { example?: unknown } {
  const example = REQUEST_EXAMPLES[route.operationId];
  return example === undefined ? {} : { example };
}

export function buildOpenApi(routes: RestRoute[], serverUrl = '/v1'): Record<string, unknown> {
  const components: Record<string, JsonSchema> = {};
  toSchema(ErrorEnvelope, 'output', components); // registers components.Error
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();

  for (const route of routes) {
    tags.add(route.tag);
    const params = pathParameters(route.path);
    const errorCodes = [...new Set([...edgeErrors(route), ...(route.errors ?? []), 'not_found'])];
    const byStatus = new Map<number, string[]>();
    for (const code of errorCodes) {
      const status = STATUS_BY_CODE[code] ?? 400;
      byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    }
    const responses: Record<string, unknown> = {
      [String(route.status ?? 200)]: route.rawResponseContent
        ? { description: 'Success', content: route.rawResponseContent }
        : route.feed
          ? {
              description:
                'Server-sent events: each frame has `id:` (event id), `event:` (event type) and `data:` (the event JSON, whose schema is `x-event-schema` of this media type); a comment ping at least every 15 s',
              content: {
                'text/event-stream': {
                  // OpenAPI 3.1 cannot type the items of a stream (3.2's itemSchema, which today's
                  // generators and linters refuse in a 3.1 document): `x-event-schema` does, naming a
                  // component so a generated client has the event's type; the stream's own schema
                  // names it too, for whoever reads the generated code.
                  schema: {
                    type: 'string',
                    description: `Server-sent event frames; the data of each is ${eventTypeName(toSchema(route.response, 'output', components))}, as this media type's x-event-schema says`,
                  },
                  'x-event-schema': toSchema(route.response, 'output', components),
                  example: 'id: <event id>\nevent: <event type>\ndata: {"id": "<event id>", "type": "<event type>", ...}\n\n',
                },
              },
            }
          : {
              description: route.status === 410 ? 'Gone: the request was translated, then answered 410' : 'Success',
              content: { 'application/json': { schema: toSchema(route.response, 'output', components) } },
            },
    };
    for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
      responses[String(status)] = {
        description: `Error: ${codes.join(', ')}`,
        ...(status === 429 ? { headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait' } } } : {}),
        content: {
          'application/json': { schema: { $ref: '#/components/schemas/Error' } },
          // pages (the hosted connect page) answer a browser's request with an HTML page
          ...(route.rawResponseContent?.['text/html'] ? { 'text/html': { schema: { type: 'string' } } } : {}),
        },
      };
    }
    const op: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.note || route.scope
        ? { description: [route.scope ? `Scope: ${route.scope}.` : 'No authentication.', route.note].filter(Boolean).join(' ') }
        : {}),
      tags: [route.tag],
      ...(route.scope ? {} : { security: [] }),
      parameters: [
        ...params,
        ...queryParameters(route, components),
        ...(route.scope ? [X_UNIVERSE] : []),
        ...(route.feed ? [LAST_EVENT_ID] : []),
        ...(route.idempotent
          ? [
              {
                name: 'Idempotency-Key',
                in: 'header',
                required: false,
                schema: { type: 'string', maxLength: 255 },
                description: 'A retry with the same key and body within 24 h returns the first answer',
              },
            ]
          : []),
      ],
      ...(route.rawRequestBody ? { requestBody: forRequests(route.rawRequestBody) } : {}),
      // required when the server refuses a request without one (no body reads as `{}`)
      ...(route.body
        ? {
            requestBody: {
              required: !route.body.safeParse({}).success,
              content: { 'application/json': { schema: requestSchema(route.body, components), ...exampleOf(route) } },
            },
          }
        : {}),
      responses,
    };
    if (!(op.parameters as unknown[]).length) delete op.parameters;
    (paths[route.path] ??= {})[route.method.toLowerCase()] = op;
  }

  paths['/openapi.json'] = {
    get: {
      operationId: 'getOpenApi',
      summary: 'This machine-readable description (OpenAPI 3.1)',
      tags: ['Meta'],
      security: [],
      responses: {
        '200': { description: 'The OpenAPI document', content: { 'application/json': { schema: { type: 'object' } } } },
        '404': { description: 'Error: not_found', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    },
  };
  tags.add('Meta');

  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Service API',
      version: '1.0.0',
      description: `Hosts long-lived AI agents over HTTP. Every error body is \`{error: {code, message}}\`. Every request is limited to 120 per minute per token. ${EDGE_RULES}`,
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: serverUrl }],
    security: [{ bearerAuth: [] }, { cookieAuth: [] }],
    tags: [...tags].map((name) => ({ name, description: `${name} operations` })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'API token beginning ast_' },
        cookieAuth: {
          type: 'apiKey',
          in: 'cookie',
          name: SESSION_COOKIE,
          description:
            "The sign-in cookie of the web pages (POST /auth/login); the bearer header wins when both are sent. A change (any method but GET/HEAD) with the cookie must come from the service's own origin (403 otherwise)",
        },
      },
      schemas: components,
    },
  };
}
