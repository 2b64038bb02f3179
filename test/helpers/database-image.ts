// Vitest global setup: one migrated, empty PGlite database, made once per run in the main process
// and written to a file; each test server's in-memory database starts as a copy of it
// (test/helpers/server.ts). Creating a PGlite database from nothing (initdb) costs ≈ 1.5 s of CPU,
// loading the image ≈ 0.4 s; and the test workers, which run many files each, never start the
// migration engine for it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { applyMigrations } from '../../src/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated database image's file; empty when the tests run on PostgreSQL. */
    pgliteImageFile: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  if (process.env.TEST_DATABASE_URL) {
    project.provide('pgliteImageFile', '');
    return () => undefined;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-service-image-'));
  const file = path.join(dir, 'pglite.tar');
  const db = await PGlite.create('memory://');
  try {
    await applyMigrations({ kind: 'pglite', pglite: db });
    fs.writeFileSync(file, Buffer.from(await (await db.dumpDataDir('none')).arrayBuffer()));
  } finally {
    await db.close();
  }
  project.provide('pgliteImageFile', file);
  return () => fs.rmSync(dir, { recursive: true, force: true });
}
