// Memories and their versions: every change (by a user over the API, or by a session's writes
// read back from its sandbox) goes through `applyChange`, which updates the memory and records
// one immutable version in the same transaction. Edits by a user carry the content hash they
// were made from, so an agent's newer write is never silently overwritten (409).
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { Viewer } from '../auth/viewer.js';
import { Prisma, type Memory, type MemoryStore, type MemoryVersion } from '../generated/prisma/client.js';
import { expectedContentSha256, type CreateMemoryBody, type MemoryActor, type MemoryOperation, type PatchMemoryBody } from './contract.js';
import { sha256 } from './paths.js';
import { findMemoryStore } from './stores.js';
import { nudgeDispatchers, queueResourceEvent, queueWebhookEvents } from '../webhooks/outbox.js';

type Tx = Prisma.TransactionClient;

const WEBHOOK_TYPE = { created: 'memory.created', modified: 'memory.updated', deleted: 'memory.deleted' } as const;

/** Every memory change runs here: one transaction, then the webhook dispatchers are woken. */
export async function memoryTransaction<T>(change: (tx: Tx) => Promise<T>): Promise<T> {
  const value = await prisma.$transaction(change);
  nudgeDispatchers();
  return value;
}

const memoryNotFound = () => new AppError('not_found', 'memory not found');
const versionNotFound = () => new AppError('not_found', 'memory version not found');
const isUniqueViolation = (err: unknown) => (err as { code?: string } | null)?.code === 'P2002';

export const userActor = (viewer: Viewer): MemoryActor => ({ type: 'user', user_id: viewer.user.id });

async function versionRow(
  tx: Tx,
  memory: Pick<Memory, 'id' | 'storeId'>,
  operation: MemoryOperation,
  state: { path: string; content: string | null },
  actor: MemoryActor,
): Promise<MemoryVersion> {
  // The webhook event goes out with the change (same transaction); dispatchers are nudged after commit.
  const store = await tx.memoryStore.findUniqueOrThrow({ where: { id: memory.storeId }, select: { universeId: true } });
  await queueResourceEvent(tx, store.universeId, WEBHOOK_TYPE[operation], { type: 'memory', id: memory.id });
  return tx.memoryVersion.create({
    data: {
      id: newId('memver'),
      storeId: memory.storeId,
      memoryId: memory.id,
      operation,
      path: state.path,
      content: state.content,
      contentSha256: state.content === null ? null : sha256(state.content),
      sizeBytes: state.content === null ? null : Buffer.byteLength(state.content, 'utf8'),
      actorType: actor.type,
      actorId: actor.type === 'session' ? actor.session_id : actor.user_id,
    },
  });
}

const contentFields = (content: string) => ({ content, contentSha256: sha256(content), sizeBytes: Buffer.byteLength(content, 'utf8') });

/**
 * Writes `content` at `path` (null deletes it) as `actor`: a new memory, a new version of the one
 * at that path, or its deletion. The later write wins; nothing changes (and no version is
 * recorded) when the content is the same.
 */
export async function applyChange(tx: Tx, storeId: string, path: string, content: string | null, actor: MemoryActor): Promise<MemoryVersion | null> {
  const current = await tx.memory.findUnique({ where: { storeId_path: { storeId, path } } });
  if (content === null) {
    if (!current) return null;
    await tx.memory.delete({ where: { id: current.id } });
    return versionRow(tx, current, 'deleted', { path, content: null }, actor);
  }
  if (current) {
    if (current.contentSha256 === sha256(content)) return null;
    await tx.memory.update({ where: { id: current.id }, data: contentFields(content) });
    return versionRow(tx, current, 'modified', { path, content }, actor);
  }
  const created = await tx.memory.create({ data: { id: newId('mem'), storeId, path, ...contentFields(content) } });
  return versionRow(tx, created, 'created', { path, content }, actor);
}

/**
 * `applyChange` for many paths of one store at once (a session's read-back: one transaction per
 * turn), in a fixed number of statements whatever their count: the memories created, updated
 * and deleted, their versions and webhook events each written in one. `changes` name each path
 * once. Returns how many versions were recorded.
 */
