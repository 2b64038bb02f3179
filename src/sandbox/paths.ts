// Maps sandbox paths (/workspace/…) onto the host directory, refusing anything that escapes it,
// including through symlinks planted inside the workspace.
import fs from 'node:fs';
import path from 'node:path';
import { SandboxPathError, WORKSPACE } from './driver.js';

/** Normalised path relative to /workspace ('' for the root); throws on escapes. */
export function relativeToWorkspace(p: string): string {
  if (typeof p !== 'string' || p.includes('\0')) throw new SandboxPathError('invalid path');
  const abs = path.posix.normalize(p.startsWith('/') ? p : `${WORKSPACE}/${p}`);
  if (abs !== WORKSPACE && !abs.startsWith(`${WORKSPACE}/`)) throw new SandboxPathError(`path ${p} is outside ${WORKSPACE}`);
  return abs.slice(WORKSPACE.length + 1);
}

/** The host path for a sandbox path, after checking that no existing component resolves outside the root. */
export function hostPath(root: string, p: string): string {
  const rel = relativeToWorkspace(p);
  const target = path.join(root, rel);
  const realRoot = fs.realpathSync(root);
  // Walk up to the deepest existing ancestor and resolve it: a symlink anywhere on the way
  // that points outside the workspace is refused.
  let probe = target;
  while (!fs.existsSync(probe) && probe !== root) probe = path.dirname(probe);
  let lstat: fs.Stats | null = null;
  try {
    lstat = fs.lstatSync(target);
  } catch {
    /* does not exist yet */
  }
  const real = fs.realpathSync(lstat?.isSymbolicLink() ? target : probe);
  if (real !== realRoot && !real.startsWith(realRoot + path.sep)) {
    throw new SandboxPathError(`path ${p} resolves outside ${WORKSPACE}`);
  }
  return target;
}
