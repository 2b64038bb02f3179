// Memory stores mounted into a session (issue #30): planned at session create (at most 8, the
// mount path chosen here: /workspace/memory/<store name>), written into the sandbox before every
// turn, and read back after every turn: what the agent changed becomes new versions by the
// session, in one transaction; a file breaking the limits is a session.error naming its path
// while the rest is kept. A read_only mount is bound read-only by the jail; anything changed
// there anyway is reported and not kept.
import fs from 'node:fs/promises';
import path from 'node:path';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { logger } from '../logger.js';
import { commitEvents } from '../events/store.js';
import type { NewEvent } from '../events/types.js';
import type { Prisma, SessionResource } from '../generated/prisma/client.js';
import type { Sandbox } from '../sandbox/driver.js';
import { sandboxDriver } from '../sandbox/current-driver.js';
import type { ResourceInput, SessionResourceView } from '../resources/contract.js';
import { applyChange, memoryTransaction } from './memories.js';
import { MAX_CONTENT_BYTES, MAX_STORES_PER_SESSION, pathProblem, sha256 } from './paths.js';
import { memoryStoreForMount } from './stores.js';

export const MEMORY_ROOT = '/workspace/memory';

type MemoryInput = Extract<ResourceInput, { type: 'memory_store' }>;
/** {memory path: content_sha256} of what the sandbox was last given. */
type Snapshot = Record<string, string>;

/** 400 for more than 8 stores or one store twice. */
export function checkMemoryMountCount(inputs: ResourceInput[]): void {
  const ids = inputs.filter((i): i is MemoryInput => i.type === 'memory_store').map((i) => i.memory_store_id);
  if (ids.length > MAX_STORES_PER_SESSION) {
    throw new AppError('too_many_resources', `a session mounts at most ${MAX_STORES_PER_SESSION} memory stores (they cannot be added later either)`);
  }
  if (new Set(ids).size !== ids.length) throw new AppError('invalid_request', 'a memory store is listed twice');
}

/** The store name as a directory name: lower case letters, digits, `-`, `_` and `.`. */
function slugOf(name: string): string {
  return name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 64);
}

const overlaps = (a: string, b: string) => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);

/** The session-resource row of one mount: the store checked, a mount path no other resource uses. */
export async function planMemoryMount(universeId: string, sessionId: string, id: string, input: MemoryInput, taken: string[]) {
  const store = await memoryStoreForMount(universeId, input.memory_store_id);
  const slug = slugOf(store.name);
  const candidates = [slug && `${MEMORY_ROOT}/${slug}`, slug && `${MEMORY_ROOT}/${slug}-${store.id.slice(-6)}`, `${MEMORY_ROOT}/${store.id}`];
  const mountPath = candidates.find((c) => c && !taken.some((t) => overlaps(t, c)));
  if (!mountPath) throw new AppError('invalid_request', `no mount path is free for memory store ${store.id}`);
  return {
    id,
    sessionId,
    type: 'memory_store',
    fileId: null,
    url: null,
    mountPath,
    checkout: null,
    tokenSealed: null,
    memoryStoreId: store.id,
    access: input.access,
    instructions: input.instructions ?? null,
  };
}

export function memoryMountView(r: SessionResource, base: { id: string; mount_path: string; created_at: string; updated_at: string }): SessionResourceView {
  return {
    ...base,
    type: 'memory_store',
    memory_store_id: r.memoryStoreId ?? '',
    access: r.access === 'read_only' ? 'read_only' : 'read_write',
    instructions: r.instructions,
  };
}

/** Sessions whose last write-in (this process, before the turn now running) found no memory store mounted. */
const nothingWrittenIn = new Set<string>();

/** The session's mounts, each with whether it is writable (read_write, and its store not archived since). */
async function mountsOf(sessionId: string): Promise<(SessionResource & { writable: boolean })[]> {
  const mounts = await prisma.sessionResource.findMany({ where: { sessionId, type: 'memory_store' }, orderBy: { createdAt: 'asc' } });
  if (!mounts.length) return [];
  const archived = await prisma.memoryStore.findMany({
    where: { id: { in: mounts.map((m) => m.memoryStoreId!) }, archivedAt: { not: null } },
    select: { id: true },
  });
  const gone = new Set(archived.map((a) => a.id));
  return mounts.map((m) => ({ ...m, writable: m.access !== 'read_only' && !gone.has(m.memoryStoreId!) }));
}
const refusedWhy = (m: SessionResource) => (m.access === 'read_only' ? 'the memory store is mounted read_only' : 'the memory store is archived');

