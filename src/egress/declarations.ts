// How credentials become header rules.
//
// Repository tokens: `Authorization: Basic base64("x-access-token:<token>")` on the repository's
// host, the form git (and GitHub) accept for HTTPS clones, the same one the service's own
// clone uses.
//
// Agent secrets declare a host and header in their description (the spec's secret has only
// `value` and `description`), one line per host:
//
//     egress: api.example.com                         → Authorization: Bearer <value>
//     egress: api.example.com X-Api-Key: {value}      → X-Api-Key: <value>
//     egress: *.example.com Authorization: token {value}
//
// `{value}` is replaced by the secret's value; the rest of the description is free text.
import { hostKey, type HeaderRule } from './policy.js';

const LINE = /^\s*egress:\s*(\S+)(?:\s+([A-Za-z0-9-]+):\s?(.*?))?\s*$/i;
const HOST = /^(\*\.)?([a-z0-9-]+(\.[a-z0-9-]+)*)(:\d{1,5})?$/i;
// Headers the proxy itself owns, or that would change how the request is framed.
const RESERVED = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'proxy-connection',
]);

export interface Declaration {
  host: string;
  header: string;
  template: string;
}

/** The `egress:` lines of a secret's description; malformed lines are reported, not applied. */
export function parseDeclarations(description: string): { declarations: Declaration[]; problems: string[] } {
  const declarations: Declaration[] = [];
  const problems: string[] = [];
  for (const line of description.split(/\r?\n/)) {
    if (!/^\s*egress:/i.test(line)) continue;
    const m = LINE.exec(line);
    const host = m?.[1] ?? '';
    const hm = HOST.exec(host);
    if (!m || !hm) {
      problems.push(`not an egress declaration: ${line.trim().slice(0, 120)}`);
      continue;
    }
    const header = m[2] ?? 'Authorization';
    const template = m[2] ? (m[3] ?? '') : 'Bearer {value}';
    if (RESERVED.has(header.toLowerCase())) problems.push(`the proxy sets ${header} itself: ${line.trim().slice(0, 120)}`);
    else if (!template.includes('{value}')) problems.push(`the header template has no {value}: ${line.trim().slice(0, 120)}`);
    else {
      const port = hm[4] ? hm[4].slice(1) : null;
      const name = `${hm[1] ?? ''}${hm[2]!}`;
      declarations.push({ host: hostKey(name, port, 'https'), header, template });
    }
  }
  return { declarations, problems };
}

/** Header rules of one secret (none when its value cannot be a header value). */
export function secretRules(key: string, description: string, value: string): HeaderRule[] {
  if (/[\r\n\0]/.test(value)) return [];
  return parseDeclarations(description).declarations.map((d) => ({
    host: d.host,
    header: d.header,
    value: d.template.replaceAll('{value}', value),
    source: `secret ${key}`,
  }));
}

/** The header rule of a repository token on its host. */
export function repositoryRule(resourceId: string, host: string, token: string): HeaderRule {
  return { host, header: 'Authorization', value: `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`, source: `repository ${resourceId}` };
}
