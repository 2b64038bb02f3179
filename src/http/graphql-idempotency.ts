// Idempotency-Key on GraphQL mutations (CONTRACT: every POST that creates): a retry of the same
// mutation with the same key, body and credentials within 24 h gets the first answer and runs
// nothing again; the same key with another body is 400 invalid_request. Only an answer without
// errors is kept (as REST keeps only 2xx), so a failed attempt can be retried for real. Queries
// and requests without the header pass straight through.
import { createHash } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { getOperationAST, parse } from 'graphql';
import { AppError } from '../errors.js';
import { logger } from '../logger.js';
import { claimKey, requestHash, storeAnswer } from './idempotency-store.js';

interface GraphQLPost {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
}

/** The mutation a JSON body asks for, or null (a query, a body that does not parse: Yoga answers it). */
function mutationOf(body: Buffer): GraphQLPost | null {
  try {
    const post = JSON.parse(body.toString('utf8')) as GraphQLPost;
    if (!post || typeof post.query !== 'string') return null;
    const op = getOperationAST(parse(post.query), typeof post.operationName === 'string' ? post.operationName : undefined);
    return op?.operation === 'mutation' ? post : null;
  } catch {
    return null;
  }
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex');

/** After graphqlInputHygiene (which leaves a JSON body as its bytes in `req.body`), before Yoga. */
export function graphqlIdempotency(): RequestHandler {
  return (req, res, next) => {
    const header = req.headers['idempotency-key'];
    if (req.method !== 'POST' || typeof header !== 'string' || !header || !Buffer.isBuffer(req.body)) return next();
    const post = mutationOf(req.body);
    if (!post) return next();
    void (async () => {
      if (header.length > 255) throw new AppError('invalid_request', 'Idempotency-Key is longer than 255 characters');
      // The caller as it presents itself (a token's or a sign-in's credentials, the universe asked for).
      const who = digest(`${req.headers.authorization ?? ''}\n${req.headers.cookie ?? ''}\n${req.headers['x-universe'] ?? ''}`);
      const key = `graphql:${who}:${header}`;
      const replay = await claimKey(
        key,
        requestHash('POST', '/graphql', { query: post.query, variables: post.variables ?? null, operationName: post.operationName ?? null }),
      );
      if (replay) {
        res.setHeader('Idempotent-Replayed', 'true');
        return void res.status(replay.status).json(replay.body);
      }
      keepAnswer(res, key);
      next();
    })().catch((err: unknown) => {
      if (res.headersSent) return;
      const known = err instanceof AppError;
      if (!known) logger.error({ err }, 'GraphQL idempotency failed');
      const code = known ? err.code : 'internal_error';
      res.status(known ? err.status : 500).json({ errors: [{ message: known ? err.message : 'Unexpected error.', extensions: { code } }] });
    });
  };
}

/** Collects the answer Yoga writes; keeps it under `key` when it has no errors, frees the key otherwise. */
function keepAnswer(res: Response, key: string): void {
  const chunks: Buffer[] = [];
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  const collect = (chunk: unknown, encoding?: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
  };
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    collect(chunk, rest[0]);
    return write(chunk, ...rest);
  }) as Response['write'];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    collect(chunk, rest[0]);
    return end(chunk, ...rest);
  }) as Response['end'];
  res.once('finish', () => {
    let body: { data?: unknown; errors?: unknown } | null = null;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = null;
    }
    const ok = res.statusCode >= 200 && res.statusCode < 300 && body !== null && !body.errors;
    storeAnswer(key, ok ? { status: res.statusCode, body } : { status: 500, body: null }).catch((err: unknown) =>
      logger.warn({ err }, 'could not keep a GraphQL answer under its Idempotency-Key'),
    );
  });
  res.once('close', () => {
    if (!res.writableFinished) void storeAnswer(key, { status: 500, body: null }).catch(() => undefined);
  });
}
