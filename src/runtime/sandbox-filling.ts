// What a session's sandbox receives besides its engine (the session's resources: files,
// repositories, memory stores; its agent's skills) and what it gives back after a turn (memory
// store writes). These are domain operations (src/resources/resources.ts, src/skills/materialize.ts,
// src/memory/mount.ts) the runtime calls at run time (a turn, a replacement pod), so the
// composition installs them here and the runtime reads them without importing the domain above it.
import type { Sandbox } from '../sandbox/driver.js';
import type { SessionResource } from '../generated/prisma/client.js';
import { service } from '../services/registry.js';

export interface SandboxFilling {
  /** Copies or clones the session's resources the sandbox does not have yet; returns every resource of the session (read once). */
  syncResources(sessionId: string, sandbox: Sandbox): Promise<SessionResource[]>;
  /** Places the agent's skills where the session's engine reads them. */
  materializeSkills(sessionId: string, sandbox: Sandbox): Promise<void>;
  /** After a turn: the writes in the session's mounted memory stores become versions (never throws). */
  syncMemoryBack(sessionId: string, turn: number): Promise<unknown>;
}

declare module '../services/registry.js' {
  interface Services {
    sandboxFilling: SandboxFilling;
  }
}

export function sandboxFilling(): SandboxFilling {
  return service('sandboxFilling');
}
