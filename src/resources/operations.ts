// The session-resource endpoints' rules: add (files only), list, get, rotate a repository
// token, delete a file resource (and its copy inside the sandbox).
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { seal } from '../crypto/secret-box.js';
import { assertNoConflict, EgressHeaderConflictError, publishPolicyChange, sessionRules } from '../egress/session-policy.js';
import type { Viewer } from '../auth/viewer.js';
import { resolveSession } from '../sessions/sessions.js';
import { sandboxDriver } from '../sandbox/current-driver.js';
import { insertPlanned, planResources } from './resources.js';
import type { ResourceInput } from './contract.js';
import { decodePageToken, encodePageToken } from '../pagination/page-token.js';

export async function addResource(viewer: Viewer, sessionRef: string, body: ResourceInput) {
  const session = await resolveSession(viewer, sessionRef);
  if (body.type === 'memory_store')
    throw new AppError('invalid_request', 'memory stores mount at session create only; they cannot be added to a session later');
  if (body.type !== 'file') throw new AppError('invalid_request', 'repositories attach at session create and stay for its lifetime; add file resources here');
  if (session.status === 'terminated') throw new AppError('session_archived', 'the session is archived');
  const existing = await prisma.sessionResource.findMany({ where: { sessionId: session.id } });
  const [created] = await insertPlanned(await planResources(session.universeId, session.id, [body], existing));
  return created!;
}

export async function listResources(viewer: Viewer, sessionRef: string, limit: number | null, page: string | null) {
  const after = page ? decodePageToken('resources', page) : null;
  const session = await resolveSession(viewer, sessionRef);
  const rows = await prisma.sessionResource.findMany({
    where: { sessionId: session.id, ...(after ? { id: { gt: after } } : {}) },
    orderBy: { id: 'asc' },
    ...(limit ? { take: limit + 1 } : {}),
  });
  if (!limit) return { data: rows, nextPage: null };
  const slice = rows.slice(0, limit);
  return { data: slice, nextPage: rows.length > limit ? encodePageToken('resources', slice[slice.length - 1]!.id) : null };
}

export async function getResource(viewer: Viewer, sessionRef: string, rid: string) {
  const session = await resolveSession(viewer, sessionRef);
  const r = await prisma.sessionResource.findFirst({ where: { id: rid, sessionId: session.id } });
  if (!r) throw new AppError('not_found', 'session resource not found');
  return r;
}

export async function rotateToken(viewer: Viewer, sessionRef: string, rid: string, body: { authorization_token: string }) {
  const r = await getResource(viewer, sessionRef, rid);
  if (r.type !== 'github_repository') throw new AppError('invalid_request', 'only a repository resource has a token to rotate');
  // The policy the new token would make: another repository's token or an agent secret that
  // sets a different Authorization header on the same host is a conflict.
  try {
    assertNoConflict(await sessionRules(r.sessionId, { resourceId: r.id, token: body.authorization_token }));
  } catch (err) {
    if (err instanceof EgressHeaderConflictError) throw new AppError('egress_header_conflict', err.message);
    throw err;
  }
  const updated = await prisma.sessionResource.update({ where: { id: r.id }, data: { tokenSealed: seal(body.authorization_token), updatedAt: new Date() } });
  // Every process's copy of the session's egress policy is dropped: the next request the
  // sandbox makes carries the new token. Nothing inside the sandbox changes.
  await publishPolicyChange(r.sessionId);
  return updated;
}

export async function deleteResource(viewer: Viewer, sessionRef: string, rid: string) {
  const r = await getResource(viewer, sessionRef, rid);
  if (r.type !== 'file') throw new AppError('invalid_request', "repository and memory store resources stay for the session's lifetime");
  await prisma.sessionResource.delete({ where: { id: r.id } });
  if (r.fileId) await prisma.file.updateMany({ where: { id: r.fileId }, data: { deletedAt: new Date() } });
  // Unlinked from the sandbox now, so the next turn cannot see it.
  const sandbox = await sandboxDriver().get(r.sessionId);
  if (sandbox) await sandbox.remove(r.mountPath).catch(() => undefined);
  return r;
}
