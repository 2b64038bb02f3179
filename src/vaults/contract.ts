// Vaults: named sets of credentials the egress proxy injects as headers on requests to their
// host; values are write-only. The create body, the credential PUT body and the vault as
// returned: one definition each for REST validation, OpenAPI, the GraphQL types and the domain.
import { z } from 'zod';
import { dateTime } from '../contract/zod-walk.js';
import { HEADER_NAME, RESERVED } from '../tools/mcp/auth.js';

export const MAX_VAULT_IDS = 10;
export const MAX_CREDENTIALS_PER_VAULT = 100;
/** A credential's key, as it appears in the path. */
export const CREDENTIAL_KEY = /^[A-Za-z0-9_.-]{1,128}$/;
// `api.example.com`, `git.local:8080`, `127.0.0.1:9000`, `*.example.com` (every subdomain).
// (letters of both cases spelled out, not the `i` flag: the pattern is documented as JSON Schema)
const HOST =
  /^(\*\.)?[a-zA-Z0-9]([a-zA-Z0-9-]{0,62})(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,62}))*(:([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?$/;
// The proxy's own headers (it authenticates the sandbox with Proxy-Authorization).
const PROXY_HEADERS = new Set(['proxy-authenticate', 'proxy-authorization', 'proxy-connection']);
const NO_LINE_BREAKS = /^[^\r\n\0]*$/;

const host = z
  .string()
  .min(1)
  .max(253 + 6)
  .regex(HOST, 'must be a host name or host:port, port 1 to 65535 (`*.` for every subdomain)')
  .describe('Requests to this host get the header: `api.example.com`, `host:port` (port when not 443/80), or `*.example.com` for every subdomain');

export const createVaultBody = z
  .strictObject({
    name: z.string().min(1).max(120),
  })
  .meta({ id: 'CreateVaultInput' });
export type CreateVaultBody = z.output<typeof createVaultBody>;

export const putVaultCredentialBody = z
  .strictObject({
    value: z
      .string()
      .min(1)
      .max(10_000)
      .regex(NO_LINE_BREAKS, 'must not contain line breaks')
      .describe('Write-only: never returned, never placed in a sandbox'),
    host,
    header: z
      .string()
      .regex(HEADER_NAME, 'must be an HTTP header name')
      .refine((n) => !RESERVED.has(n.toLowerCase()) && !PROXY_HEADERS.has(n.toLowerCase()), 'is a transport or hop-by-hop header and cannot be injected')
      .default('Authorization'),
    prefix: z
      .string()
      .max(200)
      .regex(NO_LINE_BREAKS, 'must not contain line breaks')
      .default('Bearer ')
      .describe('Put before the value in the header ("" for the bare value)'),
  })
  .meta({ id: 'PutVaultCredentialInput' });
export type PutVaultCredentialBody = z.output<typeof putVaultCredentialBody>;

export const vaultCredentialBody = z
  .strictObject({
    key: z.string(),
    host: z.string(),
    header: z.string(),
    created_at: dateTime(z.string()),
  })
  .meta({ id: 'VaultCredential', description: 'A stored credential; its value is never returned' });

export const vaultBody = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    credentials: z.array(vaultCredentialBody).describe('In key order; values are write-only'),
    created_at: dateTime(z.string()),
  })
  .meta({ id: 'Vault' });
export type VaultView = z.output<typeof vaultBody>;

export const vaultList = z
  .strictObject({
    data: z.array(vaultBody).describe('Newest first'),
    next_page: z.string().nullable().describe('Pass back as ?page= for the next page; null on the last page'),
  })
  .meta({ id: 'VaultList' });
