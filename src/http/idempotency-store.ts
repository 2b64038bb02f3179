// The stored answers behind Idempotency-Key (REST's creating POSTs, rest/idempotency.ts, and
// GraphQL mutations, graphql-idempotency.ts): a retry with the same key and body within 24 h
// gets the first answer. A placeholder row claims the key so concurrent retries wait for the
// first request instead of racing it; only successful answers are kept.
import { createHash } from 'node:crypto';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';

const TTL_MS = 24 * 60 * 60 * 1000;
const PENDING = 0;

export interface StoredAnswer {
  status: number;
  body: unknown;
}

export function requestHash(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${JSON.stringify(body ?? null)}`)
    .digest('hex');
}

/** Claims the key; returns a stored answer to replay, or null when this request should run. */
export async function claimKey(key: string, hash: string): Promise<StoredAnswer | null> {
  const cutoff = new Date(Date.now() - TTL_MS);
  for (let attempt = 0; attempt < 100; attempt++) {
    const existing = await prisma.idempotencyRecord.findUnique({ where: { key } });
    if (existing && existing.createdAt < cutoff) {
      await prisma.idempotencyRecord.deleteMany({ where: { key, createdAt: existing.createdAt } });
      continue;
    }
    if (existing) {
      if (existing.requestHash !== hash) {
        throw new AppError('invalid_request', 'Idempotency-Key was already used with a different request body');
      }
      if (existing.status !== PENDING) return { status: existing.status, body: existing.body };
      await new Promise((r) => setTimeout(r, 100)); // the first request is still running
      continue;
    }
    try {
      await prisma.idempotencyRecord.create({ data: { key, requestHash: hash, status: PENDING, body: {} } });
      return null;
    } catch (err) {
      if ((err as { code?: string }).code !== 'P2002') throw err;
    }
  }
  throw new AppError('conflict', 'a request with this Idempotency-Key is still in progress');
}

export async function storeAnswer(key: string, answer: StoredAnswer): Promise<void> {
  // Only successful answers are remembered; a failed attempt frees the key for a real retry.
  if (answer.status >= 200 && answer.status < 300) {
    await prisma.idempotencyRecord.update({ where: { key }, data: { status: answer.status, body: answer.body as object } });
  } else {
    await prisma.idempotencyRecord.deleteMany({ where: { key, status: PENDING } });
  }
}
