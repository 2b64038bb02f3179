// Checks real responses against the service's own OpenAPI 3.1 document: the operation by method
// and path template, the response by status, the schema by content type, the body with Ajv
// (JSON Schema 2020-12, as OpenAPI 3.1 uses). Any mismatch throws, naming operation, status
// and the violation, so every HTTP test doubles as a contract test of the document.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with a default export; under ESM interop it may arrive wrapped.
type FormatsPlugin = (ajv: Ajv2020) => Ajv2020;
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? addFormatsModule) as unknown as FormatsPlugin;

type JsonSchema = Record<string, unknown>;

interface MediaType {
  schema?: JsonSchema;
  'x-event-schema'?: JsonSchema;
}
interface ResponseObject {
  description?: string;
  content?: Record<string, MediaType>;
}
interface Operation {
  operationId?: string;
  responses: Record<string, ResponseObject>;
}
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

export interface ObservedResponse {
  method: string;
  /** Path after the server's `/v1`, query string allowed. */
  path: string;
  status: number;
  /** The Content-Type header as sent, or null. */
  contentType: string | null;
  /** Parsed JSON when the answer was JSON, else the raw text. */
  body: unknown;
  /** True when the answer had no body at all. */
  empty: boolean;
}

export class OpenApiViolation extends Error {
  override name = 'OpenApiViolation';
}

interface PathTemplate {
  template: string;
  pattern: RegExp;
  literalSegments: number;
}

