// A session's egress policy, compiled: which destinations its sandbox may reach through the
// proxy, and which headers the proxy adds for each host. Pure: the rules come from
// session-policy.ts (repository tokens, agent secrets that declare a host).
//
// Hosts are matched as `hostname[:port]` (the port only when it is not the scheme's default),
// lower-cased; a rule or allow-list entry `*.example.com` covers every subdomain (not the bare
// domain). An exact host's rule wins over a wildcard's for the same header.

export interface HeaderRule {
  /** `api.example.com`, `git.local:8080` or `*.example.com`. */
  host: string;
  header: string;
  value: string;
  /** Where the rule comes from, for messages (never the value): `repository sesrsc_…`, `secret STRIPE_KEY`. */
  source: string;
}

export class EgressHeaderConflictError extends Error {
  readonly code = 'egress_header_conflict';
}

export interface EgressPolicy {
  readonly sessionId: string;
  /** Whether the sandbox may reach `host` (already normalised by `hostKey`). */
  allows(host: string): boolean;
  /** Headers to set on requests to `host` (they replace any the sandbox sent under those names). */
  headersFor(host: string): [string, string][];
}

/** `Example.COM` + 443 for https → `example.com`; port kept when it is not the scheme's default. */
export function hostKey(hostname: string, port: number | string | null | undefined, scheme: 'http' | 'https'): string {
  const name = hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  const p = Number(port) || (scheme === 'https' ? 443 : 80);
  const shown = name.includes(':') ? `[${name}]` : name;
  return p === (scheme === 'https' ? 443 : 80) ? shown : `${shown}:${p}`;
}

/** `https://GitHub.com/o/r` → `github.com`. */
export function hostKeyOfUrl(url: string): string {
  const u = new URL(url);
  return hostKey(u.hostname, u.port, u.protocol === 'https:' ? 'https' : 'http');
}

function matches(pattern: string, host: string): boolean {
  if (pattern === '*') return true;
  if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
  return pattern === host;
}

/**
 * Throws EgressHeaderConflictError when two rules set one header on one host with different
 * values (the spec's `egress_header_conflict`); identical values are one rule.
 */
export function checkConflicts(rules: HeaderRule[]): void {
  const seen = new Map<string, HeaderRule>();
  for (const r of rules) {
    const key = `${r.host.toLowerCase()}\n${r.header.toLowerCase()}`;
    const other = seen.get(key);
    if (other && other.value !== r.value) {
      throw new EgressHeaderConflictError(`${other.source} and ${r.source} set different ${r.header} headers for ${r.host}`);
    }
    seen.set(key, r);
  }
}

/**
 * `allowedHosts` null: any destination the outbound guard accepts; otherwise only those hosts
 * (and always the hosts that have header rules: a declared credential implies its host).
 * `environmentHosts` (the session environment's allow-list) narrows that further, credential
 * hosts included: the user's list for the task is the last word (empty: no destination at all).
 */
export function compilePolicy(sessionId: string, allowedHosts: string[] | null, rules: HeaderRule[], environmentHosts: string[] | null = null): EgressPolicy {
  checkConflicts(rules);
  const normalised = rules.map((r) => ({ ...r, host: r.host.toLowerCase() }));
  const allowList = allowedHosts?.map((h) => h.toLowerCase());
  const environmentList = environmentHosts?.map((h) => h.toLowerCase());
  const cache = new Map<string, [string, string][]>();
  return {
    sessionId,
    allows(host) {
      if (environmentList && !environmentList.some((p) => matches(p, host))) return false;
      if (!allowList) return true;
      return allowList.some((p) => matches(p, host)) || normalised.some((r) => matches(r.host, host));
    },
    headersFor(host) {
      let out = cache.get(host);
      if (out) return out;
      const byHeader = new Map<string, { exact: boolean; header: string; value: string }>();
      for (const r of normalised) {
        if (!matches(r.host, host)) continue;
        const exact = r.host === host;
        const key = r.header.toLowerCase();
        const prev = byHeader.get(key);
        if (!prev || (exact && !prev.exact)) byHeader.set(key, { exact, header: r.header, value: r.value });
      }
      out = [...byHeader.values()].map((h) => [h.header, h.value] as [string, string]);
      if (cache.size < 1000) cache.set(host, out);
      return out;
    },
  };
}
