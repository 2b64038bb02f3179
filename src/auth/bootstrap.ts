// First start: the owner from ADMIN_EMAIL / ADMIN_PASSWORD (a random password printed once when
// unset), the owner's personal universe, and the ADMIN_TOKEN when given. On every later start,
// ADMIN_PASSWORD (when set) is the owner's password: a different stored one is replaced and the
// owner's browser sessions end — the documented way to recover a lost password.
import { prisma } from '../db/client.js';
import { newId, secretText } from '../ids.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { hashToken, mintToken, TOKEN_PREFIX } from './tokens.js';
import { personalSlugFor } from '../universes/universes.js';
import { logger } from '../logger.js';
import { config, type Config } from '../config.js';
import { centsToNano } from '../money.js';

/** A new universe's wallet: STARTING_CREDITS_CENTS. */
export function startingBalance(): bigint {
  return centsToNano(config().startingCreditsCents);
}

export async function createUser(email: string, password: string, isOwner: boolean) {
  const userId = newId('usr');
  const slug = await personalSlugFor(email);
  return prisma.user.create({
    data: {
      id: userId,
      email,
      passwordHash: await hashPassword(password),
      isOwner,
      universes: { create: { id: newId('uni'), slug, name: 'Personal', isPersonal: true, balanceNanoUsd: startingBalance() } },
    },
  });
}

/** What the last start-up did about the owner, for the start-up banner. */
export interface OwnerBootstrap {
  email: string | null;
  created: boolean;
  /** Set only when this start generated the password: the banner prints it once. */
  generatedPassword: string | null;
  passwordReset: boolean;
}
let report: OwnerBootstrap = { email: null, created: false, generatedPassword: null, passwordReset: false };
export function ownerBootstrapReport(): OwnerBootstrap {
  return report;
}

/** ADMIN_PASSWORD on a later start: replaces a different owner password and signs the owner out everywhere. */
async function applyAdminPassword(owner: { id: string; email: string; passwordHash: string }, password: string): Promise<boolean> {
  if (await verifyPassword(password, owner.passwordHash)) return false;
  await prisma.$transaction([
    prisma.user.update({ where: { id: owner.id }, data: { passwordHash: await hashPassword(password) } }),
    prisma.webSession.deleteMany({ where: { userId: owner.id } }),
  ]);
  logger.warn({ email: owner.email }, "owner password reset from ADMIN_PASSWORD; the owner's browser sessions were signed out");
  return true;
}

export async function bootstrapOwner(cfg: Pick<Config, 'adminEmail' | 'adminPassword' | 'adminToken'>): Promise<void> {
  report = { email: null, created: false, generatedPassword: null, passwordReset: false };
  let owner = await prisma.user.findFirst({ where: { isOwner: true } });
  if (!owner && (await prisma.user.count()) === 0) {
    const password = cfg.adminPassword ?? secretText(12);
    try {
      owner = await createUser(cfg.adminEmail, password, true);
      // The banner prints a generated password once, on purpose: the only way to learn it.
      report = { email: owner.email, created: true, generatedPassword: cfg.adminPassword ? null : password, passwordReset: false };
      logger.info({ email: cfg.adminEmail }, 'owner account created');
    } catch (err) {
      // Another process bootstrapped at the same moment.
      if ((err as { code?: string }).code !== 'P2002') throw err;
      owner = await prisma.user.findFirst({ where: { isOwner: true } });
    }
  } else if (owner && cfg.adminPassword) {
    report = { ...report, email: owner.email, passwordReset: await applyAdminPassword(owner, cfg.adminPassword) };
  }
  if (owner) report.email = owner.email;
  if (!owner || !cfg.adminToken) return;
  if (!cfg.adminToken.startsWith(TOKEN_PREFIX)) throw new Error('ADMIN_TOKEN must start with ast_');
  const existing = await prisma.apiToken.findUnique({ where: { tokenHash: hashToken(cfg.adminToken) } });
  if (existing) {
    if (existing.userId !== owner.id) throw new Error('ADMIN_TOKEN belongs to another user');
    await prisma.apiToken.update({ where: { id: existing.id }, data: { scope: 'admin', universeId: null, revokedAt: null, expiresAt: null } });
    return;
  }
  try {
    await mintToken({ userId: owner.id, name: 'ADMIN_TOKEN', scope: 'admin', universeId: null, expiresAt: null, value: cfg.adminToken });
  } catch (err) {
    if ((err as { code?: string }).code !== 'P2002') throw err;
  }
}
