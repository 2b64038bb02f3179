// Exa (https://exa.ai): web search (`POST /search`) and page contents (`POST /contents`), key in
// the `x-api-key` header. Results carry page text cut at a length the model can afford.
import { z } from 'zod';
import { defineCapability } from './define.js';
import { vendorJson } from './vendors.js';

interface ExaResult {
  id?: string;
  url?: string;
  title?: string | null;
  publishedDate?: string | null;
  author?: string | null;
  text?: string;
  score?: number;
}

const headers = (key: string) => ({ 'x-api-key': key, 'content-type': 'application/json', accept: 'application/json' });
const result = (r: ExaResult) => ({
  title: r.title ?? null,
  url: r.url ?? null,
  published_date: r.publishedDate ?? null,
  author: r.author ?? null,
  text: r.text ?? null,
});

export const exaSearch = defineCapability({
  id: 'exa.search',
  vendor: 'exa',
  description: 'Search the web (Exa). Returns ranked pages with their title, URL, date and an excerpt of their text.',
  args: z.strictObject({
    query: z.string().min(1).max(2000),
    num_results: z.number().int().min(1).max(25).default(5),
    include_domains: z.array(z.string().min(1)).max(20).optional(),
    exclude_domains: z.array(z.string().min(1)).max(20).optional(),
    start_published_date: z.string().optional().describe('ISO 8601 date: only pages published after it'),
    max_characters: z.number().int().min(100).max(20_000).default(2000).describe('text kept per result'),
  }),
  async run(a, ctx) {
    const body = await vendorJson<{ requestId?: string; results?: ExaResult[] }>('Exa', ctx.access, `${ctx.access.baseUrl}/search`, {
      method: 'POST',
      headers: headers(ctx.access.key),
      signal: ctx.signal,
      timeoutMs: 60_000,
      body: JSON.stringify({
        query: a.query,
        type: 'auto',
        numResults: a.num_results,
        ...(a.include_domains ? { includeDomains: a.include_domains } : {}),
        ...(a.exclude_domains ? { excludeDomains: a.exclude_domains } : {}),
        ...(a.start_published_date ? { startPublishedDate: a.start_published_date } : {}),
        contents: { text: { maxCharacters: a.max_characters } },
      }),
    });
    const results = (body.results ?? []).map(result);
    return { result: { results, request_id: body.requestId ?? null }, units: { request: 1, result_over_10: Math.max(0, results.length - 10) } };
  },
});

export const exaContents = defineCapability({
  id: 'exa.contents',
  vendor: 'exa',
  description: 'Read the text of web pages by URL (Exa contents).',
  args: z.strictObject({
    urls: z.array(z.url()).min(1).max(10),
    max_characters: z.number().int().min(100).max(50_000).default(10_000).describe('text kept per page'),
  }),
  async run(a, ctx) {
    const body = await vendorJson<{
      results?: ExaResult[];
      statuses?: { id?: string; status?: string; error?: { tag?: string; httpStatusCode?: number } | null }[];
    }>('Exa', ctx.access, `${ctx.access.baseUrl}/contents`, {
      method: 'POST',
      headers: headers(ctx.access.key),
      signal: ctx.signal,
      timeoutMs: 120_000,
      body: JSON.stringify({ urls: a.urls, text: { maxCharacters: a.max_characters } }),
    });
    const results = (body.results ?? []).map(result);
    const failed = (body.statuses ?? [])
      .filter((s) => s.status && s.status !== 'success')
      .map((s) => ({ url: s.id ?? null, error: s.error?.tag ?? 'failed', http_status: s.error?.httpStatusCode ?? null }));
    return { result: { results, ...(failed.length ? { failed } : {}) }, units: { page: results.length } };
  },
});
