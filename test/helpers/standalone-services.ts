// Vitest setup file: every test file starts with the standalone services installed (env config,
// in-memory pub/sub, system DNS…: src/composition/standalone.ts), as a process without a server
// has them. A server the file starts composes its own on top and ends them when it stops.
import { installServices } from '../../src/services/registry.js';
import { standaloneServices } from '../../src/composition/standalone.js';

installServices(standaloneServices());
