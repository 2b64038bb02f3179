// Browser sign-in: a random cookie value, stored hashed, valid for 7 days.
import { prisma } from '../db/client.js';
import { newId, secretText } from '../ids.js';
import { hashToken } from './tokens.js';
import { verifyPassword } from './passwords.js';

export const WEB_SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export async function signIn(email: string, password: string): Promise<{ cookie: string; expiresAt: Date } | null> {
  const user =
    (await prisma.user.findUnique({ where: { email: email.trim().toLowerCase() } })) ?? (await prisma.user.findUnique({ where: { email: email.trim() } }));
  if (!user || !(await verifyPassword(password, user.passwordHash))) return null;
  const cookie = secretText(32);
  const expiresAt = new Date(Date.now() + WEB_SESSION_TTL_MS);
  await prisma.webSession.create({ data: { id: newId('ws'), tokenHash: hashToken(cookie), userId: user.id, expiresAt } });
  return { cookie, expiresAt };
}

export async function signOut(cookie: string): Promise<void> {
  await prisma.webSession.deleteMany({ where: { tokenHash: hashToken(cookie) } });
}
