// Which provider serves a model name: claude-* → Anthropic, gpt-* / o* → OpenAI.
import type { Provider } from '../gateway/types.js';

export function modelProvider(model: string): Provider {
  return /^claude/i.test(model) ? 'anthropic' : 'openai';
}
