// Provider failures as ProviderError: 429 and 5xx (and network trouble) are retryable,
// 401/403 mean the credential is refused, other 4xx are the request's fault. Messages keep the
// provider's own words (they say what to fix) but never a key: OpenAI echoes a masked one.
import { ProviderError } from './types.js';
import type { ProviderAnswer } from './provider-http.js';

/** Remove the credential and anything shaped like a provider key from provider text. */
export function redact(text: string, apiKey?: string): string {
  let out = apiKey && apiKey.length >= 4 ? text.split(apiKey).join('[redacted]') : text;
  out = out.replace(/\bsk-[A-Za-z0-9_*.-]{4,}/g, 'sk-[redacted]');
  return out;
}

/** Retry-After in milliseconds: OpenAI's `retry-after-ms`, or `retry-after` seconds / HTTP date. */
function retryAfterMs(res: ProviderAnswer): number | null {
  const ms = Number(res.headers.get('retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const raw = res.headers.get('retry-after');
  if (!raw) return null;
  const secs = Number(raw);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(raw);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

function byStatus(status: number): { retryable: boolean; code: string } {
  if (status === 429) return { retryable: true, code: 'provider_rate_limited' };
  if (status >= 500 || status === 408) return { retryable: true, code: 'provider_unavailable' };
  if (status === 401 || status === 403) return { retryable: false, code: 'provider_auth' };
  return { retryable: false, code: 'provider_bad_request' };
}

export async function providerErrorFrom(res: ProviderAnswer, provider: string, apiKey?: string): Promise<ProviderError> {
  let detail = '';
  try {
    const text = await res.text();
    try {
      // Both providers answer `{error: {message}}` (Anthropic adds `type: 'error'` around it).
      const parsed = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
      detail = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message ?? text);
    } catch {
      detail = text; // an HTML page from a proxy, or plain text
    }
  } catch {
    /* body unreadable (aborted, reset): the status says enough */
  }
  detail = redact(detail.replace(/\s+/g, ' ').trim().slice(0, 500), apiKey);
  const msg = `${provider} answered ${res.status}${detail ? `: ${detail}` : ''}`;
  return new ProviderError(msg, { status: res.status, ...byStatus(res.status), retryAfterMs: retryAfterMs(res) });
}

/** An `error` reported inside a 200 stream, by the provider's error type (both use similar names). */
export function streamError(provider: string, type: string | undefined, message: string | undefined, apiKey?: string): ProviderError {
  const t = type ?? '';
  const status =
    t === 'rate_limit_error' || t === 'rate_limit_exceeded'
      ? 429
      : t === 'authentication_error' || t === 'permission_error' || t === 'invalid_api_key'
        ? 401
        : t === 'invalid_request_error' || t === 'not_found_error' || t === 'request_too_large'
          ? 400
          : 500; // overloaded_error, api_error, server_error and anything unknown: try again
  const text = redact(message ?? (t || 'error'), apiKey);
  return new ProviderError(`${provider} stream error${t ? ` (${t})` : ''}: ${text}`, { status: null, ...byStatus(status) });
}

export function networkError(err: unknown, provider: string): ProviderError {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  const why = e.cause?.code ?? e.cause?.message ?? e.message;
  return new ProviderError(`${provider} could not be reached: ${e.message}${why && why !== e.message ? ` (${why})` : ''}`, {
    status: null,
    retryable: true,
    code: 'provider_unavailable',
  });
}

/** The stream stopped before the provider said it was done (connection cut, proxy timeout). */
export function truncatedError(provider: string): ProviderError {
  return new ProviderError(`${provider} stream ended before the response was complete`, { status: null, retryable: true, code: 'provider_unavailable' });
}

/** One `data:` payload as JSON; garbage on the wire is the provider's (retryable) fault. */
export function parseStreamJson(provider: string, data: string): Record<string, any> {
  try {
    return JSON.parse(data) as Record<string, any>;
  } catch {
    throw new ProviderError(`${provider} sent malformed stream data: ${data.slice(0, 120)}`, { status: null, retryable: true, code: 'provider_unavailable' });
  }
}
