// `prisma generate` without the native schema engine (which cannot be downloaded offline):
// generate does not use it, but the CLI insists on a path, so it gets a placeholder file.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const placeholder = path.join(os.tmpdir(), 'agent-service-no-schema-engine');
if (!fs.existsSync(placeholder)) fs.writeFileSync(placeholder, '');
const result = spawnSync(process.execPath, [path.resolve('node_modules/prisma/build/index.js'), 'generate'], {
  stdio: 'inherit',
  env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: placeholder, PRISMA_HIDE_UPDATE_MESSAGE: '1' },
});
process.exit(result.status ?? 1);
