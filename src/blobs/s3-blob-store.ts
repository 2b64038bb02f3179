// Blobs in an S3-compatible object store (AWS S3, MinIO, Ceph, R2, …) through @aws-sdk/client-s3:
// what several API processes on several hosts share (uploads, skill files, workspace
// snapshots). An upload is spooled to a temporary file while it is measured and hashed (the size
// limit applies before anything reaches the bucket), then sent with its length in one PUT.
import { environment } from '../config.js';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { BlobMeter, type BlobStore, type StoredBlob } from './blob-store.js';

export interface S3Settings {
  bucket: string;
  prefix: string;
  endpoint: string | undefined;
  region: string;
  forcePathStyle: boolean;
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
}

/**
 * BLOB_STORE=s3 with S3_BUCKET (required), S3_PREFIX (key prefix, default none), S3_ENDPOINT
 * (MinIO and other S3-compatible servers), S3_REGION (default us-east-1), S3_FORCE_PATH_STYLE
 * (default on when S3_ENDPOINT is set), S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY (else the
 * AWS SDK's usual credential chain: environment, profile, instance or pod role).
 */
export function loadS3Settings(env: NodeJS.ProcessEnv = environment()): S3Settings {
  if (!env.S3_BUCKET) throw new Error('BLOB_STORE=s3 needs S3_BUCKET');
  const endpoint = env.S3_ENDPOINT || undefined;
  return {
    bucket: env.S3_BUCKET,
    prefix: (env.S3_PREFIX ?? '').replace(/^\/+/, ''),
    endpoint,
    region: env.S3_REGION || env.AWS_REGION || 'us-east-1',
    forcePathStyle: env.S3_FORCE_PATH_STYLE ? env.S3_FORCE_PATH_STYLE === 'true' || env.S3_FORCE_PATH_STYLE === '1' : !!endpoint,
    credentials:
      env.S3_ACCESS_KEY_ID && env.S3_SECRET_ACCESS_KEY ? { accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY } : undefined,
  };
}

const notFound = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
};
/** A missing object as the filesystem store reports it (ENOENT), so callers handle both alike. */
const asEnoent = (err: unknown, key: string) => (notFound(err) ? Object.assign(new Error(`blob ${key} not found`), { code: 'ENOENT' }) : (err as Error));

export function s3BlobStore(settings: S3Settings, client?: S3Client): BlobStore {
  const s3 =
    client ??
    new S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: settings.forcePathStyle,
      credentials: settings.credentials,
      // Checksums only where S3 requires them: the SDK's default (aws-chunked bodies with checksum
      // trailers) is not understood by every S3-compatible server; the SHA-256 is ours anyway.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  const objectKey = (key: string) => {
    if (!/^[a-z0-9]+$/.test(key)) throw new Error('invalid blob key');
    return `${settings.prefix}${key}`;
  };

  /** Spools `source` to a temporary file through the meter, then PUTs it as `key`. */
  async function upload(key: string, source: Readable, maxBytes: number | undefined): Promise<StoredBlob> {
    source.on('error', () => undefined); // pipeline() below reports it
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'blob-spool-'));
    const spool = path.join(dir, 'data');
    try {
      const meter = new BlobMeter(maxBytes);
      await pipeline(source, meter, fs.createWriteStream(spool));
      const sha256 = meter.sha256();
      const size = meter.size;
      await s3.send(
        new PutObjectCommand({
          Bucket: settings.bucket,
          Key: objectKey(key),
          Body: fs.createReadStream(spool),
          ContentLength: size,
          ContentType: 'application/octet-stream',
        }),
      );
      return { key, size, sha256 };
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  }

  return {
    put: (source, opts = {}) => upload(randomBytes(16).toString('hex'), source, opts.maxBytes),
    putAt: (key, source, opts = {}) => upload(key, source, opts.maxBytes),
    get(key) {
      const out = new PassThrough();
      s3.send(new GetObjectCommand({ Bucket: settings.bucket, Key: objectKey(key) })).then(
        (res) => {
          const body = res.Body as Readable;
          body.on('error', (err) => out.destroy(err));
          body.pipe(out);
        },
        (err: unknown) => out.destroy(asEnoent(err, key)),
      );
      return out;
    },
    async read(key) {
      try {
        const res = await s3.send(new GetObjectCommand({ Bucket: settings.bucket, Key: objectKey(key) }));
        return Buffer.from(await res.Body!.transformToByteArray());
      } catch (err) {
        throw asEnoent(err, key);
      }
    },
    async delete(key) {
      await s3.send(new DeleteObjectCommand({ Bucket: settings.bucket, Key: objectKey(key) }));
    },
  };
}
