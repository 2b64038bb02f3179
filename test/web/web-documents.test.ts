// Every GraphQL operation the dashboard sends is valid against the service's schema: the pages
// register their documents (web/shared/graphql.ts `doc`), this loads every dashboard module and
// validates them all, so a schema change that would break a page fails here, without a browser.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, validate } from 'graphql';
import { schema } from '../../src/graphql/schema.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const APP = path.join(ROOT, 'web/app');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    return d.isDirectory() ? sources(p) : /\.tsx?$/.test(d.name) ? [p] : [];
  });
}

describe('dashboard GraphQL documents', () => {
  it('are all defined with doc`…` in modules this test can load (not in the entry point)', () => {
    const entry = fs.readFileSync(path.join(APP, 'main.tsx'), 'utf8');
    expect(entry).not.toMatch(/doc`|`(query|mutation|subscription) /);
    for (const file of sources(APP)) {
      // A raw operation string passed to gql() would escape the validation below.
      expect(fs.readFileSync(file, 'utf8'), path.relative(ROOT, file)).not.toMatch(/gql(<[^>]*>)?\(\s*['`](query|mutation|subscription)\b/);
    }
  });

  it('validate against the schema the service serves', async () => {
    // Loaded by path (not imported) so the service's type-check does not compile the browser code.
    const registry = (await import(path.join(ROOT, 'web/shared/graphql.ts'))) as { documents: string[] };
    for (const file of sources(APP).filter((f) => !f.endsWith(`${path.sep}main.tsx`))) await import(file);
    const documents = registry.documents;
    expect(documents.length).toBeGreaterThan(25);
    const problems = documents.flatMap((text) => {
      const name = /^\s*(query|mutation|subscription)\s+(\w+)/.exec(text)?.[2] ?? text.slice(0, 40);
      return validate(schema, parse(text)).map((e) => `${name}: ${e.message}`);
    });
    expect(problems).toEqual([]);
  });
});
