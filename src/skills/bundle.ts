// A skill bundle: files with relative paths, SKILL.md at the root carrying YAML front-matter
// `name` and `description`. Validated here for both multipart and JSON uploads.
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { AppError } from '../errors.js';

export interface BundleFile {
  path: string;
  data: Buffer;
  executable: boolean;
}

export const MAX_SKILL_FILES = 1000;
export const MAX_SKILL_BYTES = 32 * 1024 * 1024;

export function normalizeSkillPath(raw: string): string {
  const p = path.posix.normalize(raw.replace(/\\/g, '/')).replace(/^\.\//, '');
  if (!p || p.startsWith('/') || p === '.' || p.split('/').includes('..') || p.includes('\0') || p.length > 1024) {
    throw new AppError('invalid_request', `file path ${JSON.stringify(raw)} must be relative and stay inside the skill`);
  }
  return p;
}

export interface SkillManifest {
  name: string;
  description: string;
  files: BundleFile[];
}

export function readBundle(files: BundleFile[]): SkillManifest {
  if (!files.length) throw new AppError('invalid_request', 'a skill needs at least SKILL.md');
  if (files.length > MAX_SKILL_FILES) throw new AppError('invalid_request', `a skill holds at most ${MAX_SKILL_FILES} files`);
  const seen = new Set<string>();
  let total = 0;
  const normalized = files.map((f) => {
    const p = normalizeSkillPath(f.path);
    if (seen.has(p)) throw new AppError('invalid_request', `file path ${p} appears twice`);
    seen.add(p);
    total += f.data.length;
    return { ...f, path: p };
  });
  if (total > MAX_SKILL_BYTES) throw new AppError('file_too_large', 'a skill is limited to 32 MiB');
  const skillMd = normalized.find((f) => f.path === 'SKILL.md');
  if (!skillMd) throw new AppError('invalid_request', 'SKILL.md is required at the root of the skill');
  const m = /^---\r?\n([\s\S]*?)\r?\n---/.exec(skillMd.data.toString('utf8'));
  if (!m) throw new AppError('invalid_request', 'SKILL.md must start with YAML front-matter (---) holding name and description');
  let meta: unknown;
  try {
    meta = parseYaml(m[1]!);
  } catch (err) {
    throw new AppError('invalid_request', `SKILL.md front-matter is not valid YAML: ${(err as Error).message}`);
  }
  const { name, description } = (meta ?? {}) as { name?: unknown; description?: unknown };
  if (typeof name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name))
    throw new AppError('invalid_request', 'SKILL.md front-matter needs a name (1 to 64 letters, digits, dot, dash, underscore)');
  if (typeof description !== 'string' || !description.trim() || description.length > 1024)
    throw new AppError('invalid_request', 'SKILL.md front-matter needs a description (1 to 1024 characters)');
  return { name, description: description.trim(), files: normalized };
}
