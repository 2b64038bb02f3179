// Universes: workspaces that scope everything. Each user owns a personal one from the start.
import { z } from 'zod';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { config } from '../config.js';
import { centsToNano } from '../money.js';

export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]*[a-z0-9]$/;

export const createUniverseSchema = z.strictObject({
  slug: z.string().min(3).max(40).regex(SLUG_PATTERN, 'must match ^[a-z0-9][a-z0-9-]*[a-z0-9]$'),
  name: z.string().max(80).optional(),
});

export type CreateUniverseInput = z.output<typeof createUniverseSchema>;

/** `input` was validated where it entered (the REST edge or takeInput): not parsed again here. */
export async function createUniverse(ownerId: string, input: CreateUniverseInput) {
  const { slug, name } = input;
  const taken = await prisma.universe.findUnique({ where: { slug } });
  if (taken) throw new AppError('conflict', `universe slug ${slug} is taken`);
  try {
    return await prisma.universe.create({
      data: { id: newId('uni'), slug, name: name ?? slug, ownerId, balanceNanoUsd: centsToNano(config().startingCreditsCents) },
    });
  } catch (err) {
    if ((err as { code?: string }).code === 'P2002') throw new AppError('conflict', `universe slug ${slug} is taken`);
    throw err;
  }
}

/** A free personal slug derived from an email's local part. */
export async function personalSlugFor(email: string): Promise<string> {
  const base =
    (email.split('@')[0] ?? 'user')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 30) || 'user';
  const stem = base.length >= 3 ? base : `${base}-home`;
  for (let i = 0; ; i++) {
    const slug = i === 0 ? stem : `${stem}-${i + 1}`;
    if (!(await prisma.universe.findUnique({ where: { slug } }))) return slug;
  }
}
