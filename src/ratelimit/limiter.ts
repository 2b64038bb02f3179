// 120 requests per minute per token (rate-limiter-flexible): in memory by default, in Redis when
// REDIS_URL is set so every process shares one count.
import { rateLimitRefusals } from '../telemetry/metrics.js';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Request, Response, NextFunction } from 'express';
import { createHash } from 'node:crypto';
import { parse as parseCookie } from 'cookie';
import type { Redis } from 'ioredis';
import { sendError } from '../wire/error-envelope.js';
import { bearerOf, SESSION_COOKIE } from '../auth/viewer.js';
import { hashToken } from '../auth/tokens.js';
import { batchedConsume, type ConsumeOne, type LimitDecision } from './batched-consume.js';

export function createLimiter(perMinute: number, redis?: Redis): RateLimiterAbstract {
  const opts = { points: perMinute, duration: 60, keyPrefix: 'rl' };
  return redis ? new RateLimiterRedis({ ...opts, storeClient: redis, insuranceLimiter: new RateLimiterMemory(opts) }) : new RateLimiterMemory(opts);
}

/**
 * The rate-limit key: a hash of the credential (never the credential itself), else the address.
 * `bearerHash`: the bearer's SHA-256 (hex) when the caller has already computed it (the REST
 * dispatcher hashes it once for this key and the token lookup).
 */
export function limitKey(req: Request, bearerHash?: string | null): string {
  if (bearerHash) return 't:' + bearerHash.slice(0, 32);
  const bearer = bearerOf(req.get('authorization'));
  if (bearer) return 't:' + hashToken(bearer).slice(0, 32);
  const cookie = parseCookie(req.get('cookie') ?? '')[SESSION_COOKIE];
  if (cookie) return 'c:' + createHash('sha256').update(cookie).digest('hex').slice(0, 32);
  return 'ip:' + (req.ip ?? 'unknown');
}

// What a budget's key counts (limitKey's prefixes), as the 429 names it.
const WHOSE: Record<string, string> = { t: 'token', c: 'sign-in session', ip: 'address' };

function setHeaders(res: Response, limit: number, d: LimitDecision): void {
  res.setHeader('RateLimit-Limit', String(limit));
  res.setHeader('RateLimit-Remaining', String(d.remaining));
  res.setHeader('RateLimit-Reset', String(Math.ceil(d.msBeforeNext / 1000)));
}

/** Counts requests against a limiter (batched per turn of the event loop: batched-consume.ts). */
export interface RateCounter {
  limit: number;
  consume: ConsumeOne;
}

export function rateCounter(limiter: RateLimiterAbstract): RateCounter {
  return { limit: limiter.points, consume: batchedConsume(limiter) };
}

/**
 * Counts the request against its credential's budget and sets the RateLimit-* headers; over the
 * budget it answers 429 with Retry-After itself and resolves false.
 */
export async function consumeRateLimit(counter: RateCounter, key: string, res: Response): Promise<boolean> {
  const { limit } = counter;
  const decision = await counter.consume(key);
  setHeaders(res, limit, decision);
  if (decision.allowed) return true;
  rateLimitRefusals.inc();
  res.setHeader('Retry-After', String(Math.max(1, Math.ceil(decision.msBeforeNext / 1000))));
  sendError(
    res,
    429,
    'rate_limited',
    `more than ${limit} requests per minute for this ${WHOSE[key.slice(0, key.indexOf(':'))] ?? 'client'}; retry after the Retry-After header`,
  );
  return false;
}

export function rateLimitMiddleware(limiter: RateLimiterAbstract) {
  const counter = rateCounter(limiter);
  return (req: Request, res: Response, next: NextFunction) => {
    consumeRateLimit(counter, limitKey(req), res).then((ok) => ok && next(), next);
  };
}
