// Records when an API token was last used (the dashboard's "Last used" column). A write per
// request would double the cost of the hot, cached reads, so each process writes a token's
// lastUsedAt at most once per interval (a minute by default): the column is minute-accurate.
import { settings } from '../config.js';
import { prisma } from '../db/client.js';
import { logger } from '../logger.js';

const INTERVAL_MS = settings.tokenLastUsedIntervalMs();
const MAX_TRACKED = 10_000;
const lastWritten = new Map<string, number>();

/** Notes that `tokenId` authenticated a request now; writes it when the last write is old enough. */
export function noteTokenUse(tokenId: string, now = Date.now()): void {
  const prev = lastWritten.get(tokenId);
  if (prev !== undefined && now - prev < INTERVAL_MS) return;
  if (lastWritten.size >= MAX_TRACKED) lastWritten.clear();
  lastWritten.set(tokenId, now);
  // Not awaited: the request does not wait for bookkeeping; a failed write is retried next interval.
  prisma.apiToken.updateMany({ where: { id: tokenId }, data: { lastUsedAt: new Date(now) } }).catch((err: unknown) => {
    lastWritten.delete(tokenId);
    logger.warn({ err, tokenId }, "could not record the token's last use");
  });
}
