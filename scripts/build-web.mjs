#!/usr/bin/env node
// Builds the browser assets into web/dist (not checked in; `npm install` runs this, and so does
// `npm run web:build`): the dashboard (web/app), GraphiQL (web/graphiql) with the Monaco editor's
// web workers. Reproducible: the same sources and lockfile give the same files.
// `--if-stale` skips the build when web/dist/build.json records the current sources' hash.
import * as esbuild from 'esbuild';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const WEB_DIST = path.join(ROOT, 'web', 'dist');
const SOURCES = ['web/app', 'web/graphiql', 'web/shared', 'package-lock.json', 'scripts/build-web.mjs'];

function listFiles(p) {
  const abs = path.join(ROOT, p);
  if (!fs.existsSync(abs)) return [];
  if (fs.statSync(abs).isFile()) return [p];
  return fs.readdirSync(abs, { withFileTypes: true }).flatMap((d) => listFiles(path.join(p, d.name)));
}

/** A hash of everything the build reads from the project (dependencies via the lockfile). */
export function sourceHash() {
  const h = createHash('sha256');
  for (const f of SOURCES.flatMap(listFiles).sort())
    h.update(f)
      .update('\0')
      .update(fs.readFileSync(path.join(ROOT, f)))
      .update('\0');
  return h.digest('hex');
}

function readManifest() {
  try {
    return JSON.parse(fs.readFileSync(path.join(WEB_DIST, 'build.json'), 'utf8'));
  } catch {
    return null;
  }
}

const common = {
  absWorkingDir: ROOT,
  bundle: true,
  minify: true,
  legalComments: 'none',
  target: ['chrome110', 'firefox115', 'safari16'],
  define: { 'process.env.NODE_ENV': '"production"' },
  logLevel: 'warning',
  jsx: 'automatic',
};

function monacoWorkers() {
  // The workers GraphiQL's editors start (editor, JSON for variables/headers, GraphQL language).
  const req = createRequire(path.join(ROOT, 'node_modules/@graphiql/react/package.json'));
  return {
    'editor.worker': req.resolve('monaco-editor/esm/vs/editor/editor.worker.js'),
    'json.worker': req.resolve('monaco-editor/esm/vs/language/json/json.worker.js'),
    'graphql.worker': req.resolve('monaco-graphql/esm/graphql.worker.js'),
  };
}

export async function buildWeb({ ifStale = false } = {}) {
  const hash = sourceHash();
  if (ifStale && readManifest()?.hash === hash) return { built: false };
  const started = Date.now();
  fs.rmSync(WEB_DIST, { recursive: true, force: true });
  const [app] = await Promise.all([
    esbuild.build({
      ...common,
      entryPoints: { main: 'web/app/main.tsx' },
      outdir: path.join(WEB_DIST, 'app'),
      format: 'esm',
      metafile: true,
      // The dashboard is written against React's API and runs on Preact's (a tenth of the code
      // to download and parse: the first load is faster). GraphiQL keeps React itself.
      alias: { react: 'preact/compat', 'react-dom': 'preact/compat', 'react/jsx-runtime': 'preact/jsx-runtime' },
    }),
    esbuild.build({
      ...common,
      entryPoints: { main: 'web/graphiql/main.tsx' },
      outdir: path.join(WEB_DIST, 'graphiql'),
      format: 'esm',
      splitting: true,
      chunkNames: 'chunks/[name]-[hash]',
      loader: { '.ttf': 'file', '.woff': 'file', '.woff2': 'file' },
    }),
    esbuild.build({
      ...common,
      entryPoints: monacoWorkers(),
      outdir: path.join(WEB_DIST, 'graphiql', 'workers'),
      format: 'iife',
    }),
  ]);
  const appBytes = Object.entries(app.metafile.outputs).reduce((n, [, o]) => n + o.bytes, 0);
  fs.writeFileSync(path.join(WEB_DIST, 'build.json'), JSON.stringify({ hash, builtAt: new Date().toISOString() }, null, 2) + '\n');
  return { built: true, ms: Date.now() - started, appBytes };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = await buildWeb({ ifStale: process.argv.includes('--if-stale') });
  if (result.built) process.stdout.write(`web assets built into web/dist in ${result.ms} ms (dashboard ${Math.round(result.appBytes / 1024)} KB)\n`);
  else process.stdout.write('web assets are current (web/dist)\n');
}
