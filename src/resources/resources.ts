// Session resources: files copied read-only into /workspace and repositories cloned there.
// Records are written at create/add; the sandbox receives them before the session's next turn.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { prisma } from '../db/client.js';
import { batched } from '../db/batched.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { seal, open } from '../crypto/secret-box.js';
import { blobStore } from '../blobs/blob-store.js';
import { sessionCopyOf } from '../files/files.js';
import type { Sandbox } from '../sandbox/driver.js';
import type { SessionResource } from '../generated/prisma/client.js';
import { cloneRepository, checkRepositoryAccess } from './clone.js';
import { MAX_REPOSITORIES, MAX_RESOURCES, normalizeMountPath, overlaps, parseRepoUrl } from './rules.js';
import type { ResourceInput, SessionResourceView } from './contract.js';
import { logger } from '../logger.js';
import { agentSecretRules, assertNoConflict, EgressHeaderConflictError } from '../egress/session-policy.js';
import { repositoryRule } from '../egress/declarations.js';
import { hostKeyOfUrl } from '../egress/policy.js';
import { checkMemoryMountCount, memoryMountView, planMemoryMount, syncMemoryMountsIn } from '../memory/mount.js';

/** A stored resource as the spec shows it (the token is never part of it). */
export function resourceView(r: SessionResource): SessionResourceView {
  const base = { id: r.id, mount_path: r.mountPath, created_at: r.createdAt.toISOString(), updated_at: r.updatedAt.toISOString() };
  if (r.type === 'file') return { ...base, type: 'file', file_id: r.fileId ?? '' };
  if (r.type === 'memory_store') return memoryMountView(r, base);
  const checkout = r.checkout as SessionResourceView extends infer V ? (V extends { checkout?: infer C } ? C : never) : never;
  return { ...base, type: 'github_repository', url: r.url ?? '', ...(checkout ? { checkout } : {}) };
}

/** Set only on memory_store mounts. */
type MountFields = 'memoryStoreId' | 'access' | 'instructions' | 'memorySnapshot';

interface Planned {
  row: Omit<SessionResource, 'createdAt' | 'updatedAt' | 'syncedAt' | MountFields> & Partial<Pick<SessionResource, MountFields>>;
  sourceFileId?: string;
}

/** Validates new resources against the session's existing ones; copies files; checks repositories. */
/**
 * `agentId`: the session's agent, whose secrets that declare a host take part in the
 * egress_header_conflict check against the repository tokens (session create passes it).
 */
export async function planResources(
  universeId: string,
  sessionId: string,
  inputs: ResourceInput[],
  existing: SessionResource[],
  opts: { agentId?: string | null } = {},
): Promise<Planned[]> {
  const repos = existing.filter((r) => r.type === 'github_repository').length + inputs.filter((i) => i.type === 'github_repository').length;
  if (existing.length + inputs.length > MAX_RESOURCES || repos > MAX_REPOSITORIES) {
    throw new AppError('too_many_resources', `a session holds at most ${MAX_RESOURCES} resources and ${MAX_REPOSITORIES} repositories`);
  }
  const mounts = existing.map((r) => r.mountPath);
  const tokensByHost = new Map<string, string>();
  for (const r of existing) if (r.type === 'github_repository' && r.tokenSealed) tokensByHost.set(new URL(r.url!).host, open(r.tokenSealed));
  const planned: Planned[] = [];
  checkMemoryMountCount(inputs);
  for (const input of inputs) {
    let mountPath: string;
    const id = newId('sesrsc');
    if (input.type === 'memory_store') {
      const row = await planMemoryMount(universeId, sessionId, id, input, mounts);
      mounts.push(row.mountPath);
      planned.push({ row });
    } else if (input.type === 'file') {
      const upload = await prisma.file.findFirst({
        where: { id: input.file_id, universeId, sessionId: null, deletedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }] },
      });
      if (!upload) throw new AppError('not_found', `file ${input.file_id} not found`);
      mountPath = normalizeMountPath(input.mount_path ?? `/${upload.id}`);
      if (mounts.some((m) => overlaps(m, mountPath))) throw new AppError('invalid_request', `mount_path ${mountPath} overlaps another resource`);
      mounts.push(mountPath);
      planned.push({ row: { id, sessionId, type: 'file', fileId: null, url: null, mountPath, checkout: null, tokenSealed: null }, sourceFileId: upload.id });
    } else {
      const repo = parseRepoUrl(input.url);
      mountPath = normalizeMountPath(input.mount_path ?? `/${repo.repo}`);
      if (mounts.some((m) => overlaps(m, mountPath))) throw new AppError('invalid_request', `mount_path ${mountPath} overlaps another resource`);
      mounts.push(mountPath);
      if (input.authorization_token) {
        const other = tokensByHost.get(repo.host);
        if (other !== undefined && other !== input.authorization_token) {
          throw new AppError('egress_header_conflict', `two repository tokens would set different Authorization headers for ${repo.host}`);
        }
        tokensByHost.set(repo.host, input.authorization_token);
      }
      if (input.authorization_token && opts.agentId) {
        try {
          assertNoConflict([...(await agentSecretRules(opts.agentId)), repositoryRule(id, hostKeyOfUrl(repo.url), input.authorization_token)]);
        } catch (err) {
          if (err instanceof EgressHeaderConflictError) throw new AppError('egress_header_conflict', err.message);
          throw err;
        }
      }
      await checkRepositoryAccess(repo.url, input.authorization_token ?? null);
      planned.push({
        row: {
          id,
          sessionId,
          type: 'github_repository',
          fileId: null,
          url: repo.url,
          mountPath,
          checkout: (input.checkout ?? null) as never,
          tokenSealed: input.authorization_token ? seal(input.authorization_token) : null,
        },
      });
    }
  }
  // Files are copied last, once everything validated: a copy is the session's own.
  for (const p of planned) {
    if (p.sourceFileId) {
      const source = await prisma.file.findUniqueOrThrow({ where: { id: p.sourceFileId } });
      p.row.fileId = (await sessionCopyOf(universeId, sessionId, source)).id;
    }
  }
  return planned;
}

