// Fake capability vendors on a real port, speaking their real wire formats: Exa (`POST
// /exa/search`, `POST /exa/contents`, key in `x-api-key`) and OpenAI's Images API (`POST
// /openai/v1/images/generations`, bearer key, gpt-image answers in base64). Like the real APIs
// they refuse malformed requests (unknown or missing fields, bad sizes) with the vendor's own
// error shape, so wire-format bugs fail here.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TINY_PNG } from './mcp-server.js';

export interface RecordedVendorRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface FakeVendors {
  exaBaseUrl: string;
  openaiBaseUrl: string;
  requests: RecordedVendorRequest[];
  keys: { exa: string; openai: string };
  close(): Promise<void>;
}

const EXA_SEARCH_FIELDS = new Set([
  'query',
  'type',
  'numResults',
  'includeDomains',
  'excludeDomains',
  'startPublishedDate',
  'endPublishedDate',
  'category',
  'contents',
  'userLocation',
]);
const EXA_CONTENTS_FIELDS = new Set(['urls', 'ids', 'text', 'highlights', 'summary', 'livecrawl', 'subpages']);
const IMAGE_FIELDS = new Set(['model', 'prompt', 'n', 'size', 'quality', 'background', 'output_format', 'output_compression', 'moderation', 'user']);

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function exa(path: string, headers: http.IncomingHttpHeaders, body: any, res: http.ServerResponse, key: string): void {
  if (headers['x-api-key'] !== key) return json(res, 401, { requestId: 'r', error: 'Invalid API key', tag: 'INVALID_API_KEY' });
  if (path === '/exa/search') {
    const unknown = Object.keys(body ?? {}).filter((k) => !EXA_SEARCH_FIELDS.has(k));
    if (typeof body?.query !== 'string' || unknown.length)
      return json(res, 400, { requestId: 'r', error: `Invalid request body: ${unknown.join(', ') || 'query is required'}`, tag: 'INVALID_REQUEST_BODY' });
    const n = Math.min(Number(body.numResults ?? 10), 100);
    const max = body.contents?.text?.maxCharacters ?? 10_000;
    const results = Array.from({ length: n }, (_, i) => ({
      id: `https://example.com/${i}`,
      url: `https://example.com/${i}`,
      title: `Result ${i} for ${body.query}`,
      publishedDate: '2026-01-01T00:00:00.000Z',
      author: null,
      text: `page ${i} text `.repeat(500).slice(0, max),
    }));
    return json(res, 200, { requestId: 'req_search_1', resolvedSearchType: 'neural', results, costDollars: { total: 0.005 } });
  }
  if (path === '/exa/contents') {
    const unknown = Object.keys(body ?? {}).filter((k) => !EXA_CONTENTS_FIELDS.has(k));
    if (!Array.isArray(body?.urls ?? body?.ids) || unknown.length)
      return json(res, 400, { requestId: 'r', error: 'Invalid request body', tag: 'INVALID_REQUEST_BODY' });
    const urls: string[] = body.urls ?? body.ids;
    const ok = urls.filter((u) => !u.includes('missing'));
    return json(res, 200, {
      requestId: 'req_contents_1',
      results: ok.map((u) => ({ id: u, url: u, title: `Title of ${u}`, text: `Content of ${u}` })),
      statuses: urls.map((u) =>
        u.includes('missing') ? { id: u, status: 'error', error: { tag: 'CRAWL_NOT_FOUND', httpStatusCode: 404 } } : { id: u, status: 'success', error: null },
      ),
      costDollars: { total: 0.001 * ok.length },
    });
  }
  json(res, 404, { error: 'Not found' });
}

function openai(path: string, headers: http.IncomingHttpHeaders, body: any, res: http.ServerResponse, key: string): void {
  const err = (status: number, message: string, param: string | null = null, code: string | null = null) =>
    json(res, status, { error: { message, type: status === 401 ? 'invalid_request_error' : 'invalid_request_error', param, code } });
  if (headers.authorization !== `Bearer ${key}`) return err(401, 'Incorrect API key provided.', null, 'invalid_api_key');
  if (path !== '/openai/v1/images/generations') return err(404, `Invalid URL (POST ${path})`);
  const unknown = Object.keys(body ?? {}).filter((k) => !IMAGE_FIELDS.has(k));
  if (unknown.length) return err(400, `Unknown parameter: '${unknown[0]}'.`, unknown[0]!, 'unknown_parameter');
  if (typeof body.prompt !== 'string' || !body.prompt) return err(400, "Missing required parameter: 'prompt'.", 'prompt', 'missing_required_parameter');
  if (body.model !== 'gpt-image-1') return err(400, `Invalid value for 'model': ${body.model}`, 'model');
  if (body.size && !['1024x1024', '1024x1536', '1536x1024', 'auto'].includes(body.size))
    return err(400, `Invalid value: '${body.size}'. Supported values are: '1024x1024', '1024x1536', '1536x1024', and 'auto'.`, 'size', 'invalid_value');
  if (body.quality && !['low', 'medium', 'high', 'auto'].includes(body.quality))
    return err(400, `Invalid value: '${body.quality}'.`, 'quality', 'invalid_value');
  const n = body.n ?? 1;
  json(res, 200, {
    created: 1_790_000_000,
    data: Array.from({ length: n }, () => ({ b64_json: TINY_PNG.toString('base64') })),
    background: body.background ?? 'opaque',
    output_format: body.output_format ?? 'png',
    quality: body.quality === 'auto' || !body.quality ? 'medium' : body.quality,
    size: body.size === 'auto' || !body.size ? '1024x1024' : body.size,
    usage: { input_tokens: 20, input_tokens_details: { image_tokens: 0, text_tokens: 20 }, output_tokens: 1056, total_tokens: 1076 },
  });
}

export async function startFakeVendors(): Promise<FakeVendors> {
  const requests: RecordedVendorRequest[] = [];
  const keys = { exa: 'exa-test-key', openai: 'sk-images-test' };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: any = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      } catch {
        return json(res, 400, { error: 'malformed JSON' });
      }
      const path = (req.url ?? '').split('?')[0]!;
      requests.push({ path, headers: req.headers, body });
      if (req.method !== 'POST') return json(res, 405, { error: 'method not allowed' });
      if (path.startsWith('/exa/')) return exa(path, req.headers, body, res, keys.exa);
      if (path.startsWith('/openai/')) return openai(path, req.headers, body, res, keys.openai);
      json(res, 404, { error: 'not found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    exaBaseUrl: `http://127.0.0.1:${port}/exa`,
    openaiBaseUrl: `http://127.0.0.1:${port}/openai/v1`,
    requests,
    keys,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
