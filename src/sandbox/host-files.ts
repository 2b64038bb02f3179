// File operations done host-side on a workspace directory, contained to it. Paths are resolved
// first (paths.ts), then every opened descriptor is checked again through /proc/self/fd, so a
// symlink swapped in by a process inside the sandbox between the check and the open is caught.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { SandboxPathError, WORKSPACE, type FileStat } from './driver.js';
import { isInside, relativeToWorkspace, resolveInside } from './paths.js';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = fs.constants;

function errno(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

/** Where the descriptor really points, or null where /proc is unavailable. */
async function fdPath(handle: fsp.FileHandle): Promise<string | null> {
  try {
    return (await fsp.readlink(`/proc/self/fd/${handle.fd}`)).replace(/ \(deleted\)$/, '');
  } catch {
    return null;
  }
}

/** Throws when the descriptor ended up outside the workspace; a file we just created there is unlinked. */
async function assertContained(root: string, handle: fsp.FileHandle, p: string, created: boolean): Promise<void> {
  const real = await fdPath(handle);
  if (real === null || isInside(fs.realpathSync(root), real)) return;
  if (created) await fsp.unlink(real).catch(() => undefined);
  throw new SandboxPathError(`path ${p} resolves outside ${WORKSPACE}`);
}

/** Opens a regular file without following a final symlink or blocking on a FIFO. */
async function openRegular(root: string, p: string, file: string, flags: number, mode?: number): Promise<fsp.FileHandle> {
  const handle = await fsp.open(file, flags | O_NOFOLLOW | O_NONBLOCK, mode);
  try {
    await assertContained(root, handle, p, (flags & O_EXCL) !== 0);
    const st = await handle.stat();
    if (st.isDirectory()) throw errno('EISDIR', `${p} is a directory`);
    if (!st.isFile()) throw errno('EINVAL', `${p} is not a regular file`);
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

export async function readContained(root: string, p: string, maxBytes?: number): Promise<Buffer> {
  const handle = await openRegular(root, p, resolveInside(root, p), O_RDONLY);
  try {
    const size = (await handle.stat()).size;
    if (maxBytes === undefined || size < maxBytes) {
      const all = await handle.readFile();
      return maxBytes === undefined ? all : all.subarray(0, maxBytes);
    }
    const buf = Buffer.alloc(maxBytes);
    let filled = 0;
    while (filled < maxBytes) {
      const { bytesRead } = await handle.read(buf, filled, maxBytes - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buf.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

export async function writeContained(root: string, p: string, data: Buffer | string, opts: { mode?: number; readOnly?: boolean } = {}): Promise<void> {
  if (!relativeToWorkspace(p)) throw errno('EISDIR', `${WORKSPACE} is a directory`);
  const first = resolveInside(root, p);
  await fsp.mkdir(path.dirname(first), { recursive: true });
  const file = resolveInside(root, p); // again: a parent may have been swapped while we created it
  let handle: fsp.FileHandle;
  let created = false;
  try {
    handle = await openRegular(root, p, file, O_WRONLY | O_CREAT | O_EXCL, 0o600);
    created = true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    handle = await openExistingForWrite(root, p, file);
  }
  try {
    const previous = (await handle.stat()).mode & 0o7777;
    const mode = opts.readOnly ? 0o444 : (opts.mode ?? (created ? 0o644 : previous | 0o200));
    await handle.truncate(0);
    await handle.writeFile(data);
    await handle.chmod(mode);
  } finally {
    await handle.close();
  }
}

/** A read-only file (e.g. an earlier `readOnly` copy) is made writable first, through its descriptor. */
async function openExistingForWrite(root: string, p: string, file: string): Promise<fsp.FileHandle> {
  try {
    return await openRegular(root, p, file, O_WRONLY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EACCES') throw err;
    const ro = await openRegular(root, p, file, O_RDONLY);
    try {
      await ro.chmod(((await ro.stat()).mode & 0o7777) | 0o200);
    } finally {
      await ro.close();
    }
    return openRegular(root, p, file, O_WRONLY);
  }
}

export async function statContained(root: string, p: string): Promise<FileStat | null> {
  try {
    const st = await fsp.stat(resolveInside(root, p));
    return { size: st.size, isFile: st.isFile(), isDirectory: st.isDirectory() };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw err;
  }
}

/** Removes a file or tree; a symlink is removed itself, never what it points at. */
export async function removeContained(root: string, p: string): Promise<void> {
  if (!relativeToWorkspace(p)) throw new SandboxPathError(`refusing to remove ${WORKSPACE} itself`);
  await forceRemove(resolveInside(root, p, { keepLast: true }));
}

/** rm -rf that also gets through directories a sandboxed process made read-only (chmod 555). */
export async function forceRemove(target: string): Promise<void> {
  try {
    await fsp.rm(target, { recursive: true, force: true, maxRetries: 3 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EPERM') throw err;
    await makeWritable(target);
    await fsp.rm(target, { recursive: true, force: true, maxRetries: 3 });
  }
}

async function makeWritable(dir: string): Promise<void> {
  // Through an O_NOFOLLOW descriptor: a directory swapped for a symlink is skipped, not followed.
  const handle = await fsp.open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW).catch(() => null);
  if (!handle) return;
  await handle.chmod(0o700).catch(() => undefined);
  await handle.close();
  for (const entry of await fsp.readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) await makeWritable(path.join(dir, entry.name));
  }
}