export async function insertPlanned(planned: Planned[]): Promise<SessionResource[]> {
  const out: SessionResource[] = [];
  for (const p of planned) out.push(await prisma.sessionResource.create({ data: { ...p.row, checkout: p.row.checkout ?? undefined } as never }));
  return out;
}

/**
 * Gives the sandbox every resource it has not received yet (before a turn, after provisioning);
 * `memory: false` leaves the memory stores to the next turn's write-in.
 */
// Turns starting together read their sessions' resources in one statement (src/db/batched.ts).
const resourcesOf = batched(async (sessionIds: string[]): Promise<SessionResource[][]> => {
  const rows = await prisma.sessionResource.findMany({ where: { sessionId: { in: sessionIds } }, orderBy: { createdAt: 'asc' } });
  const of = new Map<string, SessionResource[]>(sessionIds.map((id) => [id, []]));
  for (const r of rows) of.get(r.sessionId)?.push(r);
  return sessionIds.map((id) => of.get(id) ?? []);
});

export async function syncResources(sessionId: string, sandbox: Sandbox, opts: { memory?: boolean } = {}): Promise<SessionResource[]> {
  // One read of the session's resources: those not given yet, and whether any memory store is mounted.
  const all = await resourcesOf(sessionId);
  const pending = all.filter((r) => r.syncedAt === null && r.type !== 'memory_store');
  for (const r of pending) {
    if (r.type === 'file') {
      const f = await prisma.file.findUnique({ where: { id: r.fileId! } });
      if (!f) continue;
      await sandbox.writeFile(r.mountPath, await blobStore().read(f.blobKey), { readOnly: true });
    } else {
      await placeRepository(sandbox, r);
    }
    await prisma.sessionResource.update({ where: { id: r.id }, data: { syncedAt: new Date() } });
    logger.info({ sessionId, resource: r.id, type: r.type }, 'session resource materialised');
  }
  // Memory stores are written in before every turn: other sessions' writes since the last one.
  if (opts.memory !== false)
    await syncMemoryMountsIn(
      sessionId,
      sandbox,
      all.some((r) => r.type === 'memory_store'),
    );
  return all;
}

/**
 * Clones a repository outside the sandbox (the token never enters it): straight into the
 * workspace where the driver has it on this host, else into a temporary directory whose tree
 * is then copied in (a pod).
 */
async function placeRepository(sandbox: Sandbox, r: SessionResource): Promise<void> {
  const token = r.tokenSealed ? open(r.tokenSealed) : null;
  const checkout = r.checkout as Parameters<typeof cloneRepository>[0]['checkout'];
  if (sandbox.hostWorkspace) {
    const dest = path.join(sandbox.hostWorkspace, r.mountPath.slice('/workspace/'.length));
    await cloneRepository({ url: r.url!, token, dest, checkout });
    return;
  }
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'repo-clone-'));
  try {
    await cloneRepository({ url: r.url!, token, dest: path.join(tmp, 'repo'), checkout });
    await sandbox.importTree(path.join(tmp, 'repo'), r.mountPath);
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}
