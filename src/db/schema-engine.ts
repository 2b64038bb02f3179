// Prisma's schema engine as WebAssembly (@prisma/schema-engine-wasm): the native engine the
// Prisma CLI downloads is unreachable offline, so migrations run through this instead.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { bindMigrationAwareSqlAdapterFactory, type SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';

const require = createRequire(import.meta.url);

export interface WasmSchemaEngine {
  applyMigrations(input: unknown): Promise<{ appliedMigrationNames: string[] }>;
  diff(input: unknown): Promise<{ exitCode: number; stdout: string | null }>;
  free(): void;
}

type Bindings = Record<string, unknown> & {
  __wbg_set_wasm(exports: WebAssembly.Exports): void;
  SchemaEngine: { new: (options: unknown, log: (msg: string) => void, adapter: object) => Promise<WasmSchemaEngine> };
};

let bindings: Promise<Bindings> | undefined;

async function loadBindings(): Promise<Bindings> {
  const dir = path.dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
  const bg = (await import(pathToFileURL(path.join(dir, 'schema_engine_bg.js')).href)) as Bindings;
  const module = new WebAssembly.Module(fs.readFileSync(path.join(dir, 'schema_engine_bg.wasm')));
  const imports: Record<string, unknown> = { ...bg };
  // The engine arms a long timer; an unref'd one does not keep a script or a test alive.
  for (const name of Object.keys(bg).filter((k) => k.startsWith('__wbg_setTimeout_'))) {
    imports[name] = (fn: () => void, ms: number) => {
      const t = setTimeout(fn, ms >>> 0);
      t.unref?.();
      return t;
    };
  }
  const instance = new WebAssembly.Instance(module, { './schema_engine_bg.js': imports as WebAssembly.ModuleImports });
  bg.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();
  return bg;
}

export async function openSchemaEngine(adapterFactory: SqlMigrationAwareDriverAdapterFactory, datamodel?: { path: string; content: string }): Promise<WasmSchemaEngine> {
  bindings ??= loadBindings();
  const bg = await bindings;
  const adapter = bindMigrationAwareSqlAdapterFactory(adapterFactory);
  return bg.SchemaEngine.new({ datamodels: datamodel ? [[datamodel.path, datamodel.content]] : undefined }, () => undefined, adapter);
}
