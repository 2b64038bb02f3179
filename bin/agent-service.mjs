#!/usr/bin/env node
// The project's small CLI: `login` (device flow), `whoami`, `logout`.
// Plain JavaScript so `npx agent-service` runs without a build step.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const CONFIG_FILE = process.env.AGENT_SERVICE_CONFIG || path.join(os.homedir(), '.config', 'agent-service', 'config.json');

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
  const [command = 'help', ...rest] = argv;
  const flags = {};
  for (let i = 0; i < rest.length; i++) {
    const m = /^--([^=]+)(?:=(.*))?$/.exec(rest[i]);
    if (m) flags[m[1]] = m[2] ?? (rest[i + 1] && !rest[i + 1].startsWith('--') ? rest[++i] : 'true');
  }
  return { command, flags };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function login(flags) {
  const url = (flags.url || process.env.AGENT_SERVICE_URL || readConfig().url || 'http://127.0.0.1:8080').replace(/\/+$/, '');
  const body = { name: flags.name || `cli@${os.hostname()}`, scope: flags.scope || 'admin', ...(flags.universe ? { universe: flags.universe } : {}) };
  const start = await fetch(`${url}/auth/device`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const grant = await start.json();
  if (!start.ok) throw new Error(grant.error?.message || `device flow refused (${start.status})`);
  process.stdout.write(`Open ${grant.verification_uri_complete}\nand confirm the code ${grant.user_code}\nWaiting for approval…\n`);
  const deadline = Date.now() + grant.expires_in * 1000;
  while (Date.now() < deadline) {
    await sleep(grant.interval * 1000);
    const poll = await fetch(`${url}/auth/device/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ device_code: grant.device_code }) });
    const answer = await poll.json();
    if (poll.ok) {
      writeConfig({ ...readConfig(), url, token: answer.token });
      process.stdout.write(`Logged in (${answer.scope} token${answer.universe ? ` for ${answer.universe}` : ''}); saved to ${CONFIG_FILE}\n`);
      return;
    }
    if (answer.error?.code !== 'authorization_pending') throw new Error(answer.error?.message || 'login failed');
  }
  throw new Error('the code expired before it was approved');
}

async function whoami() {
  const cfg = readConfig();
  const token = process.env.AGENT_SERVICE_TOKEN || cfg.token;
  const url = (process.env.AGENT_SERVICE_URL || cfg.url || 'http://127.0.0.1:8080').replace(/\/+$/, '');
  if (!token) throw new Error('not logged in: run `agent-service login`');
  const res = await fetch(`${url}/v1/whoami`, { headers: { authorization: `Bearer ${token}` } });
  const body = await res.json();
  if (!res.ok) throw new Error(body.error?.message || `whoami failed (${res.status})`);
  process.stdout.write(`${body.user.email} in ${body.universe.slug} (${body.scopes.join(', ')}; ${body.auth})\n`);
}

function logout() {
  const cfg = readConfig();
  delete cfg.token;
  writeConfig(cfg);
  process.stdout.write('Logged out locally (revoke the token in the web settings to invalidate it).\n');
}

const { command, flags } = parseArgs(process.argv.slice(2));
const commands = { login: () => login(flags), whoami, logout };
if (!commands[command]) {
  process.stdout.write('usage: agent-service login [--url http://127.0.0.1:8080] [--scope read|write|admin] [--universe slug]\n       agent-service whoami\n       agent-service logout\n');
  process.exit(command === 'help' ? 0 : 2);
}
commands[command]().catch((err) => {
  process.stderr.write(`error: ${err.message}\n`);
  process.exit(1);
});
