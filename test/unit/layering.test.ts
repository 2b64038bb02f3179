// The code's layering, checked on the import graph of src/ and rest/ (static `import … from`,
// `export … from`, side-effect and dynamic imports of relative paths): no import cycles, and the
// HTTP layer of src/ never reaches into rest/ (the route table is handed to it at start-up).
import fs from 'node:fs';
import path from 'node:path';
import { describe, it, expect } from 'vitest';

const root = path.resolve(__dirname, '../..');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'generated' ? [] : sourceFiles(rel);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}

function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of [...sourceFiles('src'), ...sourceFiles('rest')]) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.[^'"]+)['"]/g)].map((m) => m[1]!);
    const targets = specifiers
      .map((name) => path.normalize(path.join(path.dirname(file), name)).replace(/\.js$/, '.ts'))
      .filter((target) => fs.existsSync(path.join(root, target)));
    graph.set(file, targets);
  }
  return graph;
}

function findCycle(graph: Map<string, string[]>): string[] | null {
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): string[] | null => {
    if (state.get(node) === 'done') return null;
    if (state.get(node) === 'visiting') return [...stack.slice(stack.indexOf(node)), node];
    state.set(node, 'visiting');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(node, 'done');
    return null;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return null;
}

describe('layering', () => {
  const graph = importGraph();

  it('reads a real graph', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get(path.normalize('src/server.ts'))).toContain(path.normalize('src/http/app.ts'));
  });

  it('has no import cycles', () => {
    expect(findCycle(graph)).toBeNull();
  });

  it('src/http never imports rest/', () => {
    const offenders = [...graph].filter(([file, targets]) => file.startsWith(path.normalize('src/http/')) && targets.some((t) => t.startsWith('rest')));
    expect(offenders.map(([file]) => file)).toEqual([]);
  });
});
