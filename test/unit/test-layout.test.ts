// The tests are laid out like the code: no test file at test/'s root, and every folder of test/
// is named after a folder of src/ (or rest/, web/, docker/, src/server.ts's start and stop), or
// is one of the shared folders (helpers, fixtures, fakes) or unit/.
import fs from 'node:fs';
import path from 'node:path';
import { describe, it, expect } from 'vitest';

const root = path.resolve(__dirname, '../..');
const dirs = (dir: string) =>
  fs
    .readdirSync(path.join(root, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);

/** Folders of test/ that are not named after a folder of src/, and what they hold. */
const others: Record<string, string> = {
  rest: 'rest/ (the route table, the OpenAPI document, dispatch)',
  web: 'web/ (the dashboard)',
  docker: 'docker/ (images and Kubernetes manifests)',
  server: 'src/server.ts, src/banner.ts, src/shutdown.ts (start-up and stopping)',
  unit: 'tests that need no server, and the checks on the code itself',
  helpers: 'shared test helpers',
  fixtures: 'recorded data',
};

describe('test layout', () => {
  it('no test file lies at the root of test/', () => {
    expect(fs.readdirSync(path.join(root, 'test')).filter((name) => name.endsWith('.test.ts'))).toEqual([]);
  });

  it('every folder of test/ mirrors a folder of the code, or is a shared one', () => {
    const code = new Set(dirs('src'));
    const stray = dirs('test').filter((name) => !code.has(name) && !(name in others) && !name.startsWith('fake-'));
    expect(stray).toEqual([]);
  });
});
