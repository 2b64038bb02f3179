// The environment a CLI engine's process (or server) starts with inside the sandbox, on top of the
// sandbox's own variables (egress, session credential): HOME is the CLI's state directory, and a
// newer Node from npm comes first on PATH when the CLI needs one.
import type { CliInvocation } from './adapter.js';
import type { InstalledEngine } from './install.js';

const BASE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export function cliEnvironment(engine: Pick<InstalledEngine, 'node'>, home: string, inv: Pick<CliInvocation, 'env'>): Record<string, string> {
  return { HOME: home, PATH: engine.node ? `${engine.node.binDir}:${BASE_PATH}` : BASE_PATH, ...inv.env };
}
