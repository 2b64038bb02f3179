// Memory stores mounted into a session (issue #30): planned at session create (at most 8, the
// mount path chosen here: /workspace/memory/<store name>), written into the sandbox before every
// turn, and read back after every turn: what the agent changed becomes new versions by the
// session, in one transaction; a file breaking the limits is a session.error naming its path
// while the rest is kept. A read_only mount is bound read-only by the jail; anything changed
// there anyway is reported and not kept.
import { createHash } from 'node:crypto';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
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
import { applyChanges, memoryTransaction } from './memories.js';
import { MAX_CONTENT_BYTES, MAX_STORES_PER_SESSION, pathProblem } from './paths.js';
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
    const stale = current.filter((c) => given?.[c.path] !== c.contentSha256).map((c) => c.path);
    // `/a` and `/a/b.md` cannot both be files: the one that cannot be placed is left out (and
    // out of the snapshot, so the read-back does not take it for a deletion).
    const leftOut = (p: string, err: Error) => {
      logger.warn({ sessionId, store: storeId, path: p, err: err.message }, 'memory not placed in the sandbox');
      delete snapshot[p];
    };
    if (given) {
      // A directory that holds what it was given: the store's changes since, file by file.
      for (let i = 0; i < stale.length; i += 200) {
        const batch = await prisma.memory.findMany({ where: { storeId, path: { in: stale.slice(i, i + 200) } }, select: { path: true, content: true } });
        for (const memory of batch) await sandbox.writeFile(`${m.mountPath}${memory.path}`, memory.content).catch((err: Error) => leftOut(memory.path, err));
      }
    } else {
      await placeWhole(sandbox, m.mountPath, storeId, stale, leftOut);
    }
    for (const p of Object.keys(given ?? {})) if (!(p in snapshot)) await sandbox.remove(`${m.mountPath}${p}`).catch(() => undefined);
    await prisma.sessionResource.update({ where: { id: m.id }, data: { memorySnapshot: snapshot, syncedAt: new Date() } });
  }
  await sandbox.setReadOnlyPaths?.(mounts.filter((m) => !m.writable).map((m) => m.mountPath));
}

/**
 * A whole placement: the memories are laid out in a host directory (written in parallel; which
 * paths cannot be files is decided first, in path order) and moved or copied in at once (in a
 * pod, one exec).
 */
async function placeWhole(sandbox: Sandbox, mountPath: string, storeId: string, paths: string[], leftOut: (p: string, err: Error) => void): Promise<void> {
  const files = new Set<string>();
  const dirs = new Set<string>();
  for (const p of [...paths].sort()) {
    const parents = p
      .split('/')
      .slice(1, -1)
      .map((_, i, all) => `/${all.slice(0, i + 1).join('/')}`);
    const blocked = files.has(p) || dirs.has(p) ? p : parents.find((d) => files.has(d));
    if (blocked) {
      leftOut(p, new Error(`${blocked} is a file`));
      continue;
    }
    for (const d of parents) dirs.add(d);
    files.add(p);
  }
  const staging = await fs.mkdtemp(path.join(os.tmpdir(), 'memory-mount-'));
  let moved = false;
  try {
    await fs.chmod(staging, 0o755);
    // The paths' segments are checked (no `.`, `..` or empty ones): everything stays inside.
    const local = (p: string) => path.join(staging, ...p.split('/'));
    for (const d of [...dirs].sort()) await fs.mkdir(local(d), { recursive: true });
    const placed = [...files];
    for (let i = 0; i < placed.length; i += 200) {
      const batch = await prisma.memory.findMany({ where: { storeId, path: { in: placed.slice(i, i + 200) } }, select: { path: true, content: true } });
      await Promise.all(
        batch.map((memory) => fs.writeFile(local(memory.path), memory.content, { flag: 'wx' }).catch((err: Error) => leftOut(memory.path, err))),
      );
    }
    await sandbox.importTree(staging, mountPath, { move: true });
    moved = true;
  } finally {
    if (!moved || (await fs.stat(staging).catch(() => null))) await fs.rm(staging, { recursive: true, force: true });
  }
}

interface FoundFile {
  path: string;
  /** Hex SHA-256 of the whole file. */
  hash: string;
  /** Its first MAX_CONTENT_BYTES + 1 bytes; null when it is what the sandbox was given (not read). */
  bytes: Buffer | null;
}

const hashOf = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * What each mount's files held when last read (host path → its inode, size and times, and its
 * hash): a file whose stamp is unchanged and whose hash is what the sandbox was given is not
 * read again. The change time cannot be set from inside the sandbox, so a write always shows.
 * Kept for the most recent mounts of this process.
 */
const stamps = new Map<string, Map<string, { stamp: string; hash: string }>>();
const MAX_STAMPED_MOUNTS = 256;

/**
 * Regular files under the mount (symbolic links and other kinds are not followed), from the host
 * directory. Synchronous calls: a store is small files, and a thousand stat calls through the
 * thread pool cost far more in hand-offs (on a busy host) than they block.
 */
