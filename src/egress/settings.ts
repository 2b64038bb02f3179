// Egress settings, read from the environment when first needed:
//
// EGRESS_ALLOWED_HOSTS  comma-separated hosts a sandbox may reach through the proxy (`*.x.com`
//                       for subdomains); `*` (default) = any public destination. Hosts that a
//                       session's credentials name are always allowed. Internal addresses stay
//                       refused by the outbound guard whatever this says (OUTBOUND_ALLOW opens them).
// EGRESS_LISTEN         `host:port` of the TCP proxy pods reach (Kubernetes driver; default
//                       `0.0.0.0:3128` there, off for the local driver).
// EGRESS_UPSTREAM       `host:port` pods forward to (default: the API's egress Service,
//                       `agent-service-egress.<API namespace>.svc:3128`).
// EGRESS_MITM           `1` (default) terminates TLS for hosts with header rules using the
//                       service's egress CA (trusted inside the sandbox), so headers reach
//                       HTTPS hosts; `0` tunnels them untouched (no injection over HTTPS).
import { environment } from '../config.js';
export interface EgressSettings {
  allowedHosts: string[] | null;
  listen: { host: string; port: number } | null;
  upstream: string | null;
  mitm: boolean;
}

export function hostPort(raw: string, name: string): { host: string; port: number } {
  const m = /^\[?([^\]]*?)\]?:(\d{1,5})$/.exec(raw.trim());
  if (!m) throw new Error(`${name} must be host:port, got "${raw}"`);
  return { host: m[1] || '0.0.0.0', port: Number(m[2]) };
}

export function loadEgressSettings(env: NodeJS.ProcessEnv = environment()): EgressSettings {
  const allowed = (env.EGRESS_ALLOWED_HOSTS ?? '*')
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  return {
    allowedHosts: allowed.length === 0 || allowed.includes('*') ? null : allowed,
    listen: env.EGRESS_LISTEN ? hostPort(env.EGRESS_LISTEN, 'EGRESS_LISTEN') : null,
    upstream: env.EGRESS_UPSTREAM || null,
    mitm: env.EGRESS_MITM !== '0',
  };
}
