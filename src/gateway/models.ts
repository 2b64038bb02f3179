// Which provider serves a model name: the catalog's provider (the demo model's is `demo`); names
// the catalog does not know by their prefix: claude-* → Anthropic, gpt-* / o* → OpenAI.
import { modelInfo } from '../catalog/catalog.js';
import type { Provider } from './types.js';

export function modelProvider(model: string): Provider {
  return modelInfo(model)?.provider ?? (/^claude/i.test(model) ? 'anthropic' : 'openai');
}
