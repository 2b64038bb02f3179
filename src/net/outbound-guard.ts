// The one guard for every URL the service fetches on a user's behalf (webhook deliveries,
// message `url` sources, repository clones; channels and MCP servers import it too).
//
// A destination is allowed only when EVERY address its name resolves to is public unicast.
// Refused: IPv4 private, loopback, link-local, carrier-grade NAT, 0.0.0.0/8, multicast,
// broadcast and reserved ranges; IPv6 loopback, unspecified, link-local, unique-local,
// multicast and reserved ranges; and the IPv6 forms that carry an IPv4 address (IPv4-mapped
// `::ffff:a.b.c.d`, IPv4-translated, IPv4-compatible, NAT64 `64:ff9b::/96`), judged by the
// address they carry. 6to4 and Teredo addresses are refused outright (not used by receivers).
//
// Checked three times: when a URL is stored (create/PATCH), and at connect time through the
// dispatcher below, whose `lookup` both checks the answer and is the answer the socket uses:
// a name cannot resolve to a public address for the check and to an internal one for the
// connection (DNS rebinding). IP literals skip `lookup`, so the connector checks them itself.
//
// OUTBOUND_ALLOW (comma-separated addresses or CIDR ranges, e.g. `127.0.0.0/8,::1`) lets an
// operator permit internal destinations, typically loopback receivers in local development;
// every refusal names the value that would let its address through (`allowHint`).
import { settings } from '../config.js';
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, fetch as undiciFetch, type RequestInit, type Response } from 'undici';
import { logger } from '../logger.js';
import { service } from '../services/registry.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** A destination the guard refused (the message says which address and why). */
export class OutboundRefusedError extends Error {
  readonly code = 'EOUTBOUNDREFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'OutboundRefusedError';
  }
}

// ---- the operator's allow-list -----------------------------------------------------------

let allowCache: { raw: string; ranges: [Address, number][] } | null = null;
function allowRanges(): [Address, number][] {
  const raw = settings.outboundAllow();
  if (allowCache?.raw === raw) return allowCache.ranges;
  const ranges: [Address, number][] = [];
  for (const entry of raw
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    try {
      if (entry.includes('/')) ranges.push(ipaddr.parseCIDR(entry));
      else {
        const a = ipaddr.parse(entry);
        ranges.push([a, a.kind() === 'ipv4' ? 32 : 128]);
      }
    } catch {
      logger.warn({ entry }, 'OUTBOUND_ALLOW: not an address or CIDR range; ignored');
    }
  }
  allowCache = { raw, ranges };
  return ranges;
}

function allowListed(a: Address): boolean {
  return allowRanges().some(([base, bits]) => base.kind() === a.kind() && a.match(base, bits));
}

// ---- classifying one address -------------------------------------------------------------

const LABELS: Record<string, string> = {
  private: 'private',
  loopback: 'loopback',
  linkLocal: 'link-local',
  carrierGradeNat: 'carrier-grade NAT',
  unspecified: 'unspecified',
  multicast: 'multicast',
  broadcast: 'broadcast',
  reserved: 'reserved',
  uniqueLocal: 'unique-local',
  deprecatedSiteLocal: 'site-local',
  benchmarking: 'benchmarking',
  '6to4': '6to4 transition',
  teredo: 'Teredo transition',
  rfc6052: 'local-use NAT64',
  discard: 'discard-only',
};
const label = (range: string) => LABELS[range] ?? `special-purpose (${range})`;
const withArticle = (word: string) => (/^[aeiou]/i.test(word) ? `an ${word}` : `a ${word}`);

