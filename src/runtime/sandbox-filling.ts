// What a session's sandbox receives besides its engine: the session's resources (files,
// repositories) and its agent's skills. Both are domain operations (syncResources in
// src/resources/resources.ts, materializeSkills in src/skills/materialize.ts) that the runtime
// calls at run time (a replacement pod, a turn after resources were added), so the composition
// installs them here and the runtime reads them without importing the domain above it.
import type { Sandbox } from '../sandbox/driver.js';
import { service } from '../services/registry.js';

export interface SandboxFilling {
  /** Copies or clones the session's resources the sandbox does not have yet. */
  syncResources(sessionId: string, sandbox: Sandbox): Promise<void>;
  /** Places the agent's skills where the session's engine reads them. */
  materializeSkills(sessionId: string, sandbox: Sandbox): Promise<void>;
}

declare module '../services/registry.js' {
  interface Services {
    sandboxFilling: SandboxFilling;
  }
}

export function sandboxFilling(): SandboxFilling {
  return service('sandboxFilling');
}
