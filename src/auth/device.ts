// Command-line login (OAuth 2.0 device authorization grant, RFC 8628 shape): the CLI asks for a
// code, the signed-in user approves it in the browser, the CLI polls and receives a token once.
import { z } from 'zod';
import { randomInt } from 'node:crypto';
import { prisma } from '../db/client.js';
import { newId, secretText } from '../ids.js';
import { hashToken, mintToken } from './tokens.js';
import { SCOPES } from './scopes.js';
import { AppError } from '../errors.js';
import { parseInput } from '../validation.js';

export const DEVICE_CODE_TTL_S = 600;
export const POLL_INTERVAL_S = 2;
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'; // no vowels: no accidental words

export const deviceRequestSchema = z.strictObject({
  name: z.string().trim().min(1).max(100).optional(),
  scope: z.enum(SCOPES).optional(),
  universe: z.string().max(40).optional(),
});

function userCode(): string {
  const pick = () => Array.from({ length: 4 }, () => USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]).join('');
  return `${pick()}-${pick()}`;
}

export function normaliseUserCode(code: string): string {
  const letters = code.toUpperCase().replace(/[^A-Z]/g, '');
  return letters.length === 8 ? `${letters.slice(0, 4)}-${letters.slice(4)}` : code.toUpperCase();
}

export async function startDeviceFlow(input: unknown) {
  const req = parseInput(deviceRequestSchema, input ?? {});
  const deviceCode = secretText(32);
  const code = userCode();
  await prisma.deviceCode.create({
    data: {
      id: newId('dev'),
      deviceCodeHash: hashToken(deviceCode),
      userCode: code,
      // A login that does not ask for a scope gets write: enough to run agents, not to manage
      // the universe (an admin token is asked for by name).
      scope: req.scope ?? 'write',
      tokenName: req.name ?? 'cli',
      universeId: req.universe ?? null, // a slug until approval resolves it
      expiresAt: new Date(Date.now() + DEVICE_CODE_TTL_S * 1000),
    },
  });
  return { deviceCode, userCode: code };
}

export async function findPending(userCodeInput: string) {
  const row = await prisma.deviceCode.findUnique({ where: { userCode: normaliseUserCode(userCodeInput) } });
  if (!row || row.status !== 'pending' || row.expiresAt <= new Date()) return null;
  return row;
}

export async function decideDeviceCode(userCodeInput: string, userId: string, approve: boolean): Promise<void> {
  const row = await findPending(userCodeInput);
  if (!row) throw new AppError('not_found', 'unknown or expired code');
  if (approve && row.universeId) {
    const u = await prisma.universe.findFirst({ where: { slug: row.universeId, ownerId: userId } });
    if (!u) throw new AppError('not_found', `universe ${row.universeId} not found`);
  }
  await prisma.deviceCode.update({ where: { id: row.id }, data: { status: approve ? 'approved' : 'denied', userId } });
}

export type PollResult =
  | { kind: 'token'; token: string; scope: string; universe: string | null }
  | { kind: 'error'; code: 'authorization_pending' | 'access_denied' | 'expired_token' | 'invalid_grant' };

/** Exchanges an approved device code for a token, exactly once. */
export async function pollDeviceCode(deviceCode: string): Promise<PollResult> {
  const row = await prisma.deviceCode.findUnique({ where: { deviceCodeHash: hashToken(deviceCode) } });
  if (!row) return { kind: 'error', code: 'invalid_grant' };
  if (row.status === 'consumed') return { kind: 'error', code: 'invalid_grant' };
  if (row.expiresAt <= new Date()) return { kind: 'error', code: 'expired_token' };
  if (row.status === 'denied') return { kind: 'error', code: 'access_denied' };
  if (row.status !== 'approved' || !row.userId) return { kind: 'error', code: 'authorization_pending' };
  // Flip to consumed first so two concurrent polls cannot both mint.
  const claimed = await prisma.deviceCode.updateMany({ where: { id: row.id, status: 'approved' }, data: { status: 'consumed' } });
  if (claimed.count !== 1) return { kind: 'error', code: 'invalid_grant' };
  const universe = row.universeId ? await prisma.universe.findFirst({ where: { slug: row.universeId, ownerId: row.userId } }) : null;
  const { token } = await mintToken({
    userId: row.userId,
    name: row.tokenName,
    scope: row.scope as (typeof SCOPES)[number],
    universeId: universe?.id ?? null,
    expiresAt: null,
  });
  return { kind: 'token', token, scope: row.scope, universe: universe?.slug ?? null };
}
