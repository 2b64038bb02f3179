// Prints schema.graphql from the Pothos schema; `--check` fails when the checked-in file is stale.
import fs from 'node:fs';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from '../src/graphql/schema.js';

const file = new URL('../schema.graphql', import.meta.url);
const printed = printSchema(lexicographicSortSchema(schema)) + '\n';
if (process.argv.includes('--check')) {
  const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  if (current !== printed) {
    console.error('schema.graphql is stale: run `npm run schema:print` and commit it');
    process.exit(1);
  }
  console.log('schema.graphql is current');
} else {
  fs.writeFileSync(file, printed);
  console.log('wrote schema.graphql');
}
process.exit(0);
