// The start-up warnings for a deployment several processes could share (DATABASE_URL/REDIS_URL)
// whose blobs or sandboxes are still local to one process's DATA_DIR.
import { describe, expect, it } from 'vitest';
import { sharedStateWarnings } from '../../src/deployment-warnings.js';

describe('sharedStateWarnings', () => {
  it('says nothing on the embedded defaults, whatever the storage', () => {
    expect(sharedStateWarnings({ sandboxDriver: 'local' })).toEqual([]);
    expect(sharedStateWarnings({ blobStore: 'local', sandboxDriver: 'local', databaseUrl: '', redisUrl: null })).toEqual([]);
  });

  it('warns about local blobs and local sandboxes when PostgreSQL or Redis is configured', () => {
    for (const shared of [{ databaseUrl: 'postgres://db/x' }, { redisUrl: 'redis://r:6379' }]) {
      const warnings = sharedStateWarnings({ ...shared, sandboxDriver: 'local' });
      expect(warnings).toHaveLength(2);
      expect(warnings[0]).toMatch(/blobs are local.*BLOB_STORE=s3/);
      expect(warnings[1]).toMatch(/sandboxes are local.*SANDBOX_DRIVER=kubernetes/);
      expect(warnings.every((w) => w.includes(shared.databaseUrl ? 'DATABASE_URL' : 'REDIS_URL'))).toBe(true);
    }
  });

  it('names only what is still local', () => {
    const shared = { databaseUrl: 'postgres://db/x', redisUrl: 'redis://r:6379' };
    expect(sharedStateWarnings({ ...shared, blobStore: 's3', sandboxDriver: 'local' })).toEqual([expect.stringMatching(/sandboxes are local/)]);
    expect(sharedStateWarnings({ ...shared, blobStore: 'local', sandboxDriver: 'kubernetes' })).toEqual([expect.stringMatching(/blobs are local/)]);
    expect(sharedStateWarnings({ ...shared, blobStore: 's3', sandboxDriver: 'kubernetes' })).toEqual([]);
  });
});
