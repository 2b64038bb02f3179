// The model catalog (models.json): which models each engine runs, their provider, aliases and
// list prices. The single source for llm validation, engine defaults and pricing.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export interface ModelPrices { input: number; output: number; cache_read: number; cache_write: number }
export interface ModelInfo { id: string; provider: 'anthropic' | 'openai'; aliases: string[]; prices: ModelPrices }
interface EngineEntry { default: string; harness: string; models: string[] }
interface CatalogFile { models: Record<string, Omit<ModelInfo, 'id'>>; engines: Record<string, EngineEntry> }

const data = require('./models.json') as CatalogFile;

const byName = new Map<string, ModelInfo>();
for (const [id, m] of Object.entries(data.models)) {
  const info: ModelInfo = { id, ...m };
  byName.set(id, info);
  for (const alias of m.aliases) byName.set(alias, info);
}

export const ENGINE_NAMES = Object.keys(data.engines);

/** The model behind a name or alias, or null. */
export function modelInfo(name: string): ModelInfo | null {
  return byName.get(name) ?? null;
}

export function isCurrentModel(agentType: string, llm: string): boolean {
  const info = modelInfo(llm);
  const engine = data.engines[agentType];
  return !!info && !!engine && engine.models.includes(info.id);
}

export function defaultModel(agentType: string): string {
  return data.engines[agentType]?.default ?? data.engines.hermes!.default;
}

export function currentHarness(agentType: string): string {
  return data.engines[agentType]?.harness ?? '1.0.0';
}

export function engineModels(agentType: string): ModelInfo[] {
  return (data.engines[agentType]?.models ?? []).map((id) => byName.get(id)!);
}
