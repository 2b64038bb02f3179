// The short-lived per-session credential a sandboxed command holds (AGENT_SERVICE_TOKEN): what it
// shows the egress proxy (Proxy-Authorization `session:<token>`) and the model gateway (as its
// API key) instead of any real key.
//
// Stateless: the session id and an expiry sealed with the service's SECRET_KEY (AES-GCM, so it
// cannot be forged or altered), which every API process sharing that key can verify, whichever
// one the sandbox's connection reaches. Revoked with the session: verification also requires
// the session to exist and not be terminated (looked up, then remembered for a few seconds).
import { open, seal } from '../crypto/secret-box.js';
import { prisma } from '../db/client.js';

const PREFIX = 'ast_sbx_';
const DEFAULT_TTL_MS = 24 * 60 * 60 * 1000;
const LIVE_CACHE_MS = 5_000;

/** A new credential for `sessionId`, valid for `ttlMs` (default 24 h) unless the session ends first. */
export function issueSessionCredential(sessionId: string, ttlMs = DEFAULT_TTL_MS): string {
  return PREFIX + Buffer.from(seal(`${sessionId}\n${Date.now() + ttlMs}`)).toString('base64url');
}

/** The session a credential was issued for, if it is well-formed, unexpired and untampered; no database read. */
export function credentialSession(token: string): string | null {
  if (!token.startsWith(PREFIX) || token.length > 1024) return null;
  let plain: string;
  try {
    plain = open(Buffer.from(token.slice(PREFIX.length), 'base64url').toString());
  } catch {
    return null;
  }
  const [sessionId, expires] = plain.split('\n');
  if (!sessionId || !expires || !(Number(expires) > Date.now())) return null;
  return sessionId;
}

const live = new Map<string, { alive: boolean; until: number }>();

/** Whether the session still exists and is not terminated (cached briefly: one read per session per few seconds). */
async function sessionAlive(sessionId: string): Promise<boolean> {
  const hit = live.get(sessionId);
  if (hit && hit.until > Date.now()) return hit.alive;
  const row = await prisma.session.findUnique({ where: { id: sessionId }, select: { status: true } });
  if (!row) return false; // not remembered: a sandbox made ahead holds the id before its session exists
  const alive = row.status !== 'terminated';
  if (live.size > 10_000) live.clear();
  live.set(sessionId, { alive, until: Date.now() + LIVE_CACHE_MS });
  return alive;
}

/** The session id of a valid credential whose session still runs, else null. */
export async function verifySessionCredential(token: string): Promise<string | null> {
  const sessionId = credentialSession(token);
  if (!sessionId) return null;
  return (await sessionAlive(sessionId)) ? sessionId : null;
}

/** Forgets what is remembered about a session (it was archived or deleted here: refuse at once). */
export function revokeSessionCredentials(sessionId: string): void {
  live.set(sessionId, { alive: false, until: Date.now() + LIVE_CACHE_MS });
}
