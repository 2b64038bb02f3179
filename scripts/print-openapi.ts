// Writes the OpenAPI document served at /v1/openapi.json to openapi.json (for linting and
// for readers); `--check` fails when the checked-in file is stale.
import fs from 'node:fs';
import { buildOpenApi } from '../rest/openapi.js';
import { routes } from '../rest/routes/index.js';

const file = new URL('../openapi.json', import.meta.url);
const printed = JSON.stringify(buildOpenApi(routes), null, 2) + '\n';
if (process.argv.includes('--check')) {
  if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== printed) {
    console.error('openapi.json is stale: run `npm run openapi:print` and commit it');
    process.exit(1);
  }
  console.log('openapi.json is current');
} else {
  fs.writeFileSync(file, printed);
  console.log('wrote openapi.json');
}
process.exit(0);
