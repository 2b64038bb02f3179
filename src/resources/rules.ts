// Session resource rules: counts, mount path normalisation (rooted under /workspace, never
// escaping it, never overlapping another resource) and repository addresses.
import path from 'node:path';
import { AppError } from '../errors.js';

export const MAX_RESOURCES = 500;
export const MAX_REPOSITORIES = 5;
export const MAX_RESOURCES_AT_CREATE = 100;

/** `/data/in.csv` or `/workspace/data/in.csv` → `/workspace/data/in.csv`; escapes refused. */
export function normalizeMountPath(raw: string): string {
  if (raw.includes('\0')) throw new AppError('invalid_request', 'mount_path contains a NUL byte');
  const rel = raw.startsWith('/workspace/') || raw === '/workspace' ? raw.slice('/workspace'.length) : raw;
  const joined = path.posix.normalize(`/workspace/${rel}`);
  // Any `..` that climbs out is refused, even if normalisation would land back inside.
  const depthCheck = rel.split('/').reduce((depth, part) => (depth < 0 ? depth : part === '..' ? depth - 1 : part && part !== '.' ? depth + 1 : depth), 0);
  if (depthCheck < 0 || !joined.startsWith('/workspace/') || joined === '/workspace/') {
    throw new AppError('invalid_request', `mount_path ${JSON.stringify(raw)} must name a path inside /workspace`);
  }
  return joined.replace(/\/+$/, '');
}

export function overlaps(a: string, b: string): boolean {
  return a === b || a.startsWith(b + '/') || b.startsWith(a + '/');
}

/** `https://github.com/owner/repo(.git)` → its parts; other hosts are allowed (git over https). */
export function parseRepoUrl(raw: string): { url: string; host: string; repo: string } {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new AppError('invalid_request', 'url must be a repository address like https://github.com/owner/repo');
  }
  const parts = u.pathname
    .replace(/\.git$/, '')
    .split('/')
    .filter(Boolean);
  const local = u.hostname === 'localhost' || u.hostname === '127.0.0.1';
  if ((u.protocol !== 'https:' && !(u.protocol === 'http:' && local)) || parts.length < 2 || u.username || u.password || u.search || u.hash) {
    throw new AppError('invalid_request', 'url must be a repository address like https://github.com/owner/repo');
  }
  return { url: `${u.protocol}//${u.host}/${parts.join('/')}`, host: u.host, repo: parts[parts.length - 1]! };
}
