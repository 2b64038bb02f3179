// Who is calling: resolves the bearer token or the sign-in cookie, then the universe the request
// acts in (X-Universe, the token's own universe, or the user's personal one).
import { settings } from '../config.js';
import { prisma } from '../db/client.js';
import { rawRows } from '../db/raw-query.js';
import { AppError } from '../errors.js';
import { hashToken, TOKEN_PREFIX } from './tokens.js';
import { noteTokenUse } from './token-usage.js';
import { scopesIncluded, type Scope, SCOPES, isScope } from './scopes.js';
import type { Universe, User } from '../generated/prisma/client.js';

export const SESSION_COOKIE = 'as_session';

export interface Viewer {
  user: Pick<User, 'id' | 'email' | 'name' | 'isOwner'>;
  auth: 'token' | 'session';
  scopes: Scope[];
  tokenId: string | null;
  /** Set for universe-scoped tokens. */
  tokenUniverseId: string | null;
  tokenExpiresAt?: Date | null;
  universe: Universe;
}

export interface CallerCredentials {
  authorization?: string | null;
  sessionCookie?: string | null;
  universeSlug?: string | null;
  /** SHA-256 (hex) of the bearer when the caller already computed it: one hash per request. */
  bearerHash?: string | null;
}

const invalidToken = () => new AppError('invalid_token', 'missing, unknown, revoked or expired token');

export function bearerOf(authorization: string | null | undefined): string | null {
  if (!authorization) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return m ? m[1]! : '';
}

// Resolved bearer tokens are remembered briefly: most requests then cost no auth queries.
// Revocation clears this process's cache at once; other processes notice within the TTL.
const CACHE_TTL_MS = settings.authCacheTtlMs();
const CACHE_MAX = 10_000;
const cache = new Map<string, { viewer: Viewer; until: number; tokenExpiresAt: number | null }>();

export function clearViewerCache(): void {
  cache.clear();
}

/**
 * Returns the viewer, null when no credential was presented, or throws 401 for a bad one.
 * A bearer header wins over a cookie.
 */
export async function resolveViewer(creds: CallerCredentials): Promise<Viewer | null> {
  const bearer = bearerOf(creds.authorization);
  if (!bearer || CACHE_TTL_MS <= 0) {
    const viewer = await resolveUncached(creds);
    if (viewer?.tokenId) noteTokenUse(viewer.tokenId);
    return viewer;
  }
  const hash = creds.bearerHash ?? hashToken(bearer);
  const key = `${hash}|${creds.universeSlug?.trim() ?? ''}`;
  const now = Date.now();
  const hit = cache.get(key);
  if (hit && hit.until > now && (hit.tokenExpiresAt === null || hit.tokenExpiresAt > now)) {
    if (hit.viewer.tokenId) noteTokenUse(hit.viewer.tokenId, now);
    return hit.viewer;
  }
  const viewer = await resolveUncached({ ...creds, bearerHash: hash });
  if (viewer?.tokenId) noteTokenUse(viewer.tokenId, now);
  if (viewer) {
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(key, { viewer, until: now + CACHE_TTL_MS, tokenExpiresAt: viewer.tokenExpiresAt?.getTime() ?? null });
  }
  return viewer;
}

// A bearer token, its user and the universe the request acts in, in ONE statement: the token's
// own universe, else the user's universe named by X-Universe ($2), else the personal one.
const TOKEN_VIEWER_SQL = `
  SELECT t.id AS "tokenId", t.scope, t."universeId" AS "tokenUniverseId", t."expiresAt", t."revokedAt",
         usr.id AS "userId", usr.email, usr.name AS "userName", usr."isOwner",
         u.id AS "universeId", u.slug, u.name AS "universeName", u."isPersonal", u."balanceNanoUsd", u."heldNanoUsd",
         u."ownerId", u."createdAt" AS "universeCreatedAt"
    FROM "ApiToken" t
    JOIN "User" usr ON usr.id = t."userId"
    LEFT JOIN "Universe" u ON u.id = COALESCE(t."universeId", (
         SELECT p.id FROM "Universe" p
          WHERE p."ownerId" = t."userId" AND (CASE WHEN $2::text IS NULL THEN p."isPersonal" ELSE p.slug = $2::text END)
          LIMIT 1))
   WHERE t."tokenHash" = $1`;

interface TokenViewerRow {
  tokenId: string;
  scope: string;
  tokenUniverseId: string | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  userId: string;
  email: string;
  userName: string | null;
  isOwner: boolean;
  universeId: string | null;
  slug: string;
  universeName: string;
  isPersonal: boolean;
  balanceNanoUsd: bigint | string;
  heldNanoUsd: bigint | string;
  ownerId: string;
  universeCreatedAt: Date;
}

async function tokenViewer(bearer: string, bearerHash: string | null | undefined, universeSlug: string | undefined): Promise<Viewer> {
  if (!bearer.startsWith(TOKEN_PREFIX)) throw invalidToken();
  const [row] = await rawRows<TokenViewerRow>('token_viewer', TOKEN_VIEWER_SQL, [bearerHash ?? hashToken(bearer), universeSlug || null]);
  if (!row || row.revokedAt || (row.expiresAt && row.expiresAt <= new Date())) throw invalidToken();
  if (!isScope(row.scope)) throw invalidToken();
  const universe: Universe | null =
    row.universeId === null
      ? null
      : {
          id: row.universeId,
          slug: row.slug,
          name: row.universeName,
          isPersonal: row.isPersonal,
          balanceNanoUsd: BigInt(row.balanceNanoUsd),
          heldNanoUsd: BigInt(row.heldNanoUsd),
          ownerId: row.ownerId,
          createdAt: row.universeCreatedAt,
        };
  if (universeSlug && row.tokenUniverseId && universe!.slug !== universeSlug)
    throw new AppError('universe_mismatch', "X-Universe conflicts with the token's universe");
  if (!universe) throw new AppError('not_found', universeSlug ? `universe ${universeSlug} not found` : 'universe not found');
  return {
    user: { id: row.userId, email: row.email, name: row.userName, isOwner: row.isOwner },
    auth: 'token',
    scopes: scopesIncluded(row.scope),
    tokenId: row.tokenId,
    tokenUniverseId: row.tokenUniverseId,
    tokenExpiresAt: row.expiresAt,
    universe,
  };
}

async function resolveUncached(creds: CallerCredentials): Promise<Viewer | null> {
  const bearer = bearerOf(creds.authorization);
  if (bearer !== null) return tokenViewer(bearer, creds.bearerHash, creds.universeSlug?.trim());
  const now = new Date();
  let base: Omit<Viewer, 'universe'>;
  if (creds.sessionCookie) {
    const session = await prisma.webSession.findUnique({
      where: { tokenHash: hashToken(creds.sessionCookie) },
      include: { user: true },
    });
    if (!session || session.expiresAt <= now) throw invalidToken();
    base = { user: session.user, auth: 'session', scopes: [...SCOPES], tokenId: null, tokenUniverseId: null };
  } else {
    return null;
  }

  const slug = creds.universeSlug?.trim();
  const universe = slug
    ? await prisma.universe.findFirst({ where: { slug, ownerId: base.user.id } })
    : await prisma.universe.findFirst({ where: { ownerId: base.user.id, isPersonal: true } });
  if (!universe) throw new AppError('not_found', slug ? `universe ${slug} not found` : 'universe not found');
  return { ...base, universe };
}

export function hasScope(viewer: Viewer | null, scope: Scope): boolean {
  return !!viewer && viewer.scopes.includes(scope);
}
