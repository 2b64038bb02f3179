// An environment as the contract shows it, from its row alone (a list costs the query that loaded it).
import type { Environment } from '../generated/prisma/client.js';
import type { EnvironmentPackages, EnvironmentView } from './contract.js';
import { networkOf } from '../egress/environment-allow-list.js';

/** The stored packages (validated at save time), with every manager present. */
export function packagesOf(row: Pick<Environment, 'packages'>): EnvironmentPackages {
  const p = (row.packages ?? {}) as Partial<EnvironmentPackages>;
  return { apt: p.apt ?? [], npm: p.npm ?? [], pip: p.pip ?? [] };
}

export function environmentView(row: Environment): EnvironmentView {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    packages: packagesOf(row),
    network: networkOf(row),
    archived_at: row.archivedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
