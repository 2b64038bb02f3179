// The one door to model providers: dispatches a normalized request to its provider's adapter.
import { streamAnthropic } from './anthropic.js';
import { streamOpenAI } from './openai.js';
import type { ModelEvent, ModelRequest, ProviderCredential } from './types.js';

export function streamModel(req: ModelRequest, cred: ProviderCredential, signal?: AbortSignal): AsyncIterable<ModelEvent> {
  return req.provider === 'anthropic' ? streamAnthropic(req, cred, signal) : streamOpenAI(req, cred, signal);
}
