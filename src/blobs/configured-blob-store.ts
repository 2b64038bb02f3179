// Which blob store this process uses: BLOB_STORE=local (default: a directory under DATA_DIR,
// one host only) or s3 (an S3-compatible bucket that several API processes share).
import { environment } from '../config.js';
import path from 'node:path';
import { fsBlobStore, type BlobStore } from './blob-store.js';
import { loadS3Settings, s3BlobStore } from './s3-blob-store.js';

export function configuredBlobStore(dataDir: string, env: NodeJS.ProcessEnv = environment()): BlobStore {
  const kind = env.BLOB_STORE || 'local';
  if (kind === 's3') return s3BlobStore(loadS3Settings(env));
  if (kind !== 'local') throw new Error(`BLOB_STORE must be local or s3, got "${kind}"`);
  return fsBlobStore(path.join(dataDir, 'blobs'));
}
