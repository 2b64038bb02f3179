// A request URL split as Express's `req.path` / `req.query` read it (parseurl's fast path), without
// Express's request prototype: the /v1 hot path reads these on the plain node:http request.
import querystring from 'node:querystring';

export interface PlainUrl {
  path: string;
  /** The raw query string after `?`; null when there is none. */
  query: string | null;
}

/**
 * `url` split at its first `?`, or null when Express would hand it to the legacy URL parser
 * instead (it does not start with `/`, or has a fragment or whitespace anywhere).
 */
export function plainUrl(url: string): PlainUrl | null {
  if (url.charCodeAt(0) !== 0x2f /* / */) return null;
  let q = -1;
  for (let i = 1; i < url.length; i++) {
    switch (url.charCodeAt(i)) {
      case 0x3f /* ? */:
        if (q === -1) q = i;
        break;
      case 0x09:
      case 0x0a:
      case 0x0c:
      case 0x0d:
      case 0x20:
      case 0x23 /* # */:
      case 0xa0:
      case 0xfeff:
        return null;
    }
  }
  return q === -1 ? { path: url, query: null } : { path: url.slice(0, q), query: url.slice(q + 1) };
}

/** `req.query` as Express's default ("simple") query parser makes it: node's querystring. */
export function parseQuery(query: string | null): querystring.ParsedUrlQuery {
  return querystring.parse(query ?? '');
}