/** The memory path of a file at `rel` (relative to the mount). */
const memoryPathOf = (rel: string) => `/${rel.split(path.sep).join('/')}`;

/**
 * Brings every mounted store's directory up to the store, after reading back what is there: a
 * directory that holds exactly what it was last given gets only the store's changes since; any
 * other is replaced. read_only ones are bound read-only again after.
 */
export async function syncMemoryMountsIn(sessionId: string, sandbox: Sandbox, anyMounted?: boolean): Promise<void> {
  const mounted = anyMounted ?? (await prisma.sessionResource.count({ where: { sessionId, type: 'memory_store' } })) > 0;
  if (!mounted) {
    // Nothing was written in for this turn: its read-back has nothing to read (no query).
    nothingWrittenIn.add(sessionId);
    return;
  }
  nothingWrittenIn.delete(sessionId);
  // Writes a turn made but never read back (the process was killed mid-turn) are stored first.
  const clean = await syncMemoryMountsBack(sessionId, undefined, sandbox);
  const mounts = await mountsOf(sessionId);
  // The service writes read_only mounts too: lifted while it does, bound again after.
  await sandbox.setReadOnlyPaths?.([]);
  for (const m of mounts) {
    const storeId = m.memoryStoreId!;
    const current = await prisma.memory.findMany({ where: { storeId }, select: { path: true, contentSha256: true } });
    const snapshot: Snapshot = Object.fromEntries(current.map((c) => [c.path, c.contentSha256]));
    const given = clean.has(m.id) ? ((m.memorySnapshot ?? {}) as Snapshot) : null;
    if (!given) await sandbox.remove(m.mountPath).catch(() => undefined);
    const stale = current.filter((c) => given?.[c.path] !== c.contentSha256).map((c) => c.path);
    for (let i = 0; i < stale.length; i += 200) {
      const batch = await prisma.memory.findMany({ where: { storeId, path: { in: stale.slice(i, i + 200) } }, select: { path: true, content: true } });
      for (const memory of batch) {
        // `/a` and `/a/b.md` cannot both be files: the one that cannot be placed is left out (and
        // out of the snapshot, so the read-back does not take it for a deletion).
        await sandbox.writeFile(`${m.mountPath}${memory.path}`, memory.content).catch((err: Error) => {
          logger.warn({ sessionId, store: storeId, path: memory.path, err: err.message }, 'memory not placed in the sandbox');
          delete snapshot[memory.path];
        });
      }
    }
    for (const p of Object.keys(given ?? {})) if (!(p in snapshot)) await sandbox.remove(`${m.mountPath}${p}`).catch(() => undefined);
    if (!given && !current.length) await sandbox.exec(`mkdir -p '${m.mountPath}'`);
    await prisma.sessionResource.update({ where: { id: m.id }, data: { memorySnapshot: snapshot, syncedAt: new Date() } });
  }
  await sandbox.setReadOnlyPaths?.(mounts.filter((m) => !m.writable).map((m) => m.mountPath));
}

interface FoundFile {
  path: string;
  bytes: Buffer;
}

/** Regular files under the mount (symbolic links and other kinds are not followed), from the host directory. */
async function filesUnder(root: string): Promise<FoundFile[]> {
  const out: FoundFile[] = [];
  const walk = async (dir: string) => {
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) await walk(full);
      else if (e.isFile()) {
        const handle = await fs.open(full, 'r');
        try {
          const buf = Buffer.alloc(MAX_CONTENT_BYTES + 1);
          const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
          out.push({ path: memoryPathOf(path.relative(root, full)), bytes: buf.subarray(0, bytesRead) });
        } finally {
          await handle.close();
        }
      }
    }
  };
  await walk(root);
  return out;
}