/** The IPv4 address an IPv6 form carries (mapped, translated, compatible, well-known NAT64), if any. */
function embeddedV4(a: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = a.parts;
  const v4 = () => new ipaddr.IPv4([p[6]! >> 8, p[6]! & 0xff, p[7]! >> 8, p[7]! & 0xff]);
  if (a.isIPv4MappedAddress()) return a.toIPv4Address();
  if (a.match(ipaddr.IPv6.parse('::ffff:0:0:0'), 96)) return v4(); // IPv4-translated (RFC 6145)
  if (a.match(ipaddr.IPv6.parse('64:ff9b::'), 96)) return v4(); // well-known NAT64 prefix (RFC 6052)
  if (a.match(ipaddr.IPv6.parse('::'), 96) && (p[6] !== 0 || p[7]! > 1)) return v4(); // IPv4-compatible (deprecated)
  return null;
}

/** Why `ip` must not be contacted, or null when it may (public unicast or allow-listed). */
export function addressRefusal(ip: string): string | null {
  let a: Address;
  try {
    a = ipaddr.parse(ip.replace(/^\[|\]$/g, ''));
  } catch {
    return `${ip} is not an IP address`;
  }
  if (allowListed(a)) return null;
  if (a.kind() === 'ipv6') {
    const inner = embeddedV4(a as ipaddr.IPv6);
    if (inner) {
      if (allowListed(inner)) return null;
      const range = inner.range();
      return range === 'unicast' ? null : `${ip} carries the ${label(range)} IPv4 address ${inner.toString()}`;
    }
  }
  const range = a.range();
  return range === 'unicast' ? null : `${ip} is ${withArticle(label(range))} address`;
}

/**
 * How an operator lets `ip` through, appended to every refusal of a stored URL or a connection:
 * the usual case is a developer's local receiver (`http://localhost:3000/hook`), refused by the
 * default that a hosted service needs. Loopback gets the whole loopback range of both families.
 */
export function allowHint(ip: string): string {
  let value = ip.replace(/^\[|\]$/g, '');
  try {
    const a = ipaddr.parse(value);
    const v = a.kind() === 'ipv6' ? (embeddedV4(a as ipaddr.IPv6) ?? a) : a;
    if (v.range() === 'loopback') value = '127.0.0.0/8,::1';
  } catch {
    return '';
  }
  return `; to allow it (e.g. a local receiver in development), start the service with OUTBOUND_ALLOW=${value}`;
}

/** `addressRefusal` with the way to allow the address. */
function refusalWithHint(ip: string): string | null {
  const why = addressRefusal(ip);
  return why && why + allowHint(ip);
}

// ---- resolving names ---------------------------------------------------------------------

export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;
/** The system's name resolution (what the services compose; tests of DNS rebinding compose another). */
export const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

declare module '../services/registry.js' {
  interface Services {
    resolver: Resolver;
  }
}

/** Every address of `hostname`, or a refusal naming the first internal one. */
async function resolveChecked(hostname: string): Promise<{ address: string; family: number }[]> {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host)) {
    const why = refusalWithHint(host);
    if (why) throw new OutboundRefusedError(why);
    return [{ address: host, family: net.isIP(host) }];
  }
  const addresses = await service('resolver')(host);
  if (!addresses.length) throw Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' });
  for (const { address } of addresses) {
    const why = refusalWithHint(address);
    if (why) throw new OutboundRefusedError(`${host} resolves to a refused address: ${why}`);
  }
  return addresses;
}

/**
 * A `lookup` for sockets: resolves once, refuses if any address is internal, and hands the
 * checked addresses to the socket, which connects to exactly those (the pinning).
 */
export const guardedLookup: net.LookupFunction = (hostname, options, callback) => {
  resolveChecked(hostname).then(
    (all) => {
      const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
      if (!wanted.length) return callback(Object.assign(new Error(`${hostname} has no IPv${options.family} address`), { code: 'ENOTFOUND' }), '', 0);
      if (options.all) callback(null, wanted);
      else callback(null, wanted[0]!.address, wanted[0]!.family);
    },
    (err: NodeJS.ErrnoException) => callback(err, '', 0),
  );
};

// ---- URLs --------------------------------------------------------------------------------

export interface UrlRules {
  /** `http:` only for localhost and loopback literals (the spec's rule for webhooks); default true. */
  httpOnlyForLocalhost?: boolean;
}

