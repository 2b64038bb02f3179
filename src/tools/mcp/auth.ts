// Runtime authentication of an agent's remote tool servers (MCP): the write-only input, its
// sealed form inside the agent's stored `mcpServers` items, and the egress rule that two servers
// may not set one header on one host with different values. The plaintext exists only in the
// request being handled and in the service's MCP client; never in responses, logs or sandboxes.
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { open, seal } from '../../crypto/secret-box.js';
import { urlShapeRefusal } from '../../net/outbound-guard.js';

export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
// Headers the MCP transport itself sets, and hop-by-hop headers: a server's credentials must not
// replace them (vault credentials injected by the egress proxy follow the same rules).
export const RESERVED = new Set([
  'host',
  'content-length',
  'content-type',
  'accept',
  'connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
  'cookie',
]);

const headerValue = z
  .string()
  .min(1)
  .max(8192)
  .refine((v) => !/[\r\n\0]/.test(v), 'must not contain line breaks');
const header = z
  .strictObject({
    name: z
      .string()
      .regex(HEADER_NAME, 'must be an HTTP header name')
      .refine((n) => !RESERVED.has(n.toLowerCase()), 'is set by the service and cannot be supplied'),
    value: headerValue,
  })
  .meta({ id: 'McpServerHeaderInput' });

export const mcpServerAuth = z
  .discriminatedUnion(
    'type',
    [
      z
        .strictObject({
          type: z.literal('bearer'),
          token: z
            .string()
            .min(1)
            .max(8192)
            .refine((v) => !/[\r\n\0]/.test(v), 'must not contain line breaks')
            .describe('sent as `Authorization: Bearer <token>`'),
        })
        .meta({ id: 'McpServerBearerAuthInput' }),
      z
        .strictObject({
          type: z.literal('headers'),
          headers: z.array(header).min(1).max(20).describe('each sent as is on every request to the server'),
        })
        .meta({ id: 'McpServerHeadersAuthInput' }),
    ],
    { error: () => 'authentication.type must be bearer or headers' },
  )
  .meta({
    id: 'McpServerAuthInput',
    description:
      'Write-only runtime authentication, sent by the service (never inside the sandbox); never returned. Omitted on PATCH: the stored one is kept when the server keeps its name and URL origin; null removes it',
  });
export type McpServerAuth = z.output<typeof mcpServerAuth>;

/** The headers an authentication input adds to every request to its server. */
export function authHeaders(auth: McpServerAuth): Record<string, string> {
  if (auth.type === 'bearer') return { Authorization: `Bearer ${auth.token}` };
  const out: Record<string, string> = {};
  for (const h of auth.headers) out[h.name] = h.value;
  return out;
}

/** One server as stored in the agent's `mcpServers` JSON: the public fields plus the sealed headers. */
export interface StoredMcpServer {
  type: 'url';
  name: string;
  url: string;
  tools: { include: string[]; exclude: string[] };
  /** AES-GCM sealed JSON of the headers (absent: no authentication). */
  authSealed?: string;
}

export interface McpServerInput {
  type: 'url';
  name: string;
  url: string;
  tools: { include: string[]; exclude: string[] };
  authentication?: McpServerAuth | null;
}

const originOf = (url: string) => {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
};

/** The sealed headers of a stored server, opened (empty when it has none). */
export function openAuthHeaders(server: Pick<StoredMcpServer, 'authSealed'>): Record<string, string> {
  if (!server.authSealed) return {};
  return JSON.parse(open(server.authSealed)) as Record<string, string>;
}

/**
 * The list to store for an agent: authentication sealed; omitted authentication keeps the one
 * stored for the same name at the same URL origin (a fetched list sent back loses nothing);
 * null removes it. Refuses duplicate names, URLs the outbound guard refuses on sight (http
 * other than to localhost, credentials in the URL, internal IP literals), and two servers
 * setting one header on one host with different values.
 */
export function storedMcpServers(input: McpServerInput[], previous: unknown = []): StoredMcpServer[] {
  const before = new Map((Array.isArray(previous) ? (previous as StoredMcpServer[]) : []).map((s) => [s?.name, s]));
  const names = new Set<string>();
  const out: StoredMcpServer[] = [];
  const headersByServer: { name: string; host: string; headers: Record<string, string> }[] = [];
  for (const s of input) {
    if (names.has(s.name)) throw new AppError('invalid_request', `mcpServers: the name ${JSON.stringify(s.name)} is used twice`);
    names.add(s.name);
    // The address itself is checked again at every connection (the guard's pinned lookup).
    const refusal = urlShapeRefusal(s.url);
    if (refusal) throw new AppError('invalid_request', `mcpServers: ${JSON.stringify(s.name)}: ${refusal}`);
    const stored: StoredMcpServer = { type: 'url', name: s.name, url: s.url, tools: { include: s.tools.include, exclude: s.tools.exclude } };
    let headers: Record<string, string> = {};
    if (s.authentication) {
      headers = authHeaders(s.authentication);
      stored.authSealed = seal(JSON.stringify(headers));
    } else if (s.authentication === undefined) {
      const old = before.get(s.name);
      if (old?.authSealed && originOf(old.url) === originOf(s.url)) {
        stored.authSealed = old.authSealed;
        headers = openAuthHeaders(old);
      }
    }
    out.push(stored);
    headersByServer.push({ name: s.name, host: new URL(s.url).host.toLowerCase(), headers });
  }
  assertNoHeaderConflict(headersByServer);
  return out;
}

function assertNoHeaderConflict(servers: { name: string; host: string; headers: Record<string, string> }[]): void {
  const seen = new Map<string, { server: string; value: string }>();
  for (const s of servers) {
    for (const [name, value] of Object.entries(s.headers)) {
      const key = `${s.host}\n${name.toLowerCase()}`;
      const first = seen.get(key);
      if (first && first.value !== value) {
        throw new AppError(
          'egress_header_conflict',
          `mcpServers ${JSON.stringify(first.server)} and ${JSON.stringify(s.name)} set the header ${name} on ${s.host} with different values`,
        );
      }
      if (!first) seen.set(key, { server: s.name, value });
    }
  }
}
