// Clones a repository outside the sandbox, straight into the session's workspace directory.
// The token travels only as a one-off HTTP header on git's command line (not in the URL, not
// written to .git/config), so nothing inside the sandbox can read it.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import { AppError } from '../errors.js';

function git(args: string[], opts: { cwd?: string; token?: string | null }): Promise<{ code: number; stderr: string }> {
  const pre = opts.token ? ['-c', `http.extraHeader=Authorization: Basic ${Buffer.from(`x-access-token:${opts.token}`).toString('base64')}`] : [];
  return new Promise((resolve) => {
    const child = spawn('git', [...pre, ...args], {
      cwd: opts.cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent', GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1', LANG: 'C' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stderr: stderr.replaceAll(opts.token ?? '\0', '***').slice(-2000) });
    });
  });
}

export async function cloneRepository(opts: { url: string; token: string | null; dest: string; checkout: { type: 'branch'; name: string } | { type: 'commit'; sha: string } | null }): Promise<void> {
  await fs.rm(opts.dest, { recursive: true, force: true });
  const branch = opts.checkout?.type === 'branch' ? ['--branch', opts.checkout.name] : [];
  const shallow = opts.checkout?.type === 'commit' ? [] : ['--depth', '1'];
  const cloned = await git(['clone', '--quiet', '--no-tags', ...shallow, ...branch, '--', opts.url, opts.dest], { token: opts.token });
  if (cloned.code !== 0) {
    await fs.rm(opts.dest, { recursive: true, force: true });
    throw new AppError('invalid_request', `could not clone ${opts.url}: ${cloned.stderr.trim().split('\n').pop() ?? 'git failed'}`);
  }
  if (opts.checkout?.type === 'commit') {
    const co = await git(['-c', 'advice.detachedHead=false', 'checkout', '--quiet', opts.checkout.sha], { cwd: opts.dest });
    if (co.code !== 0) {
      await fs.rm(opts.dest, { recursive: true, force: true });
      throw new AppError('invalid_request', `commit ${opts.checkout.sha} not found in ${opts.url}`);
    }
  }
}

/** Fails with a clear 400 when the repository cannot be reached with the given token. */
export async function checkRepositoryAccess(url: string, token: string | null): Promise<void> {
  const probe = await git(['ls-remote', '--exit-code', '--heads', '--', url], { token });
  if (probe.code === 2) return; // reachable, no heads (empty repository)
  if (probe.code !== 0) {
    throw new AppError('invalid_request', `the repository ${url} cannot be read${token ? ' with the given authorization_token' : ' (a private repository needs authorization_token)'}: ${probe.stderr.trim().split('\n').pop() ?? ''}`);
  }
}
