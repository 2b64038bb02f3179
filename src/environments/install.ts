// An environment version's packages, prepared once on this host and cached:
// `<root>/<environment id>/v<version>/` holds what installed (install-layout.ts) and
// `manifest.json` (what failed). The next session of the same version mounts it as it is.
//
// Two sessions preparing the same version at once share one install in this process; across
// processes sharing DATA_DIR each installs into its own temporary directory and the first atomic
// rename wins (the loser drops its copy and uses the winner's). A version with failed packages
// is cached too: its sessions are told which failed; a packages change (new version) retries.
// Every install that runs appends a line to `<root>/installs.log` (what the tests count).
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { EnvironmentPackages } from './contract.js';
import { installApt, installNpm, installPip, type InstallFailure } from './install-managers.js';

export type { InstallFailure };

export interface PreparedEnvironment {
  dir: string;
  failures: InstallFailure[];
  /** Whether this call ran the installers (false: the cache had it). */
  installed: boolean;
}

interface Manifest {
  environment_id: string;
  version: number;
  packages: EnvironmentPackages;
  failures: InstallFailure[];
  installed_at: string;
}

export interface Installers {
  apt(dir: string, specs: string[]): Promise<InstallFailure[]>;
  npm(dir: string, specs: string[]): Promise<InstallFailure[]>;
  pip(dir: string, specs: string[]): Promise<InstallFailure[]>;
}
const realInstallers: Installers = { apt: installApt, npm: installNpm, pip: installPip };

const ENVIRONMENT_ID = /^env_[0-9a-z]{1,64}$/;
const inFlight = new Map<string, Promise<PreparedEnvironment>>();

export function hasPackages(p: EnvironmentPackages): boolean {
  return p.apt.length + p.npm.length + p.pip.length > 0;
}

async function readManifest(dir: string): Promise<Manifest | null> {
  try {
    return JSON.parse(await fsp.readFile(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
  } catch {
    return null;
  }
}

/** The prepared directory of this environment version, installing it first when not cached. */
export function prepareEnvironment(opts: {
  root: string;
  environmentId: string;
  version: number;
  packages: EnvironmentPackages;
  installers?: Installers;
}): Promise<PreparedEnvironment> {
  // The id becomes a path component: nothing that could climb out of the root.
  if (!ENVIRONMENT_ID.test(opts.environmentId) || !Number.isInteger(opts.version))
    throw new Error(`invalid environment ${opts.environmentId} v${opts.version}`);
  const dir = path.join(opts.root, opts.environmentId, `v${opts.version}`);
  let pending = inFlight.get(dir);
  if (!pending) {
    pending = cachedOrInstall(dir, opts).finally(() => inFlight.delete(dir));
    inFlight.set(dir, pending);
  }
  return pending;
}

async function cachedOrInstall(
  dir: string,
  opts: { root: string; environmentId: string; version: number; packages: EnvironmentPackages; installers?: Installers },
): Promise<PreparedEnvironment> {
  const cached = await readManifest(dir);
  if (cached) return { dir, failures: cached.failures, installed: false };
  const installers = opts.installers ?? realInstallers;
  const tmp = `${dir}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  await fsp.mkdir(tmp, { recursive: true });
  try {
    await fsp.appendFile(path.join(opts.root, 'installs.log'), `${new Date().toISOString()} ${opts.environmentId} v${opts.version} pid ${process.pid}\n`);
    // One manager after another: apt and pip are heavy on a small machine, and npm's cache is shared.
    const failures = [
      ...(await installers.apt(tmp, opts.packages.apt)),
      ...(await installers.npm(tmp, opts.packages.npm)),
      ...(await installers.pip(tmp, opts.packages.pip)),
    ];
    const manifest: Manifest = {
      environment_id: opts.environmentId,
      version: opts.version,
      packages: opts.packages,
      failures,
      installed_at: new Date().toISOString(),
    };
    await fsp.writeFile(path.join(tmp, 'manifest.json'), JSON.stringify(manifest, null, 2));
    // Readable by the sandboxes (they may run under another uid), written by nobody but us.
    await fsp.chmod(tmp, 0o755);
    try {
      await fsp.rename(tmp, dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
      // Another process published this version first: use its copy.
      await fsp.rm(tmp, { recursive: true, force: true });
      const theirs = await readManifest(dir);
      if (!theirs) throw err;
      return { dir, failures: theirs.failures, installed: true };
    }
    return { dir, failures, installed: true };
  } catch (err) {
    await fsp.rm(tmp, { recursive: true, force: true });
    throw err;
  }
}
