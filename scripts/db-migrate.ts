// `npm run db:migrate`: applies prisma/migrations to DATABASE_URL, or to the PGlite data folder.
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { applyMigrations } from '../src/db/migrate.js';
import { splitSchema } from '../src/db/client.js';

let applied: string[];
if (process.env.DATABASE_URL) {
  const { url, schema } = splitSchema(process.env.DATABASE_URL);
  applied = await applyMigrations({ kind: 'postgres', url, schema });
} else {
  const dataDir = path.resolve(process.env.DATA_DIR || './.data');
  fs.mkdirSync(dataDir, { recursive: true }); // PGlite creates only the last folder
  const pglite = await PGlite.create(path.join(dataDir, 'pglite'));
  applied = await applyMigrations({ kind: 'pglite', pglite });
  await pglite.close();
}
console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
process.exit(0);
