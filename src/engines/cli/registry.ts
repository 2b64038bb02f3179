// Which adapter runs each CLI engine (agentType → EngineAdapter). One line per engine; kimi_code
// and dsh have none (unavailable.ts says why their turns cannot run).
import type { EngineAdapter } from './core/adapter.js';
import { claudeCodeAdapter } from './claude-code/adapter.js';
import { codexAdapter } from './codex/adapter.js';
import { opencodeAdapter } from './opencode/adapter.js';
import { openclawAdapter } from './openclaw/adapter.js';
import { piAdapter } from './pi/adapter.js';

const ADAPTERS: ReadonlyMap<string, EngineAdapter> = new Map<string, EngineAdapter>([
  [codexAdapter.agentType, codexAdapter],
  [claudeCodeAdapter.agentType, claudeCodeAdapter],
  [piAdapter.agentType, piAdapter],
  [opencodeAdapter.agentType, opencodeAdapter],
  [openclawAdapter.agentType, openclawAdapter],
]);

/** The adapter of a CLI engine, or null when this service has none for it. */
export function engineAdapter(agentType: string): EngineAdapter | null {
  return ADAPTERS.get(agentType) ?? null;
}

/** The CLI engines that can run here. */
export function cliEngines(): string[] {
  return [...ADAPTERS.keys()];
}
