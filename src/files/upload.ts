// Streams a multipart upload (part `file`, optional `expires_in_seconds`) into the blob store,
// never holding the whole file in memory; over 32 MiB answers 413 file_too_large.
import busboy from 'busboy';
import type { Request } from 'express';
import { AppError } from '../errors.js';
import { blobStore, BlobTooLargeError, type StoredBlob } from './blob-store.js';
import { MAX_FILE_BYTES, MIN_EXPIRES_S, MAX_EXPIRES_S } from './files.js';

export interface ParsedUpload {
  blob: StoredBlob;
  filename: string;
  mimeType: string;
  expiresInSeconds: number | null;
}

export function parseUpload(req: Request): Promise<ParsedUpload> {
  if (!req.is('multipart/form-data')) return Promise.reject(new AppError('invalid_request', 'send multipart/form-data with a `file` part'));
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: req.headers, limits: { fileSize: MAX_FILE_BYTES, files: 1, fields: 10, fieldSize: 1024 } });
    } catch (err) {
      return reject(new AppError('invalid_request', `malformed multipart body: ${(err as Error).message}`));
    }
    let stored: Promise<StoredBlob> | null = null;
    let meta: { filename: string; mimeType: string } | null = null;
    let expires: string | null = null;
    let failed = false;
    let tooLarge = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      req.unpipe(bb);
      req.resume(); // drain the rest so the client gets an answer
      reject(err);
    };
    bb.on('file', (name, stream, info) => {
      if (name !== 'file') {
        stream.resume();
        return;
      }
      meta = { filename: info.filename || 'upload', mimeType: info.mimeType || 'application/octet-stream' };
      // busboy truncates at the limit and discards the rest of the part: remember, then refuse.
      stream.on('limit', () => (tooLarge = true));
      stored = blobStore().put(stream, { maxBytes: MAX_FILE_BYTES });
      stored.catch(() => undefined);
    });
    bb.on('field', (name, value) => {
      if (name === 'expires_in_seconds') expires = value;
    });
    bb.on('error', (err) => fail(new AppError('invalid_request', `malformed multipart body: ${(err as Error).message}`)));
    bb.on('close', async () => {
      if (failed) return;
      try {
        if (!stored || !meta) throw new AppError('invalid_request', 'the multipart body has no `file` part');
        let blob: StoredBlob;
        try {
          blob = await stored;
        } catch (err) {
          if (err instanceof BlobTooLargeError) throw new AppError('file_too_large', 'files are limited to 32 MiB');
          throw err;
        }
        if (tooLarge) {
          await blobStore().delete(blob.key);
          throw new AppError('file_too_large', 'files are limited to 32 MiB');
        }
        let expiresInSeconds: number | null = null;
        if (expires !== null) {
          const n = Number(expires);
          if (!/^[0-9]+$/.test(expires) || n < MIN_EXPIRES_S || n > MAX_EXPIRES_S) {
            await blobStore().delete(blob.key);
            throw new AppError('invalid_request', `expires_in_seconds must be an integer from ${MIN_EXPIRES_S} to ${MAX_EXPIRES_S}`);
          }
          expiresInSeconds = n;
        }
        resolve({ blob, ...(meta as { filename: string; mimeType: string }), expiresInSeconds });
      } catch (err) {
        reject(err);
      }
    });
    req.pipe(bb);
  });
}
