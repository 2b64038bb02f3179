// Vitest setup file: every test file starts with the standalone services installed (env config,
// in-memory pub/sub, system DNS…: src/composition/standalone.ts), as a process without a server
// has them. A server the file starts composes its own on top and ends them when it stops.
import { installServices } from '../../src/services/registry.js';
import { standaloneServices } from '../../src/composition/standalone.js';

// Files share their worker process (isolate: false): each starts from the environment the
// worker started with, whatever the file before it set and did not put back.
const initialEnv: Record<string, string | undefined> = ((globalThis as { __initialEnv?: Record<string, string | undefined> }).__initialEnv ??= {
  ...process.env,
});
for (const key of Object.keys(process.env)) if (!(key in initialEnv)) delete process.env[key];
Object.assign(process.env, initialEnv);

installServices(standaloneServices());
