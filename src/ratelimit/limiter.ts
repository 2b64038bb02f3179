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
  res.set('RateLimit-Limit', String(limit));
  res.set('RateLimit-Remaining', String(Math.max(0, r.remainingPoints)));
  res.set('RateLimit-Reset', String(Math.ceil(r.msBeforeNext / 1000)));
}

export function rateLimitMiddleware(limiter: RateLimiterAbstract) {
  const limit = limiter.points;
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const r = await limiter.consume(limitKey(req), 1);
      setHeaders(res, limit, r);
      next();
    } catch (err) {
      if (err instanceof RateLimiterRes) {
        setHeaders(res, limit, err);
        res.set('Retry-After', String(Math.max(1, Math.ceil(err.msBeforeNext / 1000))));
        return sendError(res, 429, 'rate_limited', `more than ${limit} requests per minute for this token; retry after the Retry-After header`);
      }
      next(err);
    }
  };
}
