// The environment every sandboxed command gets for its way out (the contract in
// /work/notes/egress-bridge.md): the egress endpoint, the per-session credential, proxy
// variables in both spellings, the model gateway's base URLs, and the CA bundle that trusts
// the egress CA. Never a provider key or a repository token.
export const EGRESS_ENDPOINT = 'http://127.0.0.1:3128';
/** Where the egress socket and CA files appear inside a sandbox. */
export const EGRESS_DIR = '/run/agent-service';

export function egressEnv(opts: { token: string; endpoint?: string; caDir?: string | null }): Record<string, string> {
  const endpoint = opts.endpoint ?? EGRESS_ENDPOINT;
  const proxy = endpoint.replace('://', `://session:${encodeURIComponent(opts.token)}@`);
  const noProxy = '127.0.0.1,localhost';
  const env: Record<string, string> = {
    AGENT_SERVICE_EGRESS: endpoint,
    AGENT_SERVICE_TOKEN: opts.token,
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    NO_PROXY: noProxy,
    no_proxy: noProxy,
    ANTHROPIC_BASE_URL: `${endpoint}/gateway/anthropic`,
    OPENAI_BASE_URL: `${endpoint}/gateway/openai/v1`,
    GIT_TERMINAL_PROMPT: '0',
  };
  if (opts.caDir) {
    const bundle = `${opts.caDir}/ca-bundle.crt`;
    Object.assign(env, {
      SSL_CERT_FILE: bundle,
      CURL_CA_BUNDLE: bundle,
      GIT_SSL_CAINFO: bundle,
      REQUESTS_CA_BUNDLE: bundle,
      PIP_CERT: bundle,
      NODE_EXTRA_CA_CERTS: `${opts.caDir}/ca.crt`,
    });
  }
  return env;
}
