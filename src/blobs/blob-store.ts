// Where file bytes live. A filesystem store under DATA_DIR by default; the interface is what an
// S3-compatible store implements (put a stream, get a stream, delete).
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { service } from '../services/registry.js';

/** Counts and hashes the bytes flowing through; fails past `maxBytes` (uploads stop there). */
export class BlobMeter extends Transform {
  size = 0;
  private readonly hash = createHash('sha256');
  constructor(private readonly maxBytes: number | undefined) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null, data?: Buffer) => void): void {
    this.size += chunk.length;
    if (this.maxBytes !== undefined && this.size > this.maxBytes) return done(new BlobTooLargeError(`over ${this.maxBytes} bytes`));
    this.hash.update(chunk);
    done(null, chunk);
  }
  sha256(): string {
    return this.hash.digest('hex');
  }
}

export interface StoredBlob {
  key: string;
  size: number;
  sha256: string;
}

export interface BlobStore {
  /** Streams `source` into a new blob; rejects (and leaves nothing) if `maxBytes` is exceeded. */
  put(source: Readable, opts?: { maxBytes?: number }): Promise<StoredBlob>;
  /** Streams `source` into the blob `key`, replacing it only once complete (snapshots). */
  putAt(key: string, source: Readable, opts?: { maxBytes?: number }): Promise<StoredBlob>;
  get(key: string): Readable;
  read(key: string): Promise<Buffer>;
  delete(key: string): Promise<void>;
}

export class BlobTooLargeError extends Error {}

export function fsBlobStore(root: string): BlobStore {
  fs.mkdirSync(root, { recursive: true });
  const pathOf = (key: string) => {
    if (!/^[a-z0-9]+$/.test(key)) throw new Error('invalid blob key');
    return path.join(root, key.slice(0, 2), key);
  };
  /** Writes `source` to `file` through the size/hash meter; leaves nothing behind on failure. */
  const writeMetered = async (source: Readable, file: string, maxBytes: number | undefined): Promise<{ size: number; sha256: string }> => {
    // Until pipeline() takes over (after the mkdir), a source error must not go unhandled;
    // pipeline() still sees the stream destroyed and rejects.
    source.on('error', () => undefined);
    await fsp.mkdir(path.dirname(file), { recursive: true });
    const meter = new BlobMeter(maxBytes);
    const out = fs.createWriteStream(file, { flags: 'wx' });
    try {
      await pipeline(source, meter, out);
    } catch (err) {
      // A source that failed (client gone, truncated multipart, over the limit) leaves nothing:
      // wait until the write stream has closed its file, or the removal could precede the open.
      out.destroy();
      if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
      await fsp.rm(file, { force: true });
      throw err;
    }
    return { size: meter.size, sha256: meter.sha256() };
  };
  return {
    async put(source, opts = {}) {
      const key = randomBytes(16).toString('hex');
      return { key, ...(await writeMetered(source, pathOf(key), opts.maxBytes)) };
    },
    async putAt(key, source, opts = {}) {
      const file = pathOf(key);
      const partial = `${file}.${randomBytes(6).toString('hex')}.part`;
      const written = await writeMetered(source, partial, opts.maxBytes);
      await fsp.rename(partial, file);
      return { key, ...written };
    },
    get: (key) => fs.createReadStream(pathOf(key)),
    read: (key) => fsp.readFile(pathOf(key)),
    delete: (key) => fsp.rm(pathOf(key), { force: true }),
  };
}

declare module '../services/registry.js' {
  interface Services {
    /** BLOB_STORE=local (DATA_DIR/blobs) or s3 (src/blobs/configured-blob-store.ts). */
    blobStore: BlobStore;
  }
}

export function blobStore(): BlobStore {
  return service('blobStore');
}
