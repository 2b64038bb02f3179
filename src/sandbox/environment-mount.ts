// A session environment's installed packages as a sandbox sees them (EnvironmentMount, in
// driver.ts): the search-path variables of a command with the environment's directories first.
import type { EnvironmentMount } from './driver.js';
import { cleanEnv } from './jail.js';

/** `extra` (a command's own variables) with the environment's search paths in front. */
export function withEnvironmentPaths(mount: EnvironmentMount, extra: Record<string, string>): Record<string, string> {
  const out = { ...extra };
  const defaults = cleanEnv('/');
  for (const [name, dirs] of Object.entries(mount.prepend)) {
    const rest = extra[name] ?? defaults[name];
    out[name] = rest ? `${dirs}:${rest}` : dirs;
  }
  return out;
}
