// Calling a platform's API: JSON in and out with a timeout, and size-capped downloads. Errors
// become PlatformError naming what the platform said.
import { settings } from '../../config.js';
import { guardedFetch } from '../../net/outbound-guard.js';
import { timingSafeEqual } from 'node:crypto';
import { PlatformError } from './types.js';

const TIMEOUT_MS = settings.channelPlatformTimeoutMs();

export interface JsonAnswer {
  status: number;
  json: Record<string, unknown>;
}

export async function callJson(
  platform: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown; form?: Record<string, string> } = {},
): Promise<JsonAnswer> {
  const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
  let body: string | undefined;
  if (init.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  } else if (init.body !== undefined) {
    headers['content-type'] = 'application/json; charset=utf-8';
    body = JSON.stringify(init.body);
  }
  let res: Response;
  try {
    res = await fetch(url, { method: init.method ?? (body ? 'POST' : 'GET'), headers, body, redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    const e = err as Error;
    throw new PlatformError(
      platform,
      e.name === 'TimeoutError' ? `${platform} did not answer within ${TIMEOUT_MS} ms` : `${platform} could not be reached: ${e.message}`,
      null,
      false,
      { unreachable: true },
    );
  }
  const text = await res.text();
  let json: Record<string, unknown> = {};
  if (text) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) json = parsed as Record<string, unknown>;
    } catch {
      if (!res.ok)
        throw new PlatformError(platform, `${platform} answered ${res.status}: ${text.slice(0, 200)}`, res.status, res.status === 401 || res.status === 403);
      throw new PlatformError(platform, `${platform} answered with a body that is not JSON`, res.status);
    }
  }
  return { status: res.status, json };
}

/** Downloads at most `maxBytes` (throws past it, never returns a partial file). */
export async function download(
  platform: string,
  url: string,
  maxBytes: number,
  headers: Record<string, string> = {},
): Promise<{ data: Buffer; mimeType: string | null }> {
  let res: Awaited<ReturnType<typeof guardedFetch>>;
  try {
    res = await guardedFetch(url, { headers, signal: AbortSignal.timeout(TIMEOUT_MS * 4) });
  } catch (err) {
    throw new PlatformError(platform, `the file could not be downloaded from ${platform}: ${(err as Error).message}`);
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel().catch(() => undefined);
    throw new PlatformError(platform, `${platform} answered ${res.status} to the file download`, res.status);
  }
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body.cancel().catch(() => undefined);
    throw new PlatformError(platform, `the file is larger than ${maxBytes} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > maxBytes) throw new PlatformError(platform, `the file is larger than ${maxBytes} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  return { data: Buffer.concat(chunks), mimeType: res.headers.get('content-type')?.split(';')[0]?.trim() || null };
}

/** Splits a long text into pieces a platform accepts, preferring line and word breaks. */
export function splitText(text: string, max: number): string[] {
  if (text.length <= max) return [text];
  const out: string[] = [];
  let rest = text;
  while (rest.length > max) {
    let cut = rest.lastIndexOf('\n', max);
    if (cut < max / 2) cut = rest.lastIndexOf(' ', max);
    if (cut < max / 2) cut = max;
    out.push(rest.slice(0, cut));
    rest = rest.slice(cut).replace(/^[\n ]/, '');
  }
  if (rest) out.push(rest);
  return out;
}

/** Constant-time comparison of two secrets or signatures. */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