async function filesUnder(root: string, given: Snapshot): Promise<FoundFile[]> {
  const files: string[] = [];
  const walk = (dir: string) => {
    let entries: fsSync.Dirent[];
    try {
      entries = fsSync.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile()) files.push(full);
    }
  };
  walk(root);
  const known = stamps.get(root) ?? new Map<string, { stamp: string; hash: string }>();
  stamps.delete(root);
  stamps.set(root, known);
  if (stamps.size > MAX_STAMPED_MOUNTS) stamps.delete(stamps.keys().next().value!);
  const stampOf = (st: fsSync.Stats) => `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  const out: FoundFile[] = [];
  for (const full of files) {
    const p = memoryPathOf(path.relative(root, full));
    const was = known.get(full);
    if (was && given[p] === was.hash) {
      const st = fsSync.lstatSync(full, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isFile() && stampOf(st) === was.stamp) {
        out.push({ path: p, hash: was.hash, bytes: null });
        continue;
      }
    }
    let fd: number;
    try {
      // O_NOFOLLOW: a file swapped for a link since the listing is not followed.
      fd = fsSync.openSync(full, fsSync.constants.O_RDONLY | fsSync.constants.O_NOFOLLOW);
    } catch {
      continue;
    }
    try {
      const st = fsSync.fstatSync(fd);
      const size = Math.min(st.size, MAX_CONTENT_BYTES + 1);
      const buf = Buffer.alloc(size);
      const bytes = buf.subarray(0, fsSync.readSync(fd, buf, 0, size, 0));
      const hash = hashOf(bytes);
      if (st.size <= MAX_CONTENT_BYTES) known.set(full, { stamp: stampOf(st), hash });
      out.push({ path: p, hash, bytes });
    } finally {
      fsSync.closeSync(fd);
    }
  }
  return out;
}

/**
 * The same through the sandbox's commands (a driver without a host directory: a pod): one
 * command lists every file with its hash; only the files not as given (`given`) are read.
 */
async function filesThroughSandbox(sandbox: Sandbox, mountPath: string, given: Snapshot): Promise<FoundFile[]> {
  const listed = await sandbox.exec(`cd '${mountPath}' 2>/dev/null && find . -type f -print0 | xargs -0 -r sha256sum -z --`, {
    maxOutputBytes: 16 * 1024 * 1024,
  });
  if (listed.exitCode !== 0 || listed.truncated) throw new Error(`listing ${mountPath} failed: ${listed.stderr.trim() || `exit ${listed.exitCode}`}`);
  const out: FoundFile[] = [];
  for (const line of listed.stdout.split('\0').filter(Boolean)) {
    const hash = line.slice(0, 64);
    const p = line.slice(66).replace(/^\.\//, '/');
    const bytes = given[p] === hash ? null : await sandbox.readFile(`${mountPath}${p}`, { maxBytes: MAX_CONTENT_BYTES + 1 });
    out.push({ path: p, hash, bytes });
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Why a file cannot become a memory, or null. */
function refusal(f: FoundFile & { bytes: Buffer }): string | null {
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
  // Mounts with a change that was not kept: reported once; the next write-in replaces their directory.
  const refused: string[] = [];
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
        ? await filesUnder(path.join(sandbox.hostWorkspace, m.mountPath.slice('/workspace/'.length)), before)
        : await filesThroughSandbox(sandbox, m.mountPath, before);
      const seen = new Set<string>();
      for (const f of found) {
        seen.add(f.path);
        // Unchanged (the hash of valid UTF-8 bytes is the content's, content_sha256).
        if (before[f.path] === f.hash && (f.bytes === null || f.bytes.length <= MAX_CONTENT_BYTES)) continue;
        const bytes = f.bytes ?? Buffer.alloc(0);
        if (!m.writable) {
          errors.push(`${m.mountPath}${f.path}: ${refusedWhy(m)}; the change is not kept`);
          continue;
        }
        const why = refusal({ ...f, bytes });
        if (why) {
          errors.push(`${m.mountPath}${f.path}: not kept as a memory: ${why}`);
          continue;
        }
        changes.push({ mount: m, path: f.path, content: bytes.toString('utf8') });
        after[f.path] = f.hash;
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
      else refused.push(m.id);
    }
    if (changes.length) {
      const actor = { type: 'session' as const, session_id: sessionId };
      await memoryTransaction(async (tx) => {
        for (const m of mounts) {
          const mine = changes.filter((c) => c.mount.id === m.id);
          if (mine.length) await applyChanges(tx, m.memoryStoreId!, mine, actor);
        }
        for (const m of mounts) {
          if (m.writable) await tx.sessionResource.update({ where: { id: m.id }, data: { memorySnapshot: snapshots.get(m.id) as Prisma.InputJsonValue } });
        }
      });
      logger.info({ sessionId, changes: changes.length }, 'memory writes stored');
    }
    if (refused.length) await prisma.sessionResource.updateMany({ where: { id: { in: refused } }, data: { syncedAt: null } });
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
