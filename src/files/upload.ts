// Streams a multipart upload (part `file`, optional `expires_in_seconds` as a field or as a part
// with a filename) into the blob store,
// never holding the whole file in memory. Exactly 32 MiB is accepted; one byte more answers 413
// file_too_large. Every way an upload can go wrong (malformed or truncated multipart, a huge
// part header, the client leaving mid-upload) rejects with a 4xx and leaves no blob behind
// (the busboy plumbing shared with skill uploads: src/http/multipart.ts).
import type { Request } from 'express';
import type { Readable } from 'node:stream';
import { AppError } from '../errors.js';
import { blobStore, BlobTooLargeError, type StoredBlob } from '../blobs/blob-store.js';
import { MAX_FILE_BYTES, MIN_EXPIRES_S, MAX_EXPIRES_S } from './files.js';
import { malformedMultipart, readMultipart } from '../wire/multipart.js';
import { textProblem } from '../wire/text.js';

export interface ParsedUpload {
  blob: StoredBlob;
  filename: string;
  mimeType: string;
  expiresInSeconds: number | null;
}

const tooLarge = () => new AppError('file_too_large', 'files are limited to 32 MiB (33554432 bytes)');

function parseExpires(value: string | null): number | null {
  if (value === null) return null;
  const n = Number(value);
  if (!/^[0-9]{1,10}$/.test(value) || n < MIN_EXPIRES_S || n > MAX_EXPIRES_S) {
    throw new AppError('invalid_request', `expires_in_seconds must be an integer from ${MIN_EXPIRES_S} to ${MAX_EXPIRES_S}`);
  }
  return n;
}

export function parseUpload(req: Request): Promise<ParsedUpload> {
  if (!req.is('multipart/form-data')) return Promise.reject(new AppError('invalid_request', 'send multipart/form-data with a `file` part'));
  // fileSize one over the limit: busboy reports 'limit' on reaching fileSize, and a file of
  // exactly MAX_FILE_BYTES is allowed.
  // files: 2, the `file` part and `expires_in_seconds` sent as a part with a filename.
  const limits = { fileSize: MAX_FILE_BYTES + 1, files: 2, fields: 10, fieldSize: 1024, parts: 20, headerPairs: 20 };
  return readMultipart<ParsedUpload>(req, { limits }, (bb, read) => {
    let stored: Promise<StoredBlob> | null = null;
    let meta: { filename: string; mimeType: string } | null = null;
    let expires: string | null = null;

    bb.on('file', (name, stream: Readable & { truncated?: boolean }, info) => {
      stream.on('error', () => undefined); // reported through busboy's own 'error' / the blob write
      // python-requests (`files=`) and other clients send form fields as parts with a filename:
      // `expires_in_seconds` is read the same whichever way it comes (it was silently dropped).
      if (name === 'expires_in_seconds') return void readSmallPart(stream, (value) => (expires = value));
      if (name !== 'file' || stored) return void stream.resume();
      meta = { filename: info.filename || 'upload', mimeType: info.mimeType || 'application/octet-stream' };
      const bad = textProblem(meta.filename) ?? textProblem(meta.mimeType);
      if (bad) return void read.fail(new AppError('invalid_request', `the file part's filename or type ${bad}`));
      stream.on('limit', () => read.fail(tooLarge()));
      stored = blobStore().put(stream, { maxBytes: MAX_FILE_BYTES });
      stored.catch(() => undefined);
    });
    bb.on('field', (name, value) => {
      if (name === 'expires_in_seconds') expires = value;
    });
    bb.on('close', async () => {
      if (read.settled) return;
      try {
        if (!stored || !meta) throw new AppError('invalid_request', 'the multipart body has no `file` part');
        let blob: StoredBlob;
        try {
          blob = await stored;
        } catch (err) {
          throw err instanceof BlobTooLargeError ? tooLarge() : malformedMultipart(err);
        }
        if (read.settled) return; // the client left while the last bytes were written
        let expiresInSeconds: number | null;
        try {
          expiresInSeconds = parseExpires(expires);
        } catch (err) {
          await blobStore().delete(blob.key);
          throw err;
        }
        read.succeed({ blob, ...meta, expiresInSeconds });
      } catch (err) {
        read.fail(err instanceof AppError ? err : malformedMultipart(err));
      }
    });
    // A refusal deletes a finished blob (a failed write removed its own) before answering.
    return () => (stored ? stored.then((blob) => blobStore().delete(blob.key)) : Promise.resolve());
  });
}

/** A field sent as a file part: its text (at most 64 bytes; more can be no valid value). */
function readSmallPart(stream: Readable, done: (value: string) => void) {
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= 64) chunks.push(chunk);
  });
  stream.on('end', () => done(size <= 64 ? Buffer.concat(chunks).toString('utf8') : 'too long'));
}