/** Problems visible in the URL itself (scheme, credentials, an internal IP literal), or null. */
export function urlShapeRefusal(raw: string, rules: UrlRules = {}): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'url must be an absolute URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'url must use https';
  if (u.username || u.password) return 'url must not carry credentials';
  if (u.port === '0') return 'url must not name port 0 (nothing can be reached there)';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const literal = net.isIP(host) !== 0;
  if (u.protocol === 'http:' && (rules.httpOnlyForLocalhost ?? true)) {
    const loopbackLiteral = literal && isLoopback(host);
    if (host !== 'localhost' && !loopbackLiteral) return 'url must use https (http is allowed for localhost only)';
  }
  if (literal) {
    const why = refusalWithHint(host);
    if (why) return `url points to a refused address: ${why}`;
  }
  return null;
}

function isLoopback(ip: string): boolean {
  const a = ipaddr.parse(ip);
  const v = a.kind() === 'ipv6' ? (embeddedV4(a as ipaddr.IPv6) ?? a) : a;
  return v.range() === 'loopback';
}

/**
 * The full check for a URL about to be stored: its shape, then every address of its host.
 * A name that does not resolve (yet) is accepted: it is checked again at every connection.
 */
export async function checkOutboundUrl(raw: string, rules: UrlRules = {}): Promise<string | null> {
  const shape = urlShapeRefusal(raw, rules);
  if (shape) return shape;
  try {
    await resolveChecked(new URL(raw).hostname);
    return null;
  } catch (err) {
    if (err instanceof OutboundRefusedError) return `url refused: ${err.message}`;
    return null;
  }
}

/** For clients that connect themselves (git): the checked addresses of a URL's host. */
export async function resolveOutbound(raw: string): Promise<{ host: string; port: number; addresses: string[] }> {
  const u = new URL(raw);
  const addresses = (await resolveChecked(u.hostname)).map((a) => a.address);
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) || (u.protocol === 'https:' ? 443 : 80), addresses };
}

// ---- fetching ----------------------------------------------------------------------------

let dispatcher: Agent | undefined;
/** An undici dispatcher whose every connection (redirects included) passes the guard. */
export function guardedDispatcher(): Agent {
  if (!dispatcher) {
    const connect = buildConnector({ lookup: guardedLookup, timeout: 10_000 });
    dispatcher = new Agent({
      connect: (opts, callback) => {
        const host = opts.hostname.replace(/^\[|\]$/g, '');
        if (net.isIP(host)) {
          const why = refusalWithHint(host);
          if (why) return callback(new OutboundRefusedError(why), null);
        }
        connect(opts, callback);
      },
    });
  }
  return dispatcher;
}

/** `fetch` through the guard. Rejects like fetch; `outboundErrorMessage` explains why. */
export function guardedFetch(url: string | URL, init: Omit<RequestInit, 'dispatcher'> = {}): Promise<Response> {
  return undiciFetch(url, { ...init, dispatcher: guardedDispatcher() });
}

/** A readable reason from a guarded fetch's rejection (fetch wraps the cause in "fetch failed"). */
export function outboundErrorMessage(err: unknown): string {
  let e = err as (Error & { cause?: unknown; code?: string }) | undefined;
  for (let depth = 0; e && depth < 5; depth++) {
    if (e instanceof OutboundRefusedError) return e.message;
    if (e.name === 'TimeoutError') return 'no answer in time';
    if (!e.cause) break;
    e = e.cause as Error & { cause?: unknown; code?: string };
  }
  const root = (e ?? err) as (Error & { code?: string }) | undefined;
  return root?.code ? `${root.code}: ${root.message}` : (root?.message ?? String(err));
}

/** Closes pooled connections (shutdown). */
export async function closeGuardedDispatcher(): Promise<void> {
  const d = dispatcher;
  dispatcher = undefined;
  await d?.close().catch(() => undefined);
}