const COMPONENTS_ID = 'https://agent-service.test/components.json';
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** `/agents/{id}` → a regex of whole segments; literal segments make a template more specific. */
function compileTemplate(template: string): PathTemplate {
  const segments = template.split('/');
  const source = segments.map((s) => (/^\{\w+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
  return { template, pattern: new RegExp(`^${source}/?$`), literalSegments: segments.filter((s) => !s.startsWith('{')).length };
}

function mediaTypeOf(header: string | null): string | null {
  return header ? header.split(';')[0]!.trim().toLowerCase() : null;
}

function isJson(mediaType: string): boolean {
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

function describeError(e: ErrorObject): string {
  const where = e.instancePath || '(body)';
  if (e.keyword === 'additionalProperties') return `${where} has undocumented field '${(e.params as { additionalProperty: string }).additionalProperty}'`;
  if (e.keyword === 'required') return `${where} lacks documented field '${(e.params as { missingProperty: string }).missingProperty}'`;
  if (e.keyword === 'unevaluatedProperties') return `${where} has undocumented field '${(e.params as { unevaluatedProperty: string }).unevaluatedProperty}'`;
  return `${where} ${e.message}${e.keyword === 'enum' ? ` (${JSON.stringify((e.params as { allowedValues: unknown[] }).allowedValues)})` : ''}`;
}

export class ResponseValidator {
  private readonly ajv: Ajv2020;
  private readonly templates: PathTemplate[];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: OpenApiDocument) {
    if (!doc.openapi?.startsWith('3.1')) throw new Error(`expected an OpenAPI 3.1 document, got ${doc.openapi}`);
    // strict: unknown keywords in our own document are mistakes, except OpenAPI's annotations.
    this.ajv = new Ajv2020({ strict: true, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs']);
    this.ajv.addFormat('binary', true);
    // Component refs point into the OpenAPI document; give them a JSON Schema home of their own.
    this.ajv.addSchema({ $id: COMPONENTS_ID, $defs: this.rewriteRefs(doc.components?.schemas ?? {}) });
    this.templates = Object.keys(doc.paths)
      .map(compileTemplate)
      .sort((a, b) => b.literalSegments - a.literalSegments);
  }

  private rewriteRefs<T>(value: T): T {
    return JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', `"${COMPONENTS_ID}#/$defs/`)) as T;
  }

  /** The documented operation for a request, or null when the path or method is not in the document. */
  operationFor(method: string, path: string): { template: string; operation: Operation } | null {
    // The path as it reaches the server: the client resolves dot segments (`/files/.` is `/files/`).
    const bare = new URL(path.split('?')[0]!.split('#')[0]!, 'http://validator.invalid').pathname;
    for (const t of this.templates) {
      if (!t.pattern.test(bare)) continue;
      const operation = this.doc.paths[t.template]?.[method.toLowerCase()];
      if (operation && HTTP_METHODS.has(method.toLowerCase())) return { template: t.template, operation };
    }
    return null;
  }

  private validatorFor(key: string, schema: JsonSchema): ValidateFunction {
    let fn = this.compiled.get(key);
    if (!fn) {
      fn = this.ajv.compile(this.rewriteRefs(schema));
      this.compiled.set(key, fn);
    }
    return fn;
  }

  /** Throws an OpenApiViolation when the response is not what the document says. */
  check(res: ObservedResponse): void {
    const found = this.operationFor(res.method, res.path);
    const mediaType = mediaTypeOf(res.contentType);
    if (!found) {
      // Paths and methods outside the document (404/405 for unknown routes) still owe the envelope.
      if (res.status >= 400) this.checkErrorEnvelope(`${res.method} ${res.path}`, res, mediaType);
      return;
    }
    const { template, operation } = found;
    const name = `${operation.operationId ?? '?'} (${res.method.toUpperCase()} ${template})`;
    const fail = (what: string): never => {
      throw new OpenApiViolation(
        `OpenAPI: ${name} answered ${res.status}${mediaType ? ` ${mediaType}` : ''}: ${what}\nbody: ${JSON.stringify(res.body)?.slice(0, 600)}`,
      );
    };
    const statusClass = `${String(res.status)[0]}XX`;
    const response = operation.responses[String(res.status)] ?? operation.responses[statusClass] ?? operation.responses.default;
    if (!response) return fail(`status ${res.status} is not documented (documented: ${Object.keys(operation.responses).join(', ')})`);
    const content = response.content;
    if (!content || !Object.keys(content).length) {
      if (!res.empty) fail('the document says no body, but one was sent');
      return;
    }
    if (!mediaType) return fail(`no Content-Type, documented: ${Object.keys(content).join(', ')}`);
    const [type] = mediaType.split('/');
    const documentedKey = content[mediaType] ? mediaType : content[`${type}/*`] ? `${type}/*` : content['*/*'] ? '*/*' : null;
    if (!documentedKey) return fail(`content type ${mediaType} is not documented (documented: ${Object.keys(content).join(', ')})`);
    const schema = content[documentedKey]!.schema;
    if (!schema || !isJson(mediaType)) return; // bytes and event streams: the media type is the contract
    const validate = this.validatorFor(`${template} ${res.method} ${res.status} ${documentedKey}`, schema);
    if (!validate(res.body)) fail((validate.errors ?? []).map(describeError).join('; '));
  }

  /**
   * One server-sent event frame of a documented event stream: `data` against the stream's
   * `x-event-schema`, `id:` and `event:` against the event's own id and type.
   */
  checkEvent(path: string, frame: { id: string | null; event: string | null; data: unknown }): void {
    const found = this.operationFor('GET', path);
    if (!found) return;
    const name = `${found.operation.operationId ?? '?'} (GET ${found.template})`;
    const schema = found.operation.responses['200']?.content?.['text/event-stream']?.['x-event-schema'];
    if (!schema) throw new OpenApiViolation(`OpenAPI: ${name} streams events but documents no x-event-schema`);
    const validate = this.validatorFor(`${found.template} GET event`, schema);
    if (!validate(frame.data)) {
      throw new OpenApiViolation(
        `OpenAPI: ${name} sent an event ${frame.event}: ${(validate.errors ?? []).map(describeError).join('; ')}\ndata: ${JSON.stringify(frame.data)?.slice(0, 600)}`,
      );
    }
    const data = frame.data as { id?: unknown; type?: unknown };
    if (frame.id !== data.id || frame.event !== data.type) {
      throw new OpenApiViolation(
        `OpenAPI: ${name} sent a frame whose id:/event: (${frame.id}, ${frame.event}) are not its event's id and type (${String(data.id)}, ${String(data.type)})`,
      );
    }
  }

  private checkErrorEnvelope(name: string, res: ObservedResponse, mediaType: string | null): void {
    const envelope = this.doc.components?.schemas?.Error;
    if (!envelope) return;
    if (!mediaType || !isJson(mediaType))
      throw new OpenApiViolation(`OpenAPI: ${name} answered ${res.status} ${mediaType ?? 'without a content type'}; errors are JSON envelopes`);
    const validate = this.validatorFor('#error-envelope', { $ref: '#/components/schemas/Error' });
    if (!validate(res.body))
      throw new OpenApiViolation(
        `OpenAPI: ${name} answered ${res.status} outside the error envelope: ${(validate.errors ?? []).map(describeError).join('; ')}`,
      );
  }
}

// Test servers register here, so helpers that only hold a URL (SSE readers) find the document.
const byBase = new Map<string, () => Promise<ResponseValidator>>();

export function registerValidator(base: string, validator: () => Promise<ResponseValidator>): () => void {
  byBase.set(base, validator);
  return () => byBase.delete(base);
}

/** The validator of the test server whose `/v1` base prefixes `url`, and the path after it. */
export async function validatorForUrl(url: string): Promise<{ validator: ResponseValidator; path: string } | null> {
  for (const [base, validator] of byBase) {
    if (url.startsWith(`${base}/`)) return { validator: await validator(), path: url.slice(base.length).split('?')[0]! };
  }
  return null;
}
