// Streams a multipart upload (part `file`, optional `expires_in_seconds` as a field or as a part
// with a filename) into the blob store,
// never holding the whole file in memory. Exactly 32 MiB is accepted; one byte more answers 413
// file_too_large. Every way an upload can go wrong (malformed or truncated multipart, a huge
// part header, the client leaving mid-upload) rejects with a 4xx and leaves no blob behind.
import busboy from 'busboy';
import type { Request } from 'express';
import type { Readable } from 'node:stream';
import { AppError } from '../errors.js';
import { blobStore, BlobTooLargeError, type StoredBlob } from '../blobs/blob-store.js';
import { MAX_FILE_BYTES, MIN_EXPIRES_S, MAX_EXPIRES_S } from './files.js';
import { drainRequest, onClientGone } from '../wire/request-stream.js';
import { textProblem } from '../wire/text.js';

export interface ParsedUpload {
  blob: StoredBlob;
  filename: string;
  mimeType: string;
  expiresInSeconds: number | null;
}

const tooLarge = () => new AppError('file_too_large', 'files are limited to 32 MiB (33554432 bytes)');
const malformed = (err: unknown) => new AppError('invalid_request', `malformed multipart body: ${(err as Error)?.message ?? 'unreadable'}`);

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
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      // fileSize one over the limit: busboy reports 'limit' on reaching fileSize, and a file of
      // exactly MAX_FILE_BYTES is allowed.
      // files: 2, the `file` part and `expires_in_seconds` sent as a part with a filename.
      bb = busboy({ headers: req.headers, limits: { fileSize: MAX_FILE_BYTES + 1, files: 2, fields: 10, fieldSize: 1024, parts: 20, headerPairs: 20 } });
    } catch (err) {
      return reject(malformed(err));
    }
    let stored: Promise<StoredBlob> | null = null;
    let meta: { filename: string; mimeType: string } | null = null;
    let expires: string | null = null;
    let settled = false;

    const stopWatching = onClientGone(req, (err) => fail(malformed(err), false));
    /** Refuses the upload: stops parsing, removes whatever was stored, drains or drops the rest. */
    function fail(err: AppError, drain = true) {
      if (settled) return;
      settled = true;
      stopWatching();
      req.unpipe(bb);
      // Not from inside busboy's own callback ('limit', 'file', 'data'): it still uses its state
      // after emitting. Destroying also ends a file stream in progress (its blob write fails).
      process.nextTick(() => bb.destroy());
      if (drain) drainRequest(req);
      // Answer once nothing is left behind: a finished blob is deleted, a failed write removed its own.
      const cleaned = stored ? stored.then((blob) => blobStore().delete(blob.key)).catch(() => undefined) : Promise.resolve();
      void cleaned.then(() => reject(err));
    }

    bb.on('file', (name, stream: Readable & { truncated?: boolean }, info) => {
      stream.on('error', () => undefined); // reported through busboy's own 'error' / the blob write
      // python-requests (`files=`) and other clients send form fields as parts with a filename:
      // `expires_in_seconds` is read the same whichever way it comes (it was silently dropped).
      if (name === 'expires_in_seconds') return void readSmallPart(stream, (value) => (expires = value));
      if (name !== 'file' || stored) return void stream.resume();
      meta = { filename: info.filename || 'upload', mimeType: info.mimeType || 'application/octet-stream' };
      const bad = textProblem(meta.filename) ?? textProblem(meta.mimeType);
      if (bad) return void fail(new AppError('invalid_request', `the file part's filename or type ${bad}`));
      stream.on('limit', () => fail(tooLarge()));
      stored = blobStore().put(stream, { maxBytes: MAX_FILE_BYTES });
      stored.catch(() => undefined);
    });
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
    bb.on('field', (name, value) => {
      if (name === 'expires_in_seconds') expires = value;
    });
    bb.on('error', (err) => fail(malformed(err)));
    bb.on('close', async () => {
      if (settled) return;
      try {
        if (!stored || !meta) throw new AppError('invalid_request', 'the multipart body has no `file` part');
        let blob: StoredBlob;
        try {
          blob = await stored;
        } catch (err) {
          throw err instanceof BlobTooLargeError ? tooLarge() : malformed(err);
        }
        if (settled) return; // the client left while the last bytes were written
        let expiresInSeconds: number | null;
        try {
          expiresInSeconds = parseExpires(expires);
        } catch (err) {
          await blobStore().delete(blob.key);
          throw err;
        }
        settled = true;
        stopWatching();
        resolve({ blob, ...meta, expiresInSeconds });
      } catch (err) {
        fail(err instanceof AppError ? err : malformed(err));
      }
    });
    req.pipe(bb);
  });
}
