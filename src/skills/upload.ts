// Reads a skill bundle from a multipart body (one `files` part per file, its filename being the
// path inside the skill; optional `display_name`) or from JSON.
import busboy from 'busboy';
import type { Request } from 'express';
import { AppError } from '../errors.js';
import type { BundleFile } from './bundle.js';
import { MAX_SKILL_BYTES, MAX_SKILL_FILES } from './bundle.js';
import { filesFromJson } from './skills.js';

export function readSkillUpload(req: Request): Promise<{ displayName?: string; files: BundleFile[] }> {
  if (req.is('application/json')) return Promise.resolve(filesFromJson(req.body ?? {}));
  if (!req.is('multipart/form-data')) return Promise.reject(new AppError('invalid_request', 'send multipart/form-data (files parts) or JSON {files: [...]}'));
  return new Promise((resolve, reject) => {
    const files: BundleFile[] = [];
    let displayName: string | undefined;
    let total = 0;
    let failed = false;
    const fail = (err: AppError) => {
      if (failed) return;
      failed = true;
      req.unpipe(bb);
      req.resume();
      reject(err);
    };
    const bb = busboy({ headers: req.headers, preservePath: true, limits: { files: MAX_SKILL_FILES, fileSize: MAX_SKILL_BYTES, fields: 5 } });
    bb.on('file', (name, stream, info) => {
      if (name !== 'files') return void stream.resume();
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => {
        total += c.length;
        if (total > MAX_SKILL_BYTES) {
          stream.destroy();
          fail(new AppError('file_too_large', 'a skill is limited to 32 MiB'));
        } else chunks.push(c);
      });
      stream.on('end', () => files.push({ path: info.filename ?? '', data: Buffer.concat(chunks), executable: false }));
    });
    bb.on('field', (name, value) => {
      if (name === 'display_name') displayName = value;
    });
    bb.on('filesLimit', () => fail(new AppError('invalid_request', `a skill holds at most ${MAX_SKILL_FILES} files`)));
    bb.on('error', (err) => fail(new AppError('invalid_request', `malformed multipart body: ${(err as Error).message}`)));
    bb.on('close', () => {
      if (failed) return;
      if (displayName !== undefined && (displayName.length < 1 || displayName.length > 60)) return reject(new AppError('invalid_request', 'display_name must be 1 to 60 characters'));
      resolve({ displayName, files });
    });
    req.pipe(bb);
  });
}
