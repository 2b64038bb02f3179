// API tokens: `ast_<random>`, shown once, stored as a SHA-256 hash (they carry 256 bits of
// entropy, so a fast hash is enough and lookups stay one indexed query).
import { createHash } from 'node:crypto';
import { prisma } from '../db/client.js';
import { newId, secretText } from '../ids.js';
import type { Scope } from './scopes.js';

export const TOKEN_PREFIX = 'ast_';

export function hashToken(raw: string): string {
  return createHash('sha256').update(raw).digest('hex');
}

export function generateTokenValue(): string {
  return TOKEN_PREFIX + secretText(30);
}

export interface MintInput {
  userId: string;
  name: string;
  scope: Scope;
  universeId: string | null;
  expiresAt: Date | null;
  /** A fixed value (ADMIN_TOKEN); otherwise a fresh random one. */
  value?: string;
}

export async function mintToken(input: MintInput) {
  const value = input.value ?? generateTokenValue();
  const apiToken = await prisma.apiToken.create({
    data: {
      id: newId('tok'),
      name: input.name,
      tokenHash: hashToken(value),
      prefix: value.slice(0, 8),
      scope: input.scope,
      userId: input.userId,
      universeId: input.universeId,
      expiresAt: input.expiresAt,
    },
  });
  return { token: value, apiToken };
}

/** Revokes the token with this raw value; false when none was live (unknown, revoked already). */
export async function revokeTokenByValue(raw: string): Promise<boolean> {
  const { count } = await prisma.apiToken.updateMany({ where: { tokenHash: hashToken(raw), revokedAt: null }, data: { revokedAt: new Date() } });
  return count > 0;
}
