// Clones a repository outside the sandbox, straight into the session's workspace directory.
// The token travels only as a one-off HTTP header on git's command line (not in the URL, not
// written to .git/config), so nothing inside the sandbox can read it.
// The outbound guard applies: the host's addresses are checked, then handed to git's curl
// (http.curloptResolve) so the connection goes to exactly the checked address; no redirects,
// no transport but http(s).
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import { AppError } from '../errors.js';
import { OutboundRefusedError, resolveOutbound, urlShapeRefusal } from '../net/outbound-guard.js';

/** git options that pin the checked addresses of the URL's host; refuses internal ones. */
async function guardArgs(url: string): Promise<string[]> {
  const shape = urlShapeRefusal(url);
  if (shape) throw new AppError('invalid_request', `repository url refused: ${shape}`);
  const fixed = ['-c', 'http.followRedirects=false', '-c', 'protocol.allow=never', '-c', 'protocol.https.allow=always', '-c', 'protocol.http.allow=always'];
  let target: Awaited<ReturnType<typeof resolveOutbound>>;
  try {
    target = await resolveOutbound(url);
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw new AppError('invalid_request', `repository url refused: ${err.message}`);
    throw new AppError('invalid_request', `the repository host cannot be resolved: ${new URL(url).hostname}`);
  }
  if (net.isIP(target.host)) return fixed; // a literal, already checked: nothing to resolve
  const addresses = target.addresses.map((a) => (a.includes(':') ? `[${a}]` : a)).join(',');
  return [...fixed, '-c', `http.curloptResolve=${target.host}:${target.port}:${addresses}`];
}

function git(args: string[], opts: { cwd?: string; token?: string | null; guard?: string[] }): Promise<{ code: number; stderr: string }> {
  const pre = [
    ...(opts.guard ?? []),
    ...(opts.token ? ['-c', `http.extraHeader=Authorization: Basic ${Buffer.from(`x-access-token:${opts.token}`).toString('base64')}`] : []),
  ];
  return new Promise((resolve) => {
    const child = spawn('git', [...pre, ...args], {
      cwd: opts.cwd,
      // Not configuration: the parent's PATH is handed on so the child finds git's helpers.
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

export async function cloneRepository(opts: {
  url: string;
  token: string | null;
  dest: string;
  checkout: { type: 'branch'; name: string } | { type: 'commit'; sha: string } | null;
}): Promise<void> {
  const guard = await guardArgs(opts.url);
  await fs.rm(opts.dest, { recursive: true, force: true });
  const branch = opts.checkout?.type === 'branch' ? ['--branch', opts.checkout.name] : [];
  const shallow = opts.checkout?.type === 'commit' ? [] : ['--depth', '1'];
  const cloned = await git(['clone', '--quiet', '--no-tags', ...shallow, ...branch, '--', opts.url, opts.dest], { token: opts.token, guard });
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
  const probe = await git(['ls-remote', '--exit-code', '--heads', '--', url], { token, guard: await guardArgs(url) });
  if (probe.code === 2) return; // reachable, no heads (empty repository)
  if (probe.code !== 0) {
    throw new AppError(
      'invalid_request',
      `the repository ${url} cannot be read${token ? ' with the given authorization_token' : ' (a private repository needs authorization_token)'}: ${probe.stderr.trim().split('\n').pop() ?? ''}`,
    );
  }
}
