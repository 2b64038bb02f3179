// Header handling shared by the plain and the TLS-terminating forwarders.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Headers a client sent, minus hop-by-hop ones and those named in `Connection`. */
export function forwardableHeaders(raw: string[]): [string, string][] {
  const out: [string, string][] = [];
  const named = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'connection') for (const n of raw[i + 1]!.split(',')) named.add(n.trim().toLowerCase());
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!HOP_BY_HOP.has(name) && !named.has(name)) out.push([raw[i]!, raw[i + 1]!]);
  }
  return out;
}

/** The request's headers with the policy's headers set (replacing any the sandbox sent under those names). */
export function injectHeaders(headers: [string, string][], injected: [string, string][]): [string, string][] {
  if (!injected.length) return headers;
  const names = new Set(injected.map(([n]) => n.toLowerCase()));
  return [...headers.filter(([n]) => !names.has(n.toLowerCase())), ...injected];
}
