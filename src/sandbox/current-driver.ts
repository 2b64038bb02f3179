// The process's sandbox driver as composed at start-up (src/runtime/sandboxes.ts chooses and
// builds it, local or kubernetes): every layer that runs something in a session's sandbox (the
// runtime, the MCP relay, resource operations) reads it here.
import type { SandboxDriver } from './driver.js';
import { service } from '../services/registry.js';

declare module '../services/registry.js' {
  interface Services {
    sandboxDriver: SandboxDriver;
  }
}

export function sandboxDriver(): SandboxDriver {
  return service('sandboxDriver');
}
