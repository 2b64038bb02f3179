import { defineConfig } from 'vitest/config';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS and ESM copies; load exactly one so schemas and executors agree.
    alias: { graphql: require.resolve('graphql') },
  },
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // The suite mostly waits (CLIs, sandboxes, fake servers, timers): two files at a time even on
    // two cores (the default, cores − 1, ran one at a time there and took twice as long).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // The services a process without a server has (src/composition/standalone.ts), installed explicitly.
    setupFiles: ['test/helpers/standalone-services.ts'],
    globalSetup: ['test/helpers/database-image.ts'],
    testTimeout: 30_000,
    // The suite is a local development setup: its receivers, git server and providers listen on
    // loopback, which the outbound guard refuses unless allow-listed (test/net/ssrf.test.ts clears it).
    // Test servers stop at once rather than waiting for turns to finish (the stopping tests set theirs).
    env: { OUTBOUND_ALLOW: '127.0.0.0/8,::1', SHUTDOWN_DRAIN_MS: '0' },
    hookTimeout: 60_000,
    reporters: ['default'],
    // A worker runs its files one after another in one process, their modules loaded once: loading
    // the service's module graph afresh for each file cost ≈ 3 s of CPU per file, about half the
    // suite's CPU time. Each file still starts its own servers and databases; the setup file gives
    // it the worker's original environment; process-wide metrics are compared as deltas.
    isolate: false,
  },
});
