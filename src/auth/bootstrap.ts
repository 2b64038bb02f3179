// First start: the owner from ADMIN_EMAIL / ADMIN_PASSWORD (a random password printed once when
// unset), the owner's personal universe, and the ADMIN_TOKEN when given.
import { prisma } from '../db/client.js';
import { newId, secretText } from '../ids.js';
import { hashPassword } from './passwords.js';
import { hashToken, mintToken, TOKEN_PREFIX } from './tokens.js';
import { personalSlugFor } from '../universes/universes.js';
import { logger } from '../logger.js';
import { config, type Config } from '../config.js';
import { centsToNano } from '../billing/money.js';

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

export async function bootstrapOwner(cfg: Pick<Config, 'adminEmail' | 'adminPassword' | 'adminToken'>): Promise<void> {
  let owner = await prisma.user.findFirst({ where: { isOwner: true } });
  if (!owner && (await prisma.user.count()) === 0) {
    const password = cfg.adminPassword ?? secretText(12);
    try {
      owner = await createUser(cfg.adminEmail, password, true);
      if (!cfg.adminPassword) {
        // Printed once, on purpose: the only way to learn a generated password.
        process.stdout.write(`\nOwner account created: ${cfg.adminEmail}\nGenerated password (shown once): ${password}\n\n`);
      }
      logger.info({ email: cfg.adminEmail }, 'owner account created');
    } catch (err) {
      // Another process bootstrapped at the same moment.
      if ((err as { code?: string }).code !== 'P2002') throw err;
      owner = await prisma.user.findFirst({ where: { isOwner: true } });
    }
  }
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
