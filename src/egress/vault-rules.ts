// How vault credentials become the egress proxy's header rules: `<header>: <prefix><value>` on
// requests to `<host>`. The value is opened here, in the service, and only ever travels in the
// proxy's outgoing request; a deleted vault simply has no credential rows left.
import { prisma } from '../db/client.js';
import { open } from '../crypto/secret-box.js';
import type { HeaderRule } from './policy.js';

/** A credential being written (checked before it is stored): replaces or adds `key` in `vaultId`. */
export interface CredentialOverride {
  vaultId: string;
  key: string;
  host: string;
  header: string;
  prefix: string;
  value: string;
}

export function credentialRule(vaultId: string, c: { key: string; host: string; header: string; prefix: string }, value: string): HeaderRule {
  return { host: c.host, header: c.header, value: `${c.prefix}${value}`, source: `vault ${vaultId} credential ${c.key}` };
}

/** The rules of these vaults' credentials (one query), with `override` applied. */
export async function vaultRules(vaultIds: string[], override?: CredentialOverride): Promise<HeaderRule[]> {
  if (!vaultIds.length) return [];
  const rows = await prisma.vaultCredential.findMany({ where: { vaultId: { in: vaultIds } }, orderBy: [{ vaultId: 'asc' }, { key: 'asc' }] });
  const rules: HeaderRule[] = [];
  for (const r of rows) {
    if (override && r.vaultId === override.vaultId && r.key === override.key) continue;
    rules.push(credentialRule(r.vaultId, r, open(r.valueSealed)));
  }
  if (override && vaultIds.includes(override.vaultId)) rules.push(credentialRule(override.vaultId, override, override.value));
  return rules;
}
