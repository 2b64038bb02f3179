// A vault as the contract shows it, from its row and its credentials' rows: key, host, header and
// created_at of each credential; never the value (nor the sealed value or the prefix).
import type { Vault, VaultCredential } from '../generated/prisma/client.js';
import type { VaultView } from './contract.js';

export type VaultRow = Vault & { credentials: Pick<VaultCredential, 'key' | 'host' | 'header' | 'createdAt'>[] };

export function vaultView(v: VaultRow): VaultView {
  return {
    id: v.id,
    name: v.name,
    credentials: [...v.credentials]
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .map((c) => ({ key: c.key, host: c.host, header: c.header, created_at: c.createdAt.toISOString() })),
    created_at: v.createdAt.toISOString(),
  };
}
