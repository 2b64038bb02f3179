// Maps sandbox paths (/workspace/…) onto the host directory, refusing anything that escapes it,
// lexically (`..`, other absolute paths) or through symlinks planted inside the workspace.
import fs from 'node:fs';
import path from 'node:path';
import { SandboxPathError, WORKSPACE } from './driver.js';

/** Normalised path relative to /workspace ('' for the root); throws on escapes. */
export function relativeToWorkspace(p: string): string {
  if (typeof p !== 'string' || p === '' || p.includes('\0')) throw new SandboxPathError('invalid path');
  const abs = path.posix.normalize(p.startsWith('/') ? p : `${WORKSPACE}/${p}`).replace(/\/+$/, '') || '/';
  if (abs !== WORKSPACE && !abs.startsWith(`${WORKSPACE}/`)) throw new SandboxPathError(`path ${p} is outside ${WORKSPACE}`);
  return abs.slice(WORKSPACE.length + 1);
}

/** The sandbox path shown back to callers: always absolute. */
export function sandboxPath(p: string): string {
  const rel = relativeToWorkspace(p);
  return rel ? `${WORKSPACE}/${rel}` : WORKSPACE;
}

export function isInside(realRoot: string, real: string): boolean {
  return real === realRoot || real.startsWith(realRoot + path.sep);
}

/**
 * The resolved host path for a sandbox path. Every existing component is resolved (symlinks
 * included) and must stay inside the workspace; components that do not exist yet are appended
 * as they are (they will be created as real directories). With `keepLast`, the last component
 * is not resolved, so a symlink itself can be removed or inspected.
 */
export function resolveInside(root: string, p: string, opts: { keepLast?: boolean } = {}): string {
  const rel = relativeToWorkspace(p);
  const realRoot = fs.realpathSync(root);
  if (opts.keepLast && rel) {
    const parent = path.posix.dirname(rel);
    return path.join(resolveInside(root, parent === '.' ? WORKSPACE : parent), path.posix.basename(rel));
  }
  // Deepest ancestor that exists (lstat: a dangling symlink counts as existing and is refused).
  let existing = path.join(realRoot, rel);
  const rest: string[] = [];
  while (existing !== realRoot && !lexists(existing)) {
    rest.unshift(path.basename(existing));
    existing = path.dirname(existing);
  }
  let real: string;
  try {
    real = fs.realpathSync(existing);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new SandboxPathError(`path ${p} goes through a dangling symbolic link`);
    throw err;
  }
  if (!isInside(realRoot, real)) throw new SandboxPathError(`path ${p} resolves outside ${WORKSPACE}`);
  return path.join(real, ...rest);
}

function lexists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}
