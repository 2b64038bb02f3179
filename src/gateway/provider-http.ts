// The model providers' streaming POST, on undici's request API rather than fetch: the answer's
// body is a Node stream of bytes, without WHATWG streams, Headers and Response objects between
// the socket and the SSE parser. Under many concurrent turns fetch's own layers were a visible
// part of a turn's CPU (issue #29). Same pooled keep-alive connections, same abort signal.
import { request } from 'undici';

/** What the gateway reads of a provider's answer (a fetch Response has the same shape). */
export interface ProviderAnswer {
  status: number;
  ok: boolean;
  headers: { get(name: string): string | null };
  body: AsyncIterable<Uint8Array>;
  text(): Promise<string>;
}

export async function postToProvider(url: string, headers: Record<string, string>, body: string, signal?: AbortSignal): Promise<ProviderAnswer> {
  const res = await request(url, { method: 'POST', headers, body, signal });
  const raw = res.headers;
  return {
    status: res.statusCode,
    ok: res.statusCode >= 200 && res.statusCode < 300,
    headers: {
      get(name) {
        const v = raw[name.toLowerCase()];
        return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
      },
    },
    body: res.body,
    text: () => res.body.text(),
  };
}