/** The same through the sandbox's commands (a driver without a host directory: a pod). */
async function filesThroughSandbox(sandbox: Sandbox, mountPath: string): Promise<FoundFile[]> {
  const listed = await sandbox.exec(`cd '${mountPath}' 2>/dev/null && find . -type f -print0`, { maxOutputBytes: 16 * 1024 * 1024 });
  const out: FoundFile[] = [];
  for (const rel of listed.stdout.split('\0').filter(Boolean)) {
    const p = rel.replace(/^\.\//, '/');
    out.push({ path: p, bytes: await sandbox.readFile(`${mountPath}${p}`, { maxBytes: MAX_CONTENT_BYTES + 1 }) });
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Why a file cannot become a memory, or null. */
function refusal(f: FoundFile): string | null {
  const problem = pathProblem(f.path);
  if (problem) return problem;
  if (f.bytes.length > MAX_CONTENT_BYTES) return `content is larger than ${MAX_CONTENT_BYTES} bytes`;
  try {
    utf8.decode(f.bytes);
  } catch {
    return 'content is not UTF-8 text';
  }
  return null;
}

/**
 * After a turn: every read_write mount's directory is compared with what the sandbox was given;
 * the differences are stored as versions by the session in one transaction. Never throws (a
 * failure is logged and reported as a session.error): the turn's end must not depend on it.
 */
export async function syncMemoryMountsBack(sessionId: string, turn?: number, placed?: Sandbox): Promise<Set<string>> {
  // After a turn whose write-in found no store mounted: a mount added since has no directory in
  // the sandbox yet (the next turn's write-in makes it), so there is nothing to read back.
  if (turn !== undefined && nothingWrittenIn.delete(sessionId)) return new Set();
  const errors: string[] = [];
  // Mounts whose directory now holds exactly their snapshot (a write-in need only apply the store's changes).
  const clean = new Set<string>();
  try {
    const mounts = await mountsOf(sessionId);
    if (!mounts.length) return clean;
    const sandbox = placed ?? (await sandboxDriver().get(sessionId));
    if (!sandbox) return clean;
    const changes: { mount: SessionResource; path: string; content: string | null }[] = [];
    const snapshots = new Map<string, Snapshot>();
    for (const m of mounts) {
      const before = (m.memorySnapshot ?? {}) as Snapshot;
      const after: Snapshot = { ...before };
      snapshots.set(m.id, after);
      // Not placed in this sandbox (a new or replacement one, or the whole directory removed):
      // nothing to read back; a missing directory never deletes the store's memories.
      if (!m.syncedAt || !(await sandbox.stat(m.mountPath).catch(() => null))?.isDirectory) continue;
      const errorsBefore = errors.length;
      const found = sandbox.hostWorkspace
        ? await filesUnder(path.join(sandbox.hostWorkspace, m.mountPath.slice('/workspace/'.length)))
        : await filesThroughSandbox(sandbox, m.mountPath);
      const seen = new Set<string>();
      for (const f of found) {
        seen.add(f.path);
        const hash = sha256(f.bytes.toString('utf8'));
        if (before[f.path] === hash && f.bytes.length <= MAX_CONTENT_BYTES) continue;
        if (!m.writable) {
          errors.push(`${m.mountPath}${f.path}: ${refusedWhy(m)}; the change is not kept`);
          continue;
        }
        const why = refusal(f);
        if (why) {
          errors.push(`${m.mountPath}${f.path}: not kept as a memory: ${why}`);
          continue;
        }
        changes.push({ mount: m, path: f.path, content: f.bytes.toString('utf8') });
        after[f.path] = hash;
      }
      for (const p of Object.keys(before)) {
        if (seen.has(p)) continue;
        if (!m.writable) {
          errors.push(`${m.mountPath}${p}: ${refusedWhy(m)}; the deletion is not kept`);
          continue;
        }
        changes.push({ mount: m, path: p, content: null });
        delete after[p];
      }
      if (errors.length === errorsBefore) clean.add(m.id);
    }
    if (changes.length) {
      const actor = { type: 'session' as const, session_id: sessionId };
      await memoryTransaction(async (tx) => {
        for (const c of changes) await applyChange(tx, c.mount.memoryStoreId!, c.path, c.content, actor);
        for (const m of mounts) {
          if (m.writable) await tx.sessionResource.update({ where: { id: m.id }, data: { memorySnapshot: snapshots.get(m.id) as Prisma.InputJsonValue } });
        }
      });
      logger.info({ sessionId, changes: changes.length }, 'memory writes stored');
    }
  } catch (err) {
    logger.error({ err, sessionId }, 'memory read-back failed');
    clean.clear();
    errors.push(`the memory stores could not be read back: ${(err as Error).message}`);
  }
  if (!errors.length) return clean;
  const events: NewEvent[] = errors.map((message) => ({
    type: 'session.error',
    fields: { error: { type: 'memory_write_refused', message, retry_status: 'exhausted' } },
    ...(turn !== undefined ? { turn } : {}),
  })) as NewEvent[];
  await commitEvents(sessionId, events).catch((err) => logger.error({ err, sessionId }, 'memory errors could not be stored'));
  return clean;
}