export async function applyChanges(tx: Tx, storeId: string, changes: { path: string; content: string | null }[], actor: MemoryActor): Promise<number> {
  if (!changes.length) return 0;
  const currents = await tx.memory.findMany({
    where: { storeId, path: { in: changes.map((c) => c.path) } },
    select: { id: true, path: true, contentSha256: true },
  });
  const byPath = new Map(currents.map((c) => [c.path, c]));
  const creates: Prisma.MemoryCreateManyInput[] = [];
  const updates: { id: string; content: string; contentSha256: string; sizeBytes: number }[] = [];
  const deletes: string[] = [];
  const versions: Prisma.MemoryVersionCreateManyInput[] = [];
  const actorFields = { actorType: actor.type, actorId: actor.type === 'session' ? actor.session_id : actor.user_id };
  for (const c of changes) {
    const current = byPath.get(c.path);
    if (c.content === null) {
      if (!current) continue;
      deletes.push(current.id);
      versions.push({
        id: newId('memver'),
        storeId,
        memoryId: current.id,
        operation: 'deleted',
        path: c.path,
        content: null,
        contentSha256: null,
        sizeBytes: null,
        ...actorFields,
      });
      continue;
    }
    const fields = contentFields(c.content);
    let memoryId: string;
    let operation: MemoryOperation;
    if (current) {
      if (current.contentSha256 === fields.contentSha256) continue;
      updates.push({ id: current.id, ...fields });
      memoryId = current.id;
      operation = 'modified';
    } else {
      memoryId = newId('mem');
      creates.push({ id: memoryId, storeId, path: c.path, ...fields });
      operation = 'created';
    }
    versions.push({ id: newId('memver'), storeId, memoryId, operation, path: c.path, ...fields, ...actorFields });
  }
  if (!versions.length) return 0;
  if (deletes.length) await tx.memory.deleteMany({ where: { id: { in: deletes } } });
  if (creates.length) await tx.memory.createMany({ data: creates });
  if (updates.length) {
    const rows = updates.map((u) => Prisma.sql`(${u.id}, ${u.content}, ${u.contentSha256}, ${u.sizeBytes}::int)`);
    await tx.$executeRaw`UPDATE "Memory" AS m SET "content" = v.content, "contentSha256" = v.sha, "sizeBytes" = v.size, "updatedAt" = now()
      FROM (VALUES ${Prisma.join(rows)}) AS v(id, content, sha, size) WHERE m."id" = v.id`;
  }
  await tx.memoryVersion.createMany({ data: versions });
  const store = await tx.memoryStore.findUniqueOrThrow({ where: { id: storeId }, select: { universeId: true } });
  const at = new Date().toISOString();
  await queueWebhookEvents(
    tx,
    store.universeId,
    versions.map((v) => ({ id: newId('evt'), type: WEBHOOK_TYPE[v.operation as MemoryOperation], createdAt: at, data: { type: 'memory', id: v.memoryId } })),
  );
  return versions.length;
}

async function writableStore(viewer: Viewer, storeId: string): Promise<MemoryStore> {
  const store = await findMemoryStore(viewer, storeId);
  if (store.archivedAt) throw new AppError('conflict', 'the memory store is archived');
  return store;
}

export async function findMemory(viewer: Viewer, storeId: string, memoryId: string): Promise<Memory> {
  await findMemoryStore(viewer, storeId);
  const memory = await prisma.memory.findFirst({ where: { id: memoryId, storeId } });
  if (!memory) throw memoryNotFound();
  return memory;
}

export async function findMemoryByPath(viewer: Viewer, storeId: string, path: string): Promise<Memory> {
  await findMemoryStore(viewer, storeId);
  const memory = await prisma.memory.findUnique({ where: { storeId_path: { storeId, path } } });
  if (!memory) throw memoryNotFound();
  return memory;
}

