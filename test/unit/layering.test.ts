// The code's layering, checked on the import graph of src/ and rest/ (static `import … from`,
// `export … from`, side-effect and dynamic imports of relative paths): no import cycles, the
// HTTP layer of src/ never reaches into rest/ (the route table is handed to it at start-up), and
// every import points down the layers of docs/architecture.md (LAYERS below, top first): a file
// may import its own layer or a lower one, never a higher one. A new folder must be placed.
import fs from 'node:fs';
import path from 'node:path';
import { describe, it, expect } from 'vitest';

const root = path.resolve(__dirname, '../..');

/** The layers, top first; a folder (or a file of src/) belongs to the layer that names it. */
const LAYERS: { layer: string; paths: string[] }[] = [
  {
    layer: 'entry',
    paths: ['src/main.ts', 'src/server.ts', 'src/shutdown.ts', 'src/banner.ts', 'src/deployment-warnings.ts', 'src/process-safety.ts', 'src/composition'],
  },
  { layer: 'edge', paths: ['src/http', 'rest', 'src/ratelimit'] },
  { layer: 'api', paths: ['src/graphql'] },
  {
    layer: 'domain',
    paths: ['src/agents', 'src/sessions', 'src/channels', 'src/routines', 'src/skills', 'src/environments', 'src/vaults', 'src/resources', 'src/memory'],
  },
  { layer: 'runtime', paths: ['src/runtime', 'src/engines', 'src/egress'] },
  { layer: 'models and tools', paths: ['src/gateway', 'src/tools', 'src/billing'] },
  { layer: 'shared records', paths: ['src/auth', 'src/universes', 'src/files', 'src/events', 'src/webhooks', 'src/catalog'] },
  { layer: 'infrastructure', paths: ['src/db', 'src/blobs', 'src/sandbox', 'src/net', 'src/crypto', 'src/redis.ts', 'src/wire'] },
  {
    layer: 'foundation',
    paths: [
      'src/config.ts',
      'src/logger.ts',
      'src/errors.ts',
      'src/ids.ts',
      'src/money.ts',
      'src/validation.ts',
      'src/pagination',
      'src/contract',
      'src/services',
      'src/generated',
      'src/telemetry',
    ],
  },
];

const posixOf = (file: string) => file.split(path.sep).join('/');

/** The layer index of a file (0 is the top), from the longest path of LAYERS that contains it. */
function layerOf(file: string): number | null {
  const posix = posixOf(file);
  let rank: number | null = null;
  let longest = 0;
  for (const [index, { paths }] of LAYERS.entries()) {
    for (const p of paths) {
      if ((posix === p || posix.startsWith(`${p}/`)) && p.length > longest) [rank, longest] = [index, p.length];
    }
  }
  return rank;
}

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

  it('places every file of src/ and rest/ in a layer', () => {
    const unplaced = [...graph.keys()].filter((file) => layerOf(file) === null).map(posixOf);
    expect(unplaced).toEqual([]);
  });

  it('imports only point down the layers (same layer or lower)', () => {
    const arrows: string[] = [];
    for (const [file, targets] of graph) {
      const from = layerOf(file);
      for (const target of targets) {
        const to = layerOf(target);
        if (from === null || to === null || to >= from) continue;
        const arrow = `${posixOf(file)} → ${posixOf(target)}`;
        arrows.push(`${arrow} (${LAYERS[from]!.layer} → ${LAYERS[to]!.layer})`);
      }
    }
    expect(arrows, `imports running up the layers:\n${arrows.join('\n')}`).toEqual([]);
  });

  it('src/http never imports rest/', () => {
    const offenders = [...graph].filter(([file, targets]) => file.startsWith(path.normalize('src/http/')) && targets.some((t) => t.startsWith('rest')));
    expect(offenders.map(([file]) => file)).toEqual([]);
  });
});
