// The one door to model providers: dispatches a normalized request to its provider's adapter.
// Credential choice, metering and budgets wrap this (metering.ts); no database code here.
import { streamAnthropic } from './anthropic.js';
import { streamDemo } from './demo.js';
import { streamOpenAI } from './openai.js';
import { streamOpenAIResponses } from './openai-responses.js';
import { openaiApi } from './openai-api.js';
import { ProviderError, type ModelEvent, type ModelRequest, type ProviderCredential } from './types.js';

export function streamModel(req: ModelRequest, cred: ProviderCredential, signal?: AbortSignal): AsyncIterable<ModelEvent> {
  switch (req.provider) {
    case 'anthropic':
      return streamAnthropic(req, cred, signal);
    case 'openai':
      return (req.api ?? openaiApi(req.model)) === 'responses' ? streamOpenAIResponses(req, cred, signal) : streamOpenAI(req, cred, signal);
    case 'demo':
      return streamDemo(req, signal);
    default:
      throw new ProviderError(`unknown model provider: ${String(req.provider)}`, { status: null, retryable: false, code: 'provider_bad_request' });
  }
}
