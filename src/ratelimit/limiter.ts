// 120 requests per minute per token (rate-limiter-flexible): in memory by default, in Redis when
// REDIS_URL is set so every process shares one count.
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Request, Response, NextFunction } from 'express';
import { createHash } from 'node:crypto';
import { parse as parseCookie } from 'cookie';
import type { Redis } from 'ioredis';
import { sendError } from '../http/error-envelope.js';
import { bearerOf, SESSION_COOKIE } from '../auth/viewer.js';

export function createLimiter(perMinute: number, redis?: Redis): RateLimiterAbstract {
  const opts = { points: perMinute, duration: 60, keyPrefix: 'rl' };
  return redis ? new RateLimiterRedis({ ...opts, storeClient: redis, insuranceLimiter: new RateLimiterMemory(opts) }) : new RateLimiterMemory(opts);
}

/** The rate-limit key: a hash of the credential (never the credential itself), else the address. */
export function limitKey(req: Request): string {
  const bearer = bearerOf(req.get('authorization'));
  if (bearer) return 't:' + createHash('sha256').update(bearer).digest('hex').slice(0, 32);
  const cookie = parseCookie(req.get('cookie') ?? '')[SESSION_COOKIE];
  if (cookie) return 'c:' + createHash('sha256').update(cookie).digest('hex').slice(0, 32);
  return 'ip:' + (req.ip ?? 'unknown');
}

function setHeaders(res: Response, limit: number, r: RateLimiterRes): void {
  res.setHeader('RateLimit-Limit', String(limit));
  res.setHeader('RateLimit-Remaining', String(Math.max(0, r.remainingPoints)));
  res.setHeader('RateLimit-Reset', String(Math.ceil(r.msBeforeNext / 1000)));
}

/**
 * Counts the request against its credential's budget and sets the RateLimit-* headers; over the
 * budget it answers 429 with Retry-After itself and resolves false.
 */
export async function consumeRateLimit(limiter: RateLimiterAbstract, req: Request, res: Response): Promise<boolean> {
  const limit = limiter.points;
  try {
    setHeaders(res, limit, await limiter.consume(limitKey(req), 1));
    return true;
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    setHeaders(res, limit, err);
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(err.msBeforeNext / 1000))));
    sendError(res, 429, 'rate_limited', `more than ${limit} requests per minute for this token; retry after the Retry-After header`);
    return false;
  }
}

export function rateLimitMiddleware(limiter: RateLimiterAbstract) {
  return (req: Request, res: Response, next: NextFunction) => {
    consumeRateLimit(limiter, req, res).then((ok) => ok && next(), next);
  };
}
