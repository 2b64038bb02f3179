// `prisma generate` without the native schema engine (which cannot be downloaded offline):
// generate does not use it, but the CLI insists on a path, so it gets a placeholder file.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const placeholder = path.join(os.tmpdir(), 'agent-service-no-schema-engine');
if (!fs.existsSync(placeholder)) fs.writeFileSync(placeholder, '');
// Generators run as commands (prisma-pothos-types): put node_modules/.bin on PATH, as `npm run`
// does, so this also works as `node scripts/prisma-generate.mjs`. Windows spells it `Path`.
const pathKey = Object.keys(process.env).find((k) => k.toUpperCase() === 'PATH') ?? 'PATH';
const bin = path.join(root, 'node_modules', '.bin');
const result = spawnSync(process.execPath, [path.join(root, 'node_modules/prisma/build/index.js'), 'generate'], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    [pathKey]: [bin, process.env[pathKey]].filter(Boolean).join(path.delimiter),
    PRISMA_SCHEMA_ENGINE_BINARY: placeholder,
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
  },
});
process.exit(result.status ?? 1);
