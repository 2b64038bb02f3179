// Which key pays for a model call: the platform's own provider key (modelBilling `platform`).
// Engines never see it; a missing key is a clear, non-retryable error naming the setting.
import { config } from '../config.js';
import { ProviderError, type Provider, type ProviderCredential } from './types.js';

/** The demo model (demo.ts) calls no provider: no key, whatever the session's billing. */
export const DEMO_CREDENTIAL: ProviderCredential = { apiKey: '', baseUrl: '', kind: 'platform' };

export function platformCredential(provider: Provider): ProviderCredential {
  if (provider === 'demo') return DEMO_CREDENTIAL;
  const cfg = config();
  if (provider === 'anthropic') {
    if (!cfg.anthropicApiKey) throw missingKey('ANTHROPIC_API_KEY', provider);
    return { apiKey: cfg.anthropicApiKey, baseUrl: cfg.anthropicBaseUrl, kind: 'platform' };
  }
  if (!cfg.openaiApiKey) throw missingKey('OPENAI_API_KEY', provider);
  return { apiKey: cfg.openaiApiKey, baseUrl: cfg.openaiBaseUrl, kind: 'platform' };
}

function missingKey(setting: string, provider: Provider): ProviderError {
  const err = new ProviderError(
    `no ${provider} key is configured: set ${setting} in the service's environment (platform billing) or connect a subscription for ${provider}`,
    { status: null, retryable: false, code: 'provider_not_configured' },
  );
  return err;
}
