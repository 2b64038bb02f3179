// Provider HTTP failures as ProviderError: 429 and 5xx (and network trouble) are retryable,
// 401/403 mean the credential is refused, other 4xx are the request's fault.
import { ProviderError } from './types.js';

export async function providerErrorFrom(res: Response, provider: string): Promise<ProviderError> {
  let detail = '';
  try {
    const text = await res.text();
    const parsed = JSON.parse(text) as { error?: { message?: string } | string };
    detail = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? text.slice(0, 300));
  } catch {
    /* no JSON body */
  }
  const msg = `${provider} answered ${res.status}${detail ? `: ${detail}` : ''}`;
  if (res.status === 429) return new ProviderError(msg, { status: 429, retryable: true, code: 'provider_rate_limited' });
  if (res.status >= 500) return new ProviderError(msg, { status: res.status, retryable: true, code: 'provider_unavailable' });
  if (res.status === 401 || res.status === 403) return new ProviderError(msg, { status: res.status, retryable: false, code: 'provider_auth' });
  return new ProviderError(msg, { status: res.status, retryable: false, code: 'provider_bad_request' });
}

export function networkError(err: unknown, provider: string): ProviderError {
  return new ProviderError(`${provider} could not be reached: ${(err as Error).message}`, { status: null, retryable: true, code: 'provider_unavailable' });
}
