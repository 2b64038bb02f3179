// Who is calling: resolves the bearer token or the sign-in cookie, then the universe the request
// acts in (X-Universe, the token's own universe, or the user's personal one).
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { hashToken, TOKEN_PREFIX } from './tokens.js';
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
}

const invalidToken = () => new AppError('invalid_token', 'missing, unknown, revoked or expired token');

export function bearerOf(authorization: string | null | undefined): string | null {
  if (!authorization) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return m ? m[1]! : '';
}

// Resolved bearer tokens are remembered briefly: most requests then cost no auth queries.
// Revocation clears this process's cache at once; other processes notice within the TTL.
const CACHE_TTL_MS = Number(process.env.AUTH_CACHE_TTL_MS ?? 5_000);
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
  if (!bearer || CACHE_TTL_MS <= 0) return resolveUncached(creds);
  const key = `${hashToken(bearer)}|${creds.universeSlug?.trim() ?? ''}`;
  const now = Date.now();
  const hit = cache.get(key);
  if (hit && hit.until > now && (hit.tokenExpiresAt === null || hit.tokenExpiresAt > now)) return hit.viewer;
  const viewer = await resolveUncached(creds);
  if (viewer) {
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(key, { viewer, until: now + CACHE_TTL_MS, tokenExpiresAt: viewer.tokenExpiresAt?.getTime() ?? null });
  }
  return viewer;
}

async function resolveUncached(creds: CallerCredentials): Promise<Viewer | null> {
  const bearer = bearerOf(creds.authorization);
  const now = new Date();
  let base: Omit<Viewer, 'universe'> & { universe?: Universe | null };
  if (bearer !== null) {
    if (!bearer.startsWith(TOKEN_PREFIX)) throw invalidToken();
    const token = await prisma.apiToken.findUnique({
      where: { tokenHash: hashToken(bearer) },
      include: { user: true, universe: true },
    });
    if (!token || token.revokedAt || (token.expiresAt && token.expiresAt <= now)) throw invalidToken();
    if (!isScope(token.scope)) throw invalidToken();
    base = {
      user: token.user,
      auth: 'token',
      scopes: scopesIncluded(token.scope),
      tokenId: token.id,
      tokenUniverseId: token.universeId,
      tokenExpiresAt: token.expiresAt,
      universe: token.universe,
    };
  } else if (creds.sessionCookie) {
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
  let universe: Universe | null;
  if (slug) {
    if (base.tokenUniverseId) {
      if (base.universe!.slug !== slug) throw new AppError('universe_mismatch', 'X-Universe conflicts with the token\'s universe');
      universe = base.universe!;
    } else {
      universe = await prisma.universe.findFirst({ where: { slug, ownerId: base.user.id } });
      if (!universe) throw new AppError('not_found', `universe ${slug} not found`);
    }
  } else if (base.tokenUniverseId) {
    universe = base.universe!;
  } else {
    universe = await prisma.universe.findFirst({ where: { ownerId: base.user.id, isPersonal: true } });
  }
  if (!universe) throw new AppError('not_found', 'universe not found');
  return { ...base, universe };
}

export function hasScope(viewer: Viewer | null, scope: Scope): boolean {
  return !!viewer && viewer.scopes.includes(scope);
}
