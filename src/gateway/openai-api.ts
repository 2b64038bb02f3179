// Which OpenAI wire API hermes calls a model with: OPENAI_API_MODE when set (e.g. a proxy that
// speaks only one of them), else the catalog's per-model `api` (models.json), else Chat Completions.
import { config } from '../config.js';
import { modelInfo, type OpenAIApi } from '../catalog/catalog.js';

export function openaiApi(model: string): OpenAIApi {
  return config().openaiApiMode ?? modelInfo(model)?.api ?? 'chat';
}
