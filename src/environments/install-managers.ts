// Installing one manager's packages into a directory on the host, without running any of their
// code here: npm with --ignore-scripts, Debian packages downloaded and unpacked (dpkg -x, no
// maintainer scripts), pip wheels only (--only-binary, no setup.py). Specs were validated by
// the contract (no options, paths or URLs) and travel as separate arguments, never via a shell.
// A batch that fails is retried one package at a time, so the failure names the package and
// the others still install.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { runProcess } from '../sandbox/process.js';
import type { PackageManager } from './package-specs.js';

const STEP_TIMEOUT_MS = 5 * 60_000;
const MAX_OUTPUT = 256 * 1024;

export interface InstallFailure {
  manager: PackageManager;
  package: string;
  message: string;
}

interface Step {
  ok: boolean;
  stdout: string;
  stderr: string;
}

async function run(file: string, args: string[], cwd: string, env: Record<string, string | undefined> = {}): Promise<Step> {
  // Not configuration: the package manager inherits the service's environment (PATH, proxies, HOME).
  const merged = Object.fromEntries(Object.entries({ ...process.env, ...env }).filter((e): e is [string, string] => e[1] !== undefined));
  try {
    const r = await runProcess(file, args, { cwd, env: merged, timeoutMs: STEP_TIMEOUT_MS, maxOutputBytes: MAX_OUTPUT }).result;
    const timedOut = r.timedOut ? `\n${file} timed out after ${STEP_TIMEOUT_MS / 1000} s` : '';
    return { ok: r.exitCode === 0, stdout: r.stdout, stderr: r.stderr + timedOut };
  } catch (err) {
    return { ok: false, stdout: '', stderr: `${file}: ${(err as Error).message}` };
  }
}

/** The most telling line of a failed step's output (its last error line), kept short. */
function reason(step: Step): string {
  const lines = `${step.stderr}\n${step.stdout}`
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const telling = lines.filter((l) =>
    /^(E:|ERROR:|npm error (code|404)|npm ERR! (code|404))|not found|Unable to locate|No matching distribution|timed out|ENOENT|spawn /i.test(l),
  );
  return (telling.slice(-2).join(' ') || lines.at(-1) || 'failed without output').slice(0, 500);
}

/** Runs `batch` on all specs; when it fails, on each alone (the failures name their package). */
async function eachOnFailure(manager: PackageManager, specs: string[], batch: (specs: string[]) => Promise<Step>): Promise<InstallFailure[]> {
  if (!specs.length) return [];
  const all = await batch(specs);
  if (all.ok) return [];
  if (specs.length === 1) return [{ manager, package: specs[0]!, message: reason(all) }];
  const failures: InstallFailure[] = [];
  for (const spec of specs) {
    const one = await batch([spec]);
    if (!one.ok) failures.push({ manager, package: spec, message: reason(one) });
  }
  return failures;
}

export async function installNpm(dir: string, specs: string[]): Promise<InstallFailure[]> {
  const prefix = path.join(dir, 'npm');
  await fsp.mkdir(prefix, { recursive: true });
  return eachOnFailure('npm', specs, (batch) =>
    run(
      'npm',
      ['install', '--prefix', prefix, '--ignore-scripts', '--no-audit', '--no-fund', '--no-update-notifier', '--loglevel=error', '--', ...batch],
      prefix,
      { npm_config_update_notifier: 'false' },
    ),
  );
}

/** The interpreter sandboxes run (the system one: it is what the jail sees), for matching wheels. */
function systemPython(): string {
  return fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
}

export async function installPip(dir: string, specs: string[]): Promise<InstallFailure[]> {
  const target = path.join(dir, 'pip');
  await fsp.mkdir(target, { recursive: true });
  return eachOnFailure('pip', specs, (batch) =>
    run(
      systemPython(),
      [
        '-m',
        'pip',
        'install',
        '--target',
        target,
        '--only-binary=:all:',
        '--no-input',
        '--disable-pip-version-check',
        '--no-warn-script-location',
        '--retries',
        '1',
        '--timeout',
        '15',
        '--',
        ...batch,
      ],
      target,
      { PIP_BREAK_SYSTEM_PACKAGES: '1', PIP_ROOT_USER_ACTION: 'ignore' },
    ),
  );
}

// `apt-get install -s` (a simulation, no root needed) lists what the host lacks: `Inst name [old] (version …`.
const INST = /^Inst (\S+) (?:\[[^\]]*\] )?\((\S+)/;

/**
 * Debian packages and the dependencies the host does not have, downloaded from the host's apt
 * sources and unpacked. Needs the host's package lists (`apt-get update`).
 */
export async function installApt(dir: string, specs: string[]): Promise<InstallFailure[]> {
  const root = path.join(dir, 'apt');
  const debs = path.join(dir, '.debs');
  await fsp.mkdir(root, { recursive: true });
  await fsp.mkdir(debs, { recursive: true });
  const env = { LANG: 'C', LC_ALL: 'C', DEBIAN_FRONTEND: 'noninteractive' };
  const failures = await eachOnFailure('apt', specs, async (batch) => {
    const plan = await run('apt-get', ['install', '-s', '-q', '--no-install-recommends', '--', ...batch], debs, env);
    if (!plan.ok) {
      if (/Unable to locate|has no installation candidate/.test(plan.stderr + plan.stdout))
        plan.stderr += '\n(is the package name right, and has the host run apt-get update?)';
      return plan;
    }
    const wanted = plan.stdout.split('\n').flatMap((l) => {
      const m = INST.exec(l);
      return m ? [`${m[1]}=${m[2]}`] : [];
    });
    if (!wanted.length) return plan; // the host has it already: nothing to add
    const fetched = await run('apt-get', ['download', '-q', '-o', 'APT::Sandbox::User=root', '--', ...wanted], debs, env);
    if (!fetched.ok) return fetched;
    for (const file of (await fsp.readdir(debs)).filter((f) => f.endsWith('.deb'))) {
      const unpacked = await run('dpkg', ['-x', path.join(debs, file), root], debs, env);
      if (!unpacked.ok) return unpacked;
      await fsp.rm(path.join(debs, file), { force: true });
    }
    return fetched;
  });
  await fsp.rm(debs, { recursive: true, force: true });
  return failures;
}
