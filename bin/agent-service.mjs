#!/usr/bin/env node
// The project's small CLI: `login` (device flow), `whoami`, `logout`, `--help`.
// Plain JavaScript so `npx agent-service` runs without a build step.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const CONFIG_FILE = process.env.AGENT_SERVICE_CONFIG || path.join(os.homedir(), '.config', 'agent-service', 'config.json');
const DEFAULT_URL = 'http://127.0.0.1:8080';
const SCOPES = ['read', 'write', 'admin'];

const USAGE = `usage: agent-service <command> [options]

commands:
  login     sign this machine in: opens a device code you approve in the browser,
            then saves a token to ${CONFIG_FILE}
              --url URL            the service (default ${DEFAULT_URL}, or AGENT_SERVICE_URL)
              --scope read|write|admin   the token's scope (default write: creates and runs
                                   agents and sessions; admin adds deleting and archiving
                                   agents and managing webhooks)
              --universe SLUG      a token for one universe (default: personal)
              --name NAME          the token's name (default cli@<hostname>)
  whoami    show who the saved token (or AGENT_SERVICE_TOKEN) acts as   [--url URL]
  logout    revoke the saved token at the service and forget it on this machine
  help      this text (also --help, -h)

Lost the owner's password? Start the service with ADMIN_PASSWORD=<new password>: the owner's
password is reset to it at start-up (and every browser session signed out).
`;

class CliError extends Error {}

function readConfig() {
  try {
    return JSON.parse(fs.readFileSync(CONFIG_FILE, 'utf8'));
  } catch {
    return {};
  }
}

function writeConfig(cfg) {
  fs.mkdirSync(path.dirname(CONFIG_FILE), { recursive: true });
  fs.writeFileSync(CONFIG_FILE, JSON.stringify(cfg, null, 2) + '\n', { mode: 0o600 });
}

function parseArgs(argv) {
  const [first = 'help', ...rest] = argv;
  const command = ['--help', '-h'].includes(first) ? 'help' : first;
  const flags = {};
  for (let i = 0; i < rest.length; i++) {
    const m = /^--([^=]+)(?:=(.*))?$/.exec(rest[i]);
    if (m) flags[m[1]] = m[2] ?? (rest[i + 1] && !rest[i + 1].startsWith('--') ? rest[++i] : 'true');
    else if (rest[i] === '-h') flags.help = 'true';
  }
  return { command, flags };
}

function serviceUrl(flags) {
  const url = flags.url || process.env.AGENT_SERVICE_URL || readConfig().url || DEFAULT_URL;
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    throw new CliError(`"${url}" is not an http(s) URL`);
  }
  return url.replace(/\/+$/, '');
}

/** fetch + JSON, with plain-words errors when the service cannot be reached or is not this service. */
async function call(url, init) {
  let res;
  try {
    res = await fetch(url, init);
  } catch (err) {
    const code = err?.cause?.code;
    const why = code === 'ECONNREFUSED' ? 'connection refused' : code === 'ENOTFOUND' ? 'unknown host' : code || err?.cause?.message || err.message;
    throw new CliError(`cannot reach the service at ${new URL(url).origin} (${why}). Is it running? Start it with \`npm start\`, or pass --url.`);
  }
  const text = await res.text();
  try {
    return { res, body: text ? JSON.parse(text) : {} };
  } catch {
    throw new CliError(`${new URL(url).origin} answered ${res.status} with something that is not the agent service's JSON; check --url`);
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function login(flags) {
  const url = serviceUrl(flags);
  const scope = flags.scope || 'write';
  if (!SCOPES.includes(scope)) throw new CliError(`--scope must be one of ${SCOPES.join(', ')} (got "${scope}")`);
  const request = { name: flags.name || `cli@${os.hostname()}`, scope, ...(flags.universe ? { universe: flags.universe } : {}) };
  const start = await call(`${url}/auth/device`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
  const grant = start.body;
  if (!start.res.ok) throw new CliError(grant.error?.message || `the service refused the login (${start.res.status})`);
  process.stdout.write(`Open ${grant.verification_uri_complete}\nand confirm the code ${grant.user_code}\nWaiting for approval…\n`);
  const deadline = Date.now() + grant.expires_in * 1000;
  while (Date.now() < deadline) {
    await sleep(grant.interval * 1000);
    const poll = await call(`${url}/auth/device/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ device_code: grant.device_code }),
    });
    if (poll.res.ok) {
      writeConfig({ ...readConfig(), url, token: poll.body.token });
      process.stdout.write(`Logged in (${poll.body.scope} token${poll.body.universe ? ` for ${poll.body.universe}` : ''}); saved to ${CONFIG_FILE}\n`);
      return;
    }
    if (poll.body.error?.code !== 'authorization_pending') throw new CliError(poll.body.error?.message || 'login failed');
  }
  throw new CliError('the code expired before it was approved; run `agent-service login` again');
}

async function whoami(flags) {
  const token = process.env.AGENT_SERVICE_TOKEN || readConfig().token;
  const which = process.env.AGENT_SERVICE_TOKEN ? 'AGENT_SERVICE_TOKEN' : 'the saved token';
  const url = serviceUrl(flags);
  if (!token) throw new CliError('not logged in: run `agent-service login` (or set AGENT_SERVICE_TOKEN)');
  const { res, body } = await call(`${url}/v1/whoami`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status === 401) throw new CliError(`${which} is not valid (unknown, revoked or expired): run \`agent-service login\``);
  if (!res.ok) throw new CliError(body.error?.message || `whoami failed (${res.status})`);
  process.stdout.write(`${body.user.email} in ${body.universe.slug} (${body.scopes.join(', ')}; ${body.auth}) at ${url}\n`);
}

async function logout(flags) {
  const cfg = readConfig();
  if (!cfg.token) {
    process.stdout.write('Not logged in on this machine; nothing to do.\n');
    return;
  }
  const url = flags.url ? serviceUrl(flags) : (cfg.url || DEFAULT_URL).replace(/\/+$/, '');
  const token = cfg.token;
  // Forgotten here whatever the service says: a logout never leaves the token on disk.
  delete cfg.token;
  writeConfig(cfg);
  let revoke;
  try {
    revoke = await call(`${url}/auth/revoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    throw new CliError(`${err.message}\nThe token was forgotten on this machine but is still valid: revoke it at ${url}/#/tokens`);
  }
  if (!revoke.res.ok)
    throw new CliError(
      `the service refused to revoke the token (${revoke.body.error?.message || revoke.res.status}); it was forgotten on this machine: revoke it at ${url}/#/tokens`,
    );
  process.stdout.write(
    revoke.body.revoked
      ? `Logged out: the token is revoked at ${url} and forgotten on this machine.\n`
      : `Logged out on this machine (the service at ${url} no longer knew the token as live).\n`,
  );
}

async function help() {
  process.stdout.write(USAGE);
}

const { command, flags } = parseArgs(process.argv.slice(2));
const commands = { login, whoami, logout, help };
const run = flags.help ? help : commands[command];
if (!run) {
  process.stderr.write(`unknown command "${command}"\n\n${USAGE}`);
  process.exit(2);
}
try {
  await run(flags);
} catch (err) {
  process.stderr.write(`error: ${err instanceof CliError ? err.message : err?.stack || err}\n`);
  process.exit(1);
}
