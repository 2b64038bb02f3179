// Start-up warnings about a deployment that looks shared by several processes (DATABASE_URL or
// REDIS_URL set) while blobs or sandboxes stay in this process's DATA_DIR: another process cannot
// read an upload stored here (its POST /sessions answers 404) nor exec into a sandbox made here.
// One API process on PostgreSQL/Redis with local storage is fine (compose does it): a warning, not an error.

export interface DeploymentShape {
  databaseUrl?: string | null;
  redisUrl?: string | null;
  /** BLOB_STORE: local (default) or s3. */
  blobStore?: string | null;
  sandboxDriver: string;
}

export function sharedStateWarnings(shape: DeploymentShape): string[] {
  const shared = [shape.databaseUrl ? 'DATABASE_URL' : null, shape.redisUrl ? 'REDIS_URL' : null].filter(Boolean);
  if (!shared.length) return [];
  const why = `${shared.join(' and ')} set (a deployment several API processes can share)`;
  const out: string[] = [];
  if ((shape.blobStore || 'local') === 'local') {
    out.push(
      `${why} but blobs are local (BLOB_STORE=local, DATA_DIR/blobs): a file uploaded through one process cannot be used through another; run one API process or set BLOB_STORE=s3`,
    );
  }
  if (shape.sandboxDriver === 'local') {
    out.push(
      `${why} but sandboxes are local (SANDBOX_DRIVER=local, DATA_DIR/sandboxes): a session's sandbox lives only in the process that made it; run one API process per host or set SANDBOX_DRIVER=kubernetes`,
    );
  }
  return out;
}
