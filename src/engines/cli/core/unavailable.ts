// Engines of the spec whose CLI this service cannot install, and what a turn of them says. Never a
// silent stub: the session.error names exactly what is missing, where it would come from, and
// what to do instead. The package registries were checked when this was written (see docs/engines.md).
import type { SessionErrorDetail } from './adapter.js';

const INSTEAD = "choose another agentType for this agent (hermes, the service's own engine, runs everywhere)";

const MISSING: Readonly<Record<string, string>> = {
  kimi_code:
    'the kimi_code engine needs the Kimi Code CLI (`kimi`), which is not installed on this service and cannot be installed by it: ' +
    'it is not published on npm or Debian (npm `kimi-code` is an unrelated wrapper around Claude Code, and PyPI `kimi-cli`/`kimi-code` are archived legacy packages); ' +
    'Moonshot AI distributes it from github.com/MoonshotAI/kimi-code. An operator can build it from there into the engine cache, but this service has no adapter for its output yet: ' +
    INSTEAD,
  dsh:
    'the dsh engine needs the dsh (DeepSeek Harness) CLI, which is not installed on this service and cannot be installed by it: ' +
    'no dsh CLI is published on npm or Debian (PyPI `dsh` is an unrelated tool), and this service has no adapter for its output: ' +
    INSTEAD,
};

/** The session.error of a turn whose engine cannot run here, or null when the engine has a way to run. */
export function uninstallableEngine(agentType: string): SessionErrorDetail | null {
  const message = MISSING[agentType];
  return message ? { type: 'engine_unavailable', message, retry_status: 'exhausted' } : null;
}
