// Idempotency-Key on creating POSTs: a retry with the same key and body within 24 h returns the
// first answer and creates nothing. A placeholder row claims the key so concurrent retries wait
// for the first request instead of racing it. JSON routes go through the router; routes that
// read their own body (multipart uploads) call `answerOnce` with a fingerprint of what they read.
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { prisma } from '../src/db/client.js';
import { AppError } from '../src/errors.js';
import type { Context } from '../src/graphql/context.js';

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

/** The stored key: the caller (token or user), the universe, the method and path, and the header. */
export function idempotencyKey(ctx: Context, method: string, path: string, header: string): string {
  if (header.length > 255) throw new AppError('invalid_request', 'Idempotency-Key is longer than 255 characters');
  const who = ctx.viewer?.tokenId ?? ctx.viewer?.user.id ?? 'anonymous';
  return `${who}:${ctx.viewer?.universe.id}:${method} ${path}:${header}`;
}

/**
 * A raw route's answer under its Idempotency-Key (when sent): `fingerprint` stands for the body
 * it read (for a multipart body: each part's name, filename, type and content hash), deciding a
 * replay with the key as a JSON body does. On a replay (or a refused reuse of the key) nothing
 * is created and `discard` drops what reading the body stored (an uploaded blob).
 */
export async function answerOnce(
  req: Request,
  res: Response,
  ctx: Context,
  fingerprint: unknown,
  create: () => Promise<StoredAnswer>,
  discard: () => Promise<void> = async () => undefined,
): Promise<void> {
  const header = req.headers['idempotency-key'];
  let key: string | null = null;
  if (typeof header === 'string' && header) {
    try {
      key = idempotencyKey(ctx, req.method, req.path, header);
      const replay = await claimKey(key, requestHash(req.method, req.path, fingerprint));
      if (replay) {
        await discard();
        res.setHeader('Idempotent-Replayed', 'true');
        return void res.status(replay.status).json(replay.body);
      }
    } catch (err) {
      await discard();
      throw err;
    }
  }
  let answer: StoredAnswer;
  try {
    answer = await create();
  } catch (err) {
    if (key) await storeAnswer(key, { status: 500, body: null }).catch(() => undefined);
    throw err;
  }
  if (key) await storeAnswer(key, answer);
  res.status(answer.status).json(answer.body);
}
