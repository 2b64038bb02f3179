// Reads a skill bundle from a multipart body (one `files` part per file, its filename being the
// path inside the skill; optional `display_name`) or from JSON. A malformed or truncated body, a
// huge part header or a client leaving mid-upload rejects with a 4xx; the process never sees an
// unhandled stream error. Files are held in memory (at most 32 MiB in all) until the bundle is
// validated, so a refused upload stores nothing. The busboy plumbing is shared with file uploads
// (src/http/multipart.ts).
import type { Request } from 'express';
import { AppError } from '../errors.js';
import type { BundleFile } from './bundle.js';
import { MAX_SKILL_BYTES, MAX_SKILL_FILES } from './bundle.js';
import { filesFromJson } from './skills.js';
import { skillBundleBody } from './contract.js';
import { describeIssues } from '../validation.js';
import { readMultipart } from '../wire/multipart.js';
import { textProblem } from '../wire/text.js';

/** A JSON bundle, validated here at the edge (this route reads its own body). */
function jsonBundle(value: unknown): { displayName?: string; files: BundleFile[] } {
  const parsed = skillBundleBody.safeParse(value);
  if (!parsed.success) throw new AppError('invalid_request', describeIssues(parsed.error.issues, 'body'));
  return filesFromJson(parsed.data);
}

export function readSkillUpload(req: Request): Promise<{ displayName?: string; files: BundleFile[] }> {
  if (req.is('application/json')) {
    try {
      return Promise.resolve(jsonBundle(req.body ?? {}));
    } catch (err) {
      return Promise.reject(err);
    }
  }
  if (!req.is('multipart/form-data')) return Promise.reject(new AppError('invalid_request', 'send multipart/form-data (files parts) or JSON {files: [...]}'));
  // fileSize one over the total limit: busboy reports 'limit' on reaching it.
  const limits = { files: MAX_SKILL_FILES, fileSize: MAX_SKILL_BYTES + 1, fields: 5, fieldSize: 1024, parts: MAX_SKILL_FILES + 5, headerPairs: 20 };
  return readMultipart<{ displayName?: string; files: BundleFile[] }>(req, { preservePath: true, limits }, (bb, read) => {
    const files: BundleFile[] = [];
    let displayName: string | undefined;
    let total = 0;
    const tooLarge = () => read.fail(new AppError('file_too_large', 'a skill is limited to 32 MiB'));

    bb.on('file', (name, stream, info) => {
      stream.on('error', () => undefined); // reported through busboy's own 'error'
      if (name !== 'files') return void stream.resume();
      const chunks: Buffer[] = [];
      stream.on('limit', tooLarge);
      stream.on('data', (c: Buffer) => {
        total += c.length;
        if (total > MAX_SKILL_BYTES) tooLarge();
        else chunks.push(c);
      });
      stream.on('end', () => files.push({ path: info.filename ?? '', data: Buffer.concat(chunks), executable: false }));
    });
    bb.on('field', (name, value) => {
      if (name === 'display_name') displayName = value;
    });
    bb.on('filesLimit', () => read.fail(new AppError('invalid_request', `a skill holds at most ${MAX_SKILL_FILES} files`)));
    bb.on('close', () => {
      if (read.settled) return;
      if (displayName !== undefined && (displayName.length < 1 || displayName.length > 60))
        return read.fail(new AppError('invalid_request', 'display_name must be 1 to 60 characters'));
      const bad = displayName === undefined ? null : textProblem(displayName);
      if (bad) return read.fail(new AppError('invalid_request', `display_name ${bad}`));
      read.succeed({ displayName, files });
    });
    return undefined;
  });
}
