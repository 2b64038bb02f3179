// Where webhooks may point: https anywhere public, http only to localhost (the spec), and never
// to private, link-local or otherwise internal addresses unless the operator allows them
// (WEBHOOK_ALLOW_PRIVATE=1). Checked on create/patch and again on every delivery (DNS can change).
import { lookup } from 'node:dns/promises';
import net from 'node:net';

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

function v4InRange(ip: string, cidr: string): boolean {
  const [base, bitsRaw] = cidr.split('/');
  const bits = Number(bitsRaw);
  const toInt = (a: string) => a.split('.').reduce((acc, o) => (acc << 8) + Number(o), 0) >>> 0;
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return (toInt(ip) & mask) === (toInt(base!) & mask);
}

const BLOCKED_V4 = ['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24', '192.168.0.0/16', '198.18.0.0/15', '224.0.0.0/4', '240.0.0.0/4'];

export function isLoopback(ip: string): boolean {
  if (net.isIPv4(ip)) return v4InRange(ip, '127.0.0.0/8');
  const v6 = ip.toLowerCase();
  return v6 === '::1' || (v6.startsWith('::ffff:') && isLoopback(v6.slice(7)));
}

/** Private, link-local, unspecified, multicast or reserved (loopback is judged separately). */
export function isInternal(ip: string): boolean {
  if (net.isIPv4(ip)) return BLOCKED_V4.some((c) => v4InRange(ip, c));
  const v6 = ip.toLowerCase();
  if (v6.startsWith('::ffff:')) return isInternal(v6.slice(7));
  return v6 === '::' || /^f[cd]/.test(v6) || /^fe[89ab]/.test(v6) || v6.startsWith('ff');
}

export const allowPrivate = () => process.env.WEBHOOK_ALLOW_PRIVATE === '1';

/** A reason the URL is refused, or null. */
export function checkUrlShape(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'url must be an absolute URL';
  }
  if (u.username || u.password) return 'url must not carry credentials';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const local = LOCAL_HOSTS.has(u.hostname) || (net.isIP(host) !== 0 && isLoopback(host));
  if (u.protocol === 'http:' && !local) return 'url must use https (http is allowed for localhost only)';
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'url must use https';
  if (net.isIP(host) && isInternal(host) && !allowPrivate()) return 'url points to a private or link-local address';
  return null;
}

/** Resolves the host and refuses internal addresses (DNS rebinding defence at delivery time). */
export async function checkResolvedHost(raw: string): Promise<string | null> {
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  if (allowPrivate()) return null;
  const addresses = net.isIP(host) ? [{ address: host }] : await lookup(host, { all: true });
  for (const { address } of addresses) if (isInternal(address)) return `the host resolves to an internal address (${address})`;
  return null;
}
