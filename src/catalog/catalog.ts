// The model catalog (models.json): which models each engine runs, their provider, aliases and
// list prices, each engine's default model and current harness version. The single source for
// llm validation, engine defaults and pricing; checked once at load so a bad edit fails fast.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** `demo`: the built-in demo model, answered in-process (src/gateway/demo.ts), free, never a default. */
export type ModelProvider = 'anthropic' | 'openai' | 'demo';
/** The wire API hermes calls an OpenAI model with: Responses or Chat Completions. */
export type OpenAIApi = 'responses' | 'chat';
/** USD per million tokens. */
export interface ModelPrices {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}
export interface ModelInfo {
  id: string;
  provider: ModelProvider;
  aliases: string[];
  prices: ModelPrices;
  /** The context window in tokens (prompt and answer together). */
  context_window: number;
  api?: OpenAIApi;
  description?: string;
}
interface EngineEntry {
  default: string;
  harness: string;
  models: string[];
}
interface CatalogFile {
  models: Record<string, Omit<ModelInfo, 'id'>>;
  engines: Record<string, EngineEntry>;
}

const data = require('./models.json') as CatalogFile;

const byName = new Map<string, ModelInfo>();
for (const [id, m] of Object.entries(data.models)) {
  const info: ModelInfo = { id, ...m };
  for (const name of [id, ...m.aliases]) {
    if (byName.has(name)) throw new Error(`models.json: model name ${name} is listed twice`);
    byName.set(name, info);
  }
  if (m.provider !== 'anthropic' && m.provider !== 'openai' && m.provider !== 'demo') throw new Error(`models.json: ${id} has unknown provider ${m.provider}`);
  if (m.provider === 'openai' ? m.api !== 'responses' && m.api !== 'chat' : m.api !== undefined)
    throw new Error(`models.json: ${id} needs api "responses" or "chat" (OpenAI models only)`);
  for (const k of ['input', 'output', 'cache_read', 'cache_write'] as const) {
    if (!(typeof m.prices[k] === 'number' && m.prices[k] >= 0)) throw new Error(`models.json: ${id} needs a price ${k} >= 0`);
    if (m.provider === 'demo' && m.prices[k] !== 0) throw new Error(`models.json: ${id} is a demo model and must cost nothing (${k})`);
  }
  if (!(Number.isInteger(m.context_window) && m.context_window >= 1024)) throw new Error(`models.json: ${id} needs a context_window (tokens, >= 1024)`);
  if (m.provider === 'demo' && !m.description) throw new Error(`models.json: ${id} is a demo model and needs a description saying so`);
}
for (const [engine, e] of Object.entries(data.engines)) {
  for (const id of e.models) if (!data.models[id]) throw new Error(`models.json: engine ${engine} lists unknown model ${id}`);
  if (!e.models.includes(e.default)) throw new Error(`models.json: engine ${engine}'s default ${e.default} is not one of its models`);
  if (data.models[e.default]?.provider === 'demo') throw new Error(`models.json: engine ${engine}'s default ${e.default} is a demo model`);
  if (!e.harness) throw new Error(`models.json: engine ${engine} needs a harness version`);
}

export const ENGINE_NAMES = Object.keys(data.engines);

/** The model behind a name or alias, or null. */
export function modelInfo(name: string): ModelInfo | null {
  return byName.get(name) ?? null;
}

/** The canonical id of a model name or alias, or null. */
export function resolveModel(name: string): string | null {
  return byName.get(name)?.id ?? null;
}

/** Whether `llm` (id or alias) is a current model of the engine. */
export function isCurrentModel(agentType: string, llm: string): boolean {
  const info = modelInfo(llm);
  const engine = data.engines[agentType];
  return !!info && !!engine && engine.models.includes(info.id);
}

export function defaultModel(agentType: string): string {
  return data.engines[agentType]?.default ?? data.engines.hermes!.default;
}

/** The platform's current engine CLI version: new agents get it, PATCH harnessVersion moves to it. */
export function currentHarness(agentType: string): string {
  return data.engines[agentType]?.harness ?? '1.0.0';
}

export function engineModels(agentType: string): ModelInfo[] {
  return (data.engines[agentType]?.models ?? []).map((id) => byName.get(id)!);
}
