// TinyFish: Fetch (`POST https://api.fetch.tinyfish.ai` with `{urls, format}`, answers
// `{results: [{url, title, description, text}], errors: [{url, error, status}]}`) and the web
// Agent (`POST https://agent.tinyfish.ai/v1/automation/run` with `{url, goal}`, a real browser
// driven toward the goal; answers `{run_id, status, num_of_steps, result, error}`), key in
// `X-API-Key`. Not exercised against the vendor here: built from its published API.
import { z } from 'zod';
import { ChargedFailure, defineCapability } from './define.js';
import { vendorJson } from './vendors.js';

const headers = (key: string) => ({ 'X-API-Key': key, 'content-type': 'application/json', accept: 'application/json' });

export const tinyfishFetch = defineCapability({
  id: 'tinyfish.fetch',
  vendor: 'tinyfish-fetch',
  description: 'Fetch web pages rendered in a browser and get their clean content (TinyFish Fetch), up to 10 URLs at once.',
  args: z.strictObject({
    urls: z.array(z.url()).min(1).max(10),
    format: z.enum(['markdown', 'html', 'json']).default('markdown'),
    max_characters: z.number().int().min(100).max(50_000).default(20_000).describe('text kept per page'),
  }),
  async run(a, ctx) {
    const body = await vendorJson<{
      results?: { url?: string; title?: string; description?: string; text?: string | null }[];
      errors?: { url?: string; error?: string; status?: number }[];
    }>('TinyFish', ctx.access, ctx.access.baseUrl, {
      method: 'POST',
      headers: headers(ctx.access.key),
      signal: ctx.signal,
      timeoutMs: 150_000,
      body: JSON.stringify({ urls: a.urls, format: a.format }),
    });
    const results = (body.results ?? []).map((r) => ({
      url: r.url ?? null,
      title: r.title ?? null,
      description: r.description ?? null,
      text: (r.text ?? '').slice(0, a.max_characters),
    }));
    const errors = (body.errors ?? []).map((e) => ({ url: e.url ?? null, error: e.error ?? 'failed', status: e.status ?? null }));
    return { result: { results, ...(errors.length ? { errors } : {}) }, units: { url: results.length } };
  },
});

export const tinyfishBrowser = defineCapability({
  id: 'tinyfish.browser',
  vendor: 'tinyfish-agent',
  description:
    'Have a remote browser agent (TinyFish) reach a goal on a website: clicks, forms, several pages; it returns what it found as JSON. Describe the goal and the shape of the answer you want.',
  args: z.strictObject({
    url: z.url().describe('where the browser starts'),
    goal: z.string().min(1).max(10_000),
    browser_profile: z.enum(['lite', 'stealth']).default('lite'),
    max_steps: z.number().int().min(1).max(150).default(50),
  }),
  async run(a, ctx) {
    const body = await vendorJson<{
      run_id?: string;
      status?: string;
      num_of_steps?: number;
      result?: unknown;
      error?: { code?: string; message?: string } | null;
    }>('TinyFish', ctx.access, `${ctx.access.baseUrl}/v1/automation/run`, {
      method: 'POST',
      headers: headers(ctx.access.key),
      signal: ctx.signal,
      timeoutMs: 600_000,
      body: JSON.stringify({ url: a.url, goal: a.goal, browser_profile: a.browser_profile, agent_config: { max_steps: a.max_steps } }),
    });
    const steps = body.num_of_steps ?? 0;
    if (body.status !== 'COMPLETED') {
      throw new ChargedFailure(`the browser agent ended ${body.status ?? 'without a status'}${body.error?.message ? `: ${body.error.message}` : ''}`, {
        step: steps,
      });
    }
    return { result: { run_id: body.run_id ?? null, steps, result: body.result ?? null }, units: { step: steps } };
  },
});
