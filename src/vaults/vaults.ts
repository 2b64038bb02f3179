// Vault rules: create, read, list, delete; credentials written (sealed) and deleted. Writing
// checks egress_header_conflict within the vault and for every live session using it; every
// change reaches those sessions' egress policy at once (publishPolicyChange).
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { seal } from '../crypto/secret-box.js';
import type { Viewer } from '../auth/viewer.js';
import type { Prisma } from '../generated/prisma/client.js';
import { checkConflicts, EgressHeaderConflictError, hostKey } from '../egress/policy.js';
import { publishPolicyChange, sessionRules } from '../egress/session-policy.js';
import { CREDENTIAL_KEY, MAX_CREDENTIALS_PER_VAULT, type CreateVaultBody, type PutVaultCredentialBody } from './contract.js';
import { vaultRules, type CredentialOverride } from '../egress/vault-rules.js';
import type { VaultRow } from './view.js';

const withCredentials = { credentials: { select: { key: true, host: true, header: true, createdAt: true } } } as const;

export async function findVault(viewer: Viewer, id: string): Promise<VaultRow> {
  const vault = await prisma.vault.findFirst({ where: { id, universeId: viewer.universe.id }, include: withCredentials });
  if (!vault) throw new AppError('not_found', 'vault not found');
  return vault;
}

/** A page of the universe's vaults with their credentials (the caller's bounds, order and size). */
export function listVaults(
  viewer: Viewer,
  page: { where?: Prisma.VaultWhereInput; orderBy: Prisma.VaultOrderByWithRelationInput; take: number },
): Promise<VaultRow[]> {
  return prisma.vault.findMany({ where: { ...page.where, universeId: viewer.universe.id }, orderBy: page.orderBy, take: page.take, include: withCredentials });
}

export async function createVault(viewer: Viewer, body: CreateVaultBody): Promise<VaultRow> {
  return prisma.vault.create({ data: { id: newId('vault'), universeId: viewer.universe.id, name: body.name }, include: withCredentials });
}

/** Sessions not yet terminated that list the vault (one query). */
async function liveSessionsUsing(universeId: string, vaultId: string): Promise<string[]> {
  const rows = await prisma.session.findMany({ where: { universeId, vaultIds: { has: vaultId }, status: { not: 'terminated' } }, select: { id: true } });
  return rows.map((r) => r.id);
}

async function publishAll(sessionIds: string[]): Promise<void> {
  await Promise.all(sessionIds.map((id) => publishPolicyChange(id)));
}

/** Deletes the vault and its credentials; sessions listing it lose its headers on their next request. */
export async function deleteVault(viewer: Viewer, id: string): Promise<void> {
  const vault = await findVault(viewer, id);
  const n = await prisma.vault.deleteMany({ where: { id: vault.id } });
  if (n.count === 0) throw new AppError('not_found', 'vault not found');
  await publishAll(await liveSessionsUsing(vault.universeId, vault.id));
}

function checkKey(key: string): void {
  if (!CREDENTIAL_KEY.test(key)) throw new AppError('invalid_request', `credential key must match ${CREDENTIAL_KEY.source}`);
}

/** `API.Example.com:443` → `api.example.com` (the form the proxy matches requests with). */
function normalizedHost(host: string): string {
  const wildcard = host.startsWith('*.');
  const [name, port] = (wildcard ? host.slice(2) : host).split(':');
  return `${wildcard ? '*.' : ''}${hostKey(name!, port ?? null, 'https')}`;
}

function asConflict(err: unknown): never {
  if (err instanceof EgressHeaderConflictError) throw new AppError('egress_header_conflict', err.message);
  throw err;
}

/**
 * Creates or replaces a credential. Refused with egress_header_conflict (nothing stored) when it
 * would set one header on one host to a different value than another credential of the vault,
 * or, for a live session using the vault, than its repository tokens, its agent's egress
 * secrets or its other vaults' credentials.
 */
export async function putCredential(viewer: Viewer, id: string, key: string, body: PutVaultCredentialBody): Promise<VaultRow> {
  checkKey(key);
  const vault = await findVault(viewer, id);
  if (!vault.credentials.some((c) => c.key === key) && vault.credentials.length >= MAX_CREDENTIALS_PER_VAULT) {
    throw new AppError('invalid_request', `a vault holds at most ${MAX_CREDENTIALS_PER_VAULT} credentials`);
  }
  const override: CredentialOverride = { vaultId: vault.id, key, host: normalizedHost(body.host), header: body.header, prefix: body.prefix, value: body.value };
  const sessions = await liveSessionsUsing(vault.universeId, vault.id);
  try {
    checkConflicts(await vaultRules([vault.id], override));
    for (const sessionId of sessions) checkConflicts(await sessionRules(sessionId, undefined, override));
  } catch (err) {
    asConflict(err);
  }
  const { host, header, prefix } = override;
  const valueSealed = seal(body.value);
  await prisma.vaultCredential.upsert({
    where: { vaultId_key: { vaultId: vault.id, key } },
    create: { vaultId: vault.id, key, host, header, prefix, valueSealed },
    update: { host, header, prefix, valueSealed },
  });
  await publishAll(sessions);
  return findVault(viewer, vault.id);
}

/** Deletes a credential (404 when the vault has no such key); live sessions lose its header at once. */
export async function deleteCredential(viewer: Viewer, id: string, key: string): Promise<VaultRow> {
  checkKey(key);
  const vault = await findVault(viewer, id);
  const n = await prisma.vaultCredential.deleteMany({ where: { vaultId: vault.id, key } });
  if (n.count === 0) throw new AppError('not_found', `credential ${key} not found`);
  await publishAll(await liveSessionsUsing(vault.universeId, vault.id));
  return findVault(viewer, vault.id);
}

/** The distinct ids of `ids`, and the first of them that is not a vault of the universe (or null). */
export async function checkVaultIds(universeId: string, ids: string[]): Promise<{ ids: string[]; missing: string | null }> {
  const unique = [...new Set(ids)];
  if (!unique.length) return { ids: [], missing: null };
  const found = new Set((await prisma.vault.findMany({ where: { id: { in: unique }, universeId }, select: { id: true } })).map((v) => v.id));
  return { ids: unique, missing: unique.find((v) => !found.has(v)) ?? null };
}