/** 409 when a memory already holds the path (edit that one, with its hash). */
export async function createMemory(viewer: Viewer, storeId: string, body: CreateMemoryBody): Promise<Memory> {
  const store = await writableStore(viewer, storeId);
  try {
    return await memoryTransaction(async (tx) => {
      const memory = await tx.memory.create({ data: { id: newId('mem'), storeId: store.id, path: body.path, ...contentFields(body.content) } });
      await versionRow(tx, memory, 'created', body, userActor(viewer));
      return memory;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('conflict', `a memory already exists at ${body.path}: update it with its content_sha256`);
    throw err;
  }
}

/** Content and/or path; 409 version_conflict when the memory's hash is no longer the expected one. */
export async function updateMemory(viewer: Viewer, storeId: string, memoryId: string, body: PatchMemoryBody): Promise<Memory> {
  await writableStore(viewer, storeId);
  try {
    return await memoryTransaction(async (tx) => {
      // The row is locked for the transaction: a session's read-back waits, then wins as the later write.
      const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM "Memory" WHERE id = ${memoryId} AND "storeId" = ${storeId} FOR UPDATE`;
      if (!rows.length) throw memoryNotFound();
      const current = await tx.memory.findUniqueOrThrow({ where: { id: memoryId } });
      if (current.contentSha256 !== body.expected_content_sha256) {
        throw new AppError('version_conflict', `the memory changed since content_sha256 ${body.expected_content_sha256}; it is now ${current.contentSha256}`);
      }
      const content = body.content ?? current.content;
      const path = body.path ?? current.path;
      if (content === current.content && path === current.path) return current;
      const updated = await tx.memory.update({ where: { id: current.id }, data: { path, ...contentFields(content) } });
      await versionRow(tx, updated, 'modified', { path, content }, userActor(viewer));
      return updated;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('conflict', `a memory already exists at ${body.path}`);
    throw err;
  }
}

export async function deleteMemory(viewer: Viewer, storeId: string, memoryId: string, expectedSha256: string | null): Promise<Memory> {
  // GraphQL's argument is a plain string (REST checks its query with the same schema).
  if (expectedSha256 !== null && !expectedContentSha256.safeParse(expectedSha256).success)
    throw new AppError('invalid_request', 'expectedContentSha256 must be 64 lower-case hex characters (a content_sha256)');
  await writableStore(viewer, storeId);
  return memoryTransaction(async (tx) => {
    const current = await tx.memory.findFirst({ where: { id: memoryId, storeId } });
    if (!current) throw memoryNotFound();
    if (expectedSha256 && current.contentSha256 !== expectedSha256) {
      throw new AppError('version_conflict', `the memory changed since content_sha256 ${expectedSha256}; it is now ${current.contentSha256}`);
    }
    await tx.memory.delete({ where: { id: current.id } });
    await versionRow(tx, current, 'deleted', { path: current.path, content: null }, userActor(viewer));
    return current;
  });
}

// ---- listing by path: `path_prefix` (a string prefix), `depth` (segments below the prefix's directory) ----

const PAGE_PREFIX = 'mempath:';

export function encodePathCursor(path: string): string {
  return Buffer.from(`${PAGE_PREFIX}${path}`).toString('base64url');
}

function decodePathCursor(token: string): string {
  const text = token.length <= 2000 && /^[A-Za-z0-9_-]+$/.test(token) ? Buffer.from(token, 'base64url').toString('utf8') : '';
  if (!text.startsWith(`${PAGE_PREFIX}/`)) throw new AppError('invalid_request', 'page is not a next_page value this service returned');
  return text.slice(PAGE_PREFIX.length);
}

const slashes = (s: string) => s.split('/').length - 1;

export interface MemoryListing {
  pathPrefix: string;
  depth: number | null;
  limit: number;
  page: string | null;
}

/** One page of the store's memories by path (content left out): one query. */
export async function listMemories(viewer: Viewer, storeId: string, q: MemoryListing): Promise<{ data: Omit<Memory, 'content'>[]; nextPage: string | null }> {
  if (!q.pathPrefix.startsWith('/')) throw new AppError('invalid_request', 'path_prefix must start with /');
  const store = await findMemoryStore(viewer, storeId);
  const after = q.page ? decodePathCursor(q.page) : null;
  const dir = q.pathPrefix.slice(0, q.pathPrefix.lastIndexOf('/') + 1);
  const maxSlashes = q.depth === null ? null : q.depth + slashes(dir) - 1;
  const rows = await prisma.$queryRaw<Omit<Memory, 'content'>[]>`
    SELECT id, "storeId", path, "contentSha256", "sizeBytes", "createdAt", "updatedAt" FROM "Memory"
     WHERE "storeId" = ${store.id}
       AND left(path, ${q.pathPrefix.length}::int) = ${q.pathPrefix}
       AND (${maxSlashes}::int IS NULL OR length(path) - length(replace(path, '/', '')) <= ${maxSlashes}::int)
       AND (${after}::text IS NULL OR path COLLATE "C" > ${after}::text COLLATE "C")
     ORDER BY path COLLATE "C"
     LIMIT ${q.limit + 1}`;
  const data = rows.slice(0, q.limit);
  return { data, nextPage: rows.length > q.limit ? encodePathCursor(data[data.length - 1]!.path) : null };
}

// ---- versions ----

export async function findVersion(viewer: Viewer, storeId: string, versionId: string): Promise<MemoryVersion> {
  await findMemoryStore(viewer, storeId);
  const version = await prisma.memoryVersion.findFirst({ where: { id: versionId, storeId } });
  if (!version) throw versionNotFound();
  return version;
}

/** A page of the store's versions (of one memory when `memoryId` is given), newest first. */
export async function listVersions(
  viewer: Viewer,
  storeId: string,
  memoryId: string | null,
  page: { where?: Prisma.MemoryVersionWhereInput; orderBy: Prisma.MemoryVersionOrderByWithRelationInput; take: number },
): Promise<MemoryVersion[]> {
  const store = await findMemoryStore(viewer, storeId);
  return prisma.memoryVersion.findMany({
    where: { ...page.where, storeId: store.id, ...(memoryId ? { memoryId } : {}) },
    orderBy: page.orderBy,
    take: page.take,
  });
}

/**
 * Makes the version's content the memory's again, as a new version by the user: the memory is
 * recreated (same id) when it was deleted. A redacted version or a deletion has nothing to restore.
 */
export async function restoreVersion(viewer: Viewer, storeId: string, versionId: string): Promise<Memory> {
  const version = await findVersion(viewer, storeId, versionId);
  await writableStore(viewer, storeId);
  if (version.redactedAt) throw new AppError('invalid_request', 'the version is redacted: there is nothing to restore');
  if (version.content === null || version.path === null)
    throw new AppError('invalid_request', 'the version records a deletion: restore a version that has content');
  const { content, path } = version;
  try {
    return await memoryTransaction(async (tx) => {
      const current = await tx.memory.findUnique({ where: { id: version.memoryId } });
      if (current) {
        const updated = await tx.memory.update({ where: { id: current.id }, data: { path, ...contentFields(content) } });
        await versionRow(tx, updated, 'modified', { path, content }, userActor(viewer));
        return updated;
      }
      const created = await tx.memory.create({ data: { id: version.memoryId, storeId, path, ...contentFields(content) } });
      await versionRow(tx, created, 'created', { path, content }, userActor(viewer));
      return created;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('conflict', `another memory holds ${path}: move or delete it first`);
    throw err;
  }
}

/** Content and path become null for good; the row (operation, actor, hash, size, time) stays. Idempotent. */
export async function redactVersion(viewer: Viewer, storeId: string, versionId: string): Promise<MemoryVersion> {
  const version = await findVersion(viewer, storeId, versionId);
  if (version.redactedAt) return version;
  return prisma.memoryVersion.update({ where: { id: version.id }, data: { content: null, path: null, redactedAt: new Date(), redactedBy: viewer.user.id } });
}
