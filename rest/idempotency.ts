// Idempotency-Key on creating POSTs: a retry with the same key and body within 24 h returns the
// first answer and creates nothing (the stored answers: src/http/idempotency-store.ts). JSON
// routes go through the router; routes that read their own body (multipart uploads) call
// `answerOnce` with a fingerprint of what they read.
import type { Request, Response } from 'express';
import { AppError } from '../src/errors.js';
import type { Context } from '../src/graphql/context.js';
import { claimKey, requestHash, storeAnswer, type StoredAnswer } from '../src/http/idempotency-store.js';

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
