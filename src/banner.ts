// The one human-readable block `npm start` prints once listening: where to go, how to sign in,
// whether sandboxes are isolated (with the install command when not), what is configured.
import path from 'node:path';
import { config, settings } from './config.js';
import { ownerBootstrapReport } from './auth/bootstrap.js';
import { bwrapUsable } from './sandbox/jail.js';
import { unshareUsable } from './sandbox/unshare-jail.js';

export const BWRAP_INSTALL_HINT = 'apt-get install bubblewrap';

function signInLine(): string {
  const owner = ownerBootstrapReport();
  const email = owner.email ?? config().adminEmail;
  if (owner.generatedPassword) return `${email}  password: ${owner.generatedPassword}  (generated now and shown once; set ADMIN_PASSWORD to choose one)`;
  if (owner.passwordReset) return `${email}  password: reset to ADMIN_PASSWORD just now (browser sessions signed out)`;
  if (owner.created) return `${email}  password: ADMIN_PASSWORD`;
  return `${email}  (lost the password? restart with ADMIN_PASSWORD=<new password>)`;
}

// The same order the local driver picks its isolation in (src/sandbox/local.ts).
function sandboxLine(): string {
  const cfg = config();
  if (cfg.sandboxDriver !== 'local') return `driver ${cfg.sandboxDriver}`;
  const forced = settings.sandboxIsolation();
  if (forced === 'none') return 'NOT ISOLATED (SANDBOX_ISOLATION=none): sessions run as plain child processes';
  if (forced === 'unshare') return 'isolated with util-linux unshare (SANDBOX_ISOLATION=unshare)';
  if (bwrapUsable()) return 'isolated with bubblewrap (bwrap)';
  if (forced !== 'bwrap' && unshareUsable())
    return `isolated with util-linux unshare; bubblewrap is missing or cannot create namespaces here (the tighter jail: ${BWRAP_INSTALL_HINT})`;
  return `NOT ISOLATED: bubblewrap (bwrap) is missing or cannot create namespaces here, so sessions run as plain child processes. Install it: ${BWRAP_INSTALL_HINT}`;
}

function modelsLine(): string {
  const cfg = config();
  const keys = [cfg.anthropicApiKey ? 'Anthropic' : null, cfg.openaiApiKey ? 'OpenAI' : null].filter(Boolean);
  return keys.length
    ? `platform keys: ${keys.join(', ')}`
    : 'no ANTHROPIC_API_KEY or OPENAI_API_KEY: turns fail until one is set or a subscription is connected (the demo model demo-echo needs neither)';
}

function storageLine(): string {
  const cfg = config();
  const db = cfg.databaseUrl ? 'PostgreSQL' : `PGlite in ${path.join(cfg.dataDir, 'pglite')}`;
  return `${db}; ${cfg.redisUrl ? 'Redis for queues and pub/sub' : 'in-process queue and pub/sub'}`;
}

// What the outbound guard (src/net/outbound-guard.ts) refuses, so a developer whose local
// webhook receiver is refused knows the switch before meeting the error.
function outboundLine(): string {
  const allow = settings.outboundAllow().trim();
  if (allow) return `loopback/private destinations allowed for: ${allow} (OUTBOUND_ALLOW)`;
  return 'webhooks, callbacks and fetched URLs on loopback or private addresses are refused; for local receivers start with OUTBOUND_ALLOW=127.0.0.0/8,::1';
}

export function startupBanner(url: string): string {
  const rows: [string, string][] = [
    ['Dashboard', `${url}/`],
    ['API', `REST ${url}/v1  ·  GraphQL ${url}/graphql (GraphiQL in a browser)`],
    ['Sign in', signInLine()],
    ['Sandbox', sandboxLine()],
    ['Models', modelsLine()],
    ['Data', storageLine()],
    ['Outbound', outboundLine()],
  ];
  return `\nAgent Service is running\n${rows.map(([k, v]) => `  ${k.padEnd(10)} ${v}`).join('\n')}\n\n`;
}
