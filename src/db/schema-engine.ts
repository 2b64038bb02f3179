// Prisma's schema engine as WebAssembly (@prisma/schema-engine-wasm): the native engine the
// Prisma CLI downloads is unreachable offline, so migrations run through this instead.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaPg } from '@prisma/adapter-pg';
import { bindMigrationAwareSqlAdapterFactory, type SqlDriverAdapter, type SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type { SchemaEngine } from '@prisma/schema-engine-wasm';
import { logger } from '../logger.js';

export type { SchemaEngine };
const require = createRequire(import.meta.url);

type Bindings = Record<string, unknown> & {
  __wbg_set_wasm(exports: WebAssembly.Exports): void;
  SchemaEngine: typeof SchemaEngine;
};

// The glue module is loaded once per process (Node's module cache) and holds one instance's
// exports, so the instance is one per process too, kept on globalThis: a second copy of this
// module (a test runner re-evaluating it) that instantiated its own would swap the glue's exports
// under the first one's engines, which then read another instance's memory.
const BINDINGS = Symbol.for('agent-service.schema-engine.bindings');
const shared = globalThis as { [BINDINGS]?: Promise<Bindings> };

// The package's entry imports the .wasm as an ES module, which Node 20 cannot; instantiate it
// by hand, as the package's own entry would.
async function loadBindings(): Promise<Bindings> {
  // A panic hands its message to this hook before the WebAssembly traps (Prisma's CLI installs
  // one); without it the hook itself throws and the message is lost.
  const hooks = globalThis as { PRISMA_WASM_PANIC_REGISTRY?: { set_message(message: string): void } };
  hooks.PRISMA_WASM_PANIC_REGISTRY ??= { set_message: (message) => logger.error({ panic: message }, 'the migration engine panicked') };
  const dir = path.dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
  const bg = (await import(pathToFileURL(path.join(dir, 'schema_engine_bg.js')).href)) as Bindings;
  const module = new WebAssembly.Module(fs.readFileSync(path.join(dir, 'schema_engine_bg.wasm')));
  const imports: Record<string, unknown> = { ...bg };
  // The engine arms a 10 s timer per engine (and never clears it); unref'd, it cannot keep a
  // script, a test worker or a stopping server alive. It fires harmlessly after free().
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

/** A schema engine over `factory`. Call free() when done (it does not close the database). */
export async function openSchemaEngine(factory: SqlMigrationAwareDriverAdapterFactory, datamodel?: { path: string; content: string }): Promise<SchemaEngine> {
  shared[BINDINGS] ??= loadBindings();
  const bg = await shared[BINDINGS];
  const adapter = bindMigrationAwareSqlAdapterFactory(factory);
  return bg.SchemaEngine.new({ datamodels: datamodel ? [[datamodel.path, datamodel.content]] : undefined }, () => undefined, adapter);
}

// Both adapters' executeScript is unfit for migrations: adapter-pg splits the script on every
// ';' (breaking string literals and function bodies) and runs the pieces one by one;
// pglite-prisma-adapter does not await exec(), so a failing migration is recorded as applied
// and its error escapes as an unhandled rejection. Running the whole script as one simple
// query is what the native engine does: atomic (an implicit transaction) and awaited.
function wholeScripts<A extends SqlDriverAdapter>(adapter: A, run: (script: string) => Promise<unknown>): A {
  const toDriverError = (adapter as unknown as { onError?: (e: unknown) => never }).onError?.bind(adapter);
  adapter.executeScript = async (script: string) => {
    try {
      await run(script);
    } catch (e) {
      toDriverError?.(e); // rethrows as DriverAdapterError, so the engine shows the SQL error
      throw e;
    }
  };
  return adapter;
}

/** Migration adapter for a PGlite; shadow databases (diff from migrations) are in-memory PGlites. */
export function pgliteMigrationFactory(db: PGlite): SqlMigrationAwareDriverAdapterFactory {
  const base = new PrismaPGlite(db);
  return {
    provider: base.provider,
    adapterName: base.adapterName,
    connect: async () => wholeScripts(await base.connect(), (s) => db.exec(s)),
    connectToShadowDb: async () => {
      const shadow = await PGlite.create('memory://');
      const adapter = wholeScripts(await new PrismaPGlite(shadow).connect(), (s) => shadow.exec(s));
      adapter.dispose = () => shadow.close();
      return adapter;
    },
  };
}

/** Migration adapter for a pg pool whose search_path is already `schema`. */
export function pgMigrationFactory(pool: pg.Pool, schema?: string): SqlMigrationAwareDriverAdapterFactory {
  const base = new PrismaPg(pool, schema ? { schema } : undefined);
  return {
    provider: base.provider,
    adapterName: base.adapterName,
    connect: async () => wholeScripts(await base.connect(), (s) => pool.query(s)),
    connectToShadowDb: () => base.connectToShadowDb(),
  };
}
