// Configuration is read in one place: no file of src/ or rest/ but src/config.ts reads
// `process.env`, except the allow-listed ones below, each with its reason.
import fs from 'node:fs';
import path from 'node:path';
import { describe, it, expect } from 'vitest';

const root = path.resolve(__dirname, '../..');

/** Files that may read process.env, and why. */
const allowed: Record<string, string> = {
  'src/config.ts': 'the one place configuration is read',
  'src/resources/clone.ts': 'hands PATH on to the git child process (not configuration)',
  'src/environments/install-managers.ts': "hands the service's environment on to package managers (not configuration)",
  'src/engines/cli/core/install.ts': 'hands a filtered environment on to the installer (not configuration)',
};

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return e.name === 'generated' ? [] : sourceFiles(rel);
    return e.name.endsWith('.ts') ? [rel] : [];
  });
}

describe('configuration reads', () => {
  const files = [...sourceFiles('src'), ...sourceFiles('rest')];

  it('scans the real tree', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(fs.readFileSync(path.join(root, 'src/config.ts'), 'utf8')).toMatch(/process\.env/);
  });

  it('no file but src/config.ts reads process.env (allow-listed pass-through aside)', () => {
    const offenders = files.filter((file) => !(file in allowed) && /process\.env\b/.test(fs.readFileSync(path.join(root, file), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
