// Memory limits and path rules (issue #30): a path starts with `/`, is at most 1024 bytes, has
// no `.`, `..` or empty segments and no control characters; content is UTF-8 of at most 100 KiB.
// The same rules judge what an agent writes into a mounted directory.
import { createHash } from 'node:crypto';

export const MAX_PATH_BYTES = 1024;
export const MAX_CONTENT_BYTES = 100 * 1024;
export const MAX_STORES_PER_SESSION = 8;

// The same rule as a pattern (for the OpenAPI document): segments that are not `.` or `..`,
// without `/` or control characters. The byte length is checked by `pathProblem`.
const SEGMENT_CHAR = '[^/\\u0000-\\u001f\\u007f-\\u009f]';
const NOT_DOT = '[^/.\\u0000-\\u001f\\u007f-\\u009f]';
export const MEMORY_PATH_PATTERN = `^(?:/(?:${NOT_DOT}${SEGMENT_CHAR}*|\\.${NOT_DOT}${SEGMENT_CHAR}*|\\.\\.${SEGMENT_CHAR}+))+$`;

/** Why `p` is not a memory path, or null when it is one. */
export function pathProblem(p: string): string | null {
  if (!p.startsWith('/')) return 'path must start with /';
  if (Buffer.byteLength(p, 'utf8') > MAX_PATH_BYTES) return `path is longer than ${MAX_PATH_BYTES} bytes`;
  if (/[\u0000-\u001f\u007f-\u009f]/.test(p)) return 'path contains a control character';
  if (p === '/') return 'path must name a memory below /';
  for (const segment of p.slice(1).split('/')) {
    if (segment === '') return 'path has an empty segment';
    if (segment === '.' || segment === '..') return 'path has a . or .. segment';
  }
  return null;
}

/** Hex SHA-256 of the UTF-8 text. */
export function sha256(content: string): string {
  return createHash('sha256').update(content, 'utf8').digest('hex');
}

/** Whether `p` lies under `prefix` (a prefix of whole segments, or `/`). */
export function isUnder(p: string, prefix: string): boolean {
  const base = prefix.endsWith('/') ? prefix : `${prefix}/`;
  return p === prefix || p.startsWith(base);
}

/** Segments of `p` below `prefix` (`/a/b/c` under `/a` is 2). */
export function depthBelow(p: string, prefix: string): number {
  const base = prefix.endsWith('/') ? prefix : `${prefix}/`;
  return p.slice(base.length).split('/').length;
}
