// DataForSEO SERP (`POST /v3/serp/google/organic/live/advanced`, HTTP Basic with the account's
// login and password, body: an array of one task). Answers `{status_code: 20000, tasks: [{
// status_code, result: [{items: [{type, rank_absolute, title, url, description}]}]}]}`.
// Not exercised against the vendor here: built from its published API.
import { z } from 'zod';
import { defineCapability } from './define.js';
import { vendorJson, VendorError } from './vendors.js';

interface SerpItem {
  type?: string;
  rank_group?: number;
  rank_absolute?: number;
  title?: string;
  url?: string;
  description?: string;
  domain?: string;
}
interface SerpAnswer {
  status_code?: number;
  status_message?: string;
  tasks?: { status_code?: number; status_message?: string; result?: { keyword?: string; se_results_count?: number; items?: SerpItem[] }[] | null }[];
}

export const dataforseoSerp = defineCapability({
  id: 'dataforseo.serp',
  vendor: 'dataforseo',
  description: 'Google search engine results for a keyword (DataForSEO SERP): organic results with rank, title, URL and snippet.',
  args: z.strictObject({
    keyword: z.string().min(1).max(700),
    location_code: z.number().int().default(2840).describe('DataForSEO location code; 2840 = United States'),
    language_code: z.string().min(2).max(8).default('en'),
    depth: z.number().int().min(1).max(100).default(10),
    device: z.enum(['desktop', 'mobile']).default('desktop'),
  }),
  async run(a, ctx) {
    const body = await vendorJson<SerpAnswer>('DataForSEO', ctx.access, `${ctx.access.baseUrl}/v3/serp/google/organic/live/advanced`, {
      method: 'POST',
      signal: ctx.signal,
      timeoutMs: 120_000,
      headers: { authorization: `Basic ${Buffer.from(ctx.access.key).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ keyword: a.keyword, location_code: a.location_code, language_code: a.language_code, depth: a.depth, device: a.device }]),
    });
    const task = body.tasks?.[0];
    if (body.status_code !== 20000 || !task || task.status_code !== 20000) {
      throw new VendorError(`DataForSEO refused the request: ${task?.status_message ?? body.status_message ?? 'no task in the answer'}`);
    }
    const r = task.result?.[0];
    const results = (r?.items ?? [])
      .filter((i) => i.type === 'organic')
      .map((i) => ({
        rank: i.rank_group ?? null,
        rank_absolute: i.rank_absolute ?? null,
        title: i.title ?? null,
        url: i.url ?? null,
        description: i.description ?? null,
        domain: i.domain ?? null,
      }));
    return { result: { keyword: r?.keyword ?? a.keyword, total_results: r?.se_results_count ?? null, results }, units: { request: 1 } };
  },
});
