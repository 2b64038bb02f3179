// The local sandbox driver: exec (exit codes, output caps, timeouts and aborts that take whole
// process trees), the bubblewrap jail (no host files, no service env, own PID namespace, no
// capabilities), host-side file operations that stay inside /workspace, lifecycle, fallback.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxPathError, type Sandbox, type SandboxDriver } from '../../src/sandbox/driver.js';
import { bwrapAvailable, createLocalDriver } from '../../src/sandbox/local.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-local-'));
const hostSecretFile = path.join(os.tmpdir(), `host-only-${process.pid}.txt`);
const jailed = bwrapAvailable();
let driver: SandboxDriver;
let sb: Sandbox;
let savedKey: string | undefined;

/** Whether any host process still runs `sleep <marker>`. */
function sleeperAlive(marker: string): boolean {
  try {
    execFileSync('pgrep', ['-f', `sleep ${marker}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => boolean, ms = 2000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

beforeAll(async () => {
  savedKey = process.env.ANTHROPIC_API_KEY;
  process.env.ANTHROPIC_API_KEY = 'sk-ant-test-must-not-leak';
  fs.writeFileSync(hostSecretFile, 'host secret');
  driver = createLocalDriver({ rootDir: root });
  sb = await driver.provision({ sessionId: 'sess_local', env: { GREETING: 'hello' } });
});

afterAll(async () => {
  if (savedKey === undefined) delete process.env.ANTHROPIC_API_KEY;
  else process.env.ANTHROPIC_API_KEY = savedKey;
  await driver.destroy('sess_local');
  fs.rmSync(hostSecretFile, { force: true });
  fs.rmSync(root, { recursive: true, force: true });
});

describe('exec', () => {
  it('runs bash -c in the workspace and reports output and exit codes', async () => {
    const r = await sb.exec('echo out; echo err >&2; exit 3');
    expect(r).toEqual({ exitCode: 3, stdout: 'out\n', stderr: 'err\n', timedOut: false, aborted: false, truncated: false });
    expect((await sb.exec('true')).exitCode).toBe(0);
    if (jailed) expect((await sb.exec('pwd; echo $HOME')).stdout).toBe('/workspace\n/workspace\n');
  });

  it('feeds stdin and passes spec.env', async () => {
    expect((await sb.exec('tr a-z A-Z', { stdin: 'shout' })).stdout).toBe('SHOUT');
    expect((await sb.exec('echo $GREETING')).stdout).toBe('hello\n');
  });

  it('runs in a cwd inside the workspace, and refuses one outside', async () => {
    await sb.writeFile('sub/dir/f.txt', 'x');
    expect((await sb.exec('ls', { cwd: '/workspace/sub/dir' })).stdout).toBe('f.txt\n');
    expect((await sb.exec('ls', { cwd: '/workspace/nope' })).exitCode).toBe(1);
    await expect(sb.exec('ls', { cwd: '/etc' })).rejects.toBeInstanceOf(SandboxPathError);
  });

  it('files written by exec are visible to readFile, and the other way round', async () => {
    await sb.exec('mkdir -p d && printf abc > d/x.txt');
    expect((await sb.readFile('d/x.txt')).toString()).toBe('abc');
    expect((await sb.readFile('/workspace/d/x.txt', { maxBytes: 2 })).toString()).toBe('ab');
    await sb.writeFile('/workspace/d/y.txt', 'from host');
    expect((await sb.exec('cat d/y.txt')).stdout).toBe('from host');
  });

  it('a timeout kills `sleep 100` promptly', async () => {
    const started = Date.now();
    const r = await sb.exec('sleep 100.101', { timeoutMs: 500 });
    expect(r).toMatchObject({ timedOut: true, exitCode: null, aborted: false });
    expect(Date.now() - started).toBeLessThan(2500);
    expect(await until(() => !sleeperAlive('100.101'))).toBe(true);
  });

  it('a timeout kills a whole `sleep 100 & wait` tree', async () => {
    const started = Date.now();
    const r = await sb.exec('sleep 100.102 & sleep 100.103 & wait', { timeoutMs: 500 });
    expect(r.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(2500);
    expect(await until(() => !sleeperAlive('100.102') && !sleeperAlive('100.103'))).toBe(true);
  });

  it('an abort signal kills the command, also when already aborted', async () => {
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 200);
    const started = Date.now();
    const r = await sb.exec('sleep 100.104', { signal: ctl.signal });
    expect(r).toMatchObject({ aborted: true, timedOut: false, exitCode: null });
    expect(Date.now() - started).toBeLessThan(2500);
    expect((await sb.exec('echo never', { signal: AbortSignal.abort() })).aborted).toBe(true);
    expect(await until(() => !sleeperAlive('100.104'))).toBe(true);
  });

  it('does not hang on a background child that keeps the pipes open, and kills it', async () => {
    const started = Date.now();
    const r = await sb.exec('(sleep 100.105 &) ; echo done', { timeoutMs: 20_000 });
    expect(r).toMatchObject({ exitCode: 0, stdout: 'done\n' });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await until(() => !sleeperAlive('100.105'))).toBe(true);
  });

  it('caps stdout and stderr and marks the result truncated', async () => {
    const r = await sb.exec('head -c 100000 /dev/zero | tr "\\0" a; head -c 5000 /dev/zero | tr "\\0" b >&2', { maxOutputBytes: 1000 });
    expect(r.stdout).toBe('a'.repeat(1000));
    expect(r.stderr).toBe('b'.repeat(1000));
    expect(r.truncated).toBe(true);
    // A cut never leaves half a UTF-8 character behind.
    const utf = await sb.exec('printf "%.0sé" {1..100}', { maxOutputBytes: 5 });
    expect(utf.stdout).toBe('éé');
    expect((await sb.exec('echo small')).truncated).toBe(false);
  });

  it('keeps complete output of a command that writes a lot and exits at once', async () => {
    const r = await sb.exec('head -c 60000 /dev/zero | tr "\\0" z');
    expect(r.stdout.length).toBe(60000);
    expect(r.truncated).toBe(false);
  });
});

describe.skipIf(!jailed)('the bubblewrap jail', () => {
  it('cannot see host files outside the system directories', async () => {
    const r = await sb.exec(`cat ${hostSecretFile}`);
    expect(r.exitCode).not.toBe(0);
    expect(r.stdout).not.toContain('host secret');
    for (const dir of ['/work', '/root', '/home', '/var', '/run', root]) {
      expect((await sb.exec(`ls ${dir}`)).exitCode, dir).not.toBe(0);
    }
    expect((await sb.exec('ls /tmp | wc -l')).stdout.trim()).toBe('0'); // its own empty /tmp
  });

  it("gets a clean environment without the service's variables", async () => {
    const r = await sb.exec('env');
    expect(r.stdout).not.toContain('must-not-leak');
    expect(r.stdout).not.toContain('ANTHROPIC_API_KEY');
    const names = r.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('=')[0])
      .filter((n) => n !== '_' && n !== 'PWD' && n !== 'SHLVL');
    expect(names.sort()).toEqual(['GREETING', 'HOME', 'LANG', 'PATH', 'TERM']);
  });

  it('has its own PID namespace and hostname', async () => {
    expect(Number((await sb.exec('echo $$')).stdout.trim())).toBeLessThan(10);
    expect(Number((await sb.exec('ls /proc | grep -c "^[0-9]"')).stdout.trim())).toBeLessThan(10);
    expect((await sb.exec('hostname')).stdout).toBe('sandbox\n');
  });

  it('runs without capabilities and cannot write system directories', async () => {
    expect((await sb.exec('grep CapEff /proc/self/status')).stdout).toMatch(/CapEff:\s+0+\n/);
    expect((await sb.exec('touch /usr/x')).exitCode).not.toBe(0);
    expect((await sb.exec('touch /etc/x')).exitCode).not.toBe(0);
    expect((await sb.exec('touch /x')).exitCode).not.toBe(0);
    expect((await sb.exec('touch /tmp/x /workspace/x && rm /workspace/x')).exitCode).toBe(0);
  });

  it('has the tools agents need', async () => {
    expect((await sb.exec('git --version && python3 -c "print(1)" && ls /etc/ssl/certs | head -1')).exitCode).toBe(0);
  });
});

describe.skipIf(!jailed || !bwrapAvailable('host'))('network modes', () => {
  let server: net.Server;
  let port = 0;
  beforeAll(async () => {
    server = net.createServer((s) => s.end('pong'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("the default (own namespace) cannot reach the host's loopback; an explicit 'host' can", async () => {
    const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`;
    const isolated = await sb.exec(probe, { timeoutMs: 5000 });
    expect(isolated.exitCode).not.toBe(0);
    expect(isolated.stdout).toBe('');
    const shared = createLocalDriver({ rootDir: root, network: 'host' });
    const box = await shared.provision({ sessionId: 'sess_hostnet' });
    expect((await box.exec(probe, { timeoutMs: 5000 })).stdout).toBe('pong');
    await shared.destroy('sess_hostnet');
  });
});

describe('file operations stay inside /workspace', () => {
  it.each(['../escape.txt', '/etc/passwd', '/workspace/../etc/passwd', 'a/../../b', '/', '/workspacex/y'])('refuses %s', async (p) => {
    await expect(sb.readFile(p)).rejects.toBeInstanceOf(SandboxPathError);
    await expect(sb.writeFile(p, 'x')).rejects.toBeInstanceOf(SandboxPathError);
    await expect(sb.stat(p)).rejects.toBeInstanceOf(SandboxPathError);
    await expect(sb.remove(p)).rejects.toBeInstanceOf(SandboxPathError);
  });

  it('refuses symlinks that lead outside, planted from inside the sandbox or on the host', async () => {
    const ws = sb.hostWorkspace!;
    fs.symlinkSync(hostSecretFile, path.join(ws, 'to-host-file'));
    fs.symlinkSync('/etc', path.join(ws, 'to-etc'));
    fs.symlinkSync(path.dirname(hostSecretFile), path.join(ws, 'to-host-tmp'));
    await sb.exec('ln -s /etc/hostname planted'); // dangling or /etc inside the jail, /etc outside it
    for (const p of ['to-host-file', 'to-etc/passwd', 'to-host-tmp/new.txt', 'planted']) {
      await expect(sb.readFile(p), p).rejects.toBeInstanceOf(SandboxPathError);
      await expect(sb.writeFile(p, 'overwritten'), p).rejects.toBeInstanceOf(SandboxPathError);
    }
    await expect(sb.writeFile('to-etc/sub/new.txt', 'x')).rejects.toBeInstanceOf(SandboxPathError);
    await expect(sb.stat('to-etc')).rejects.toBeInstanceOf(SandboxPathError);
    expect(fs.readFileSync(hostSecretFile, 'utf8')).toBe('host secret');
    expect(fs.existsSync(path.join(path.dirname(hostSecretFile), 'new.txt'))).toBe(false);
    expect(fs.existsSync('/etc/sub')).toBe(false);
    // Removing a symlink removes the link, never its target.
    await sb.remove('to-host-file');
    expect(fs.existsSync(path.join(ws, 'to-host-file'))).toBe(false);
    expect(fs.existsSync(hostSecretFile)).toBe(true);
    await sb.remove('to-etc');
    expect(fs.existsSync('/etc/passwd')).toBe(true);
  });

  it('follows symlinks that stay inside the workspace', async () => {
    await sb.writeFile('real/data.txt', 'inside');
    await sb.exec('ln -s real alias && ln -s data.txt real/link.txt');
    expect((await sb.readFile('alias/data.txt')).toString()).toBe('inside');
    expect((await sb.readFile('real/link.txt')).toString()).toBe('inside');
    await sb.writeFile('alias/new.txt', 'via alias');
    expect((await sb.readFile('real/new.txt')).toString()).toBe('via alias');
  });

  it('does not block on a FIFO or read a directory as a file', async () => {
    await sb.exec('mkfifo pipe');
    await expect(sb.readFile('pipe')).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(sb.readFile('d')).rejects.toMatchObject({ code: 'EISDIR' });
  });

  it('stat and remove', async () => {
    await sb.writeFile('gone/a.txt', '12345');
    expect(await sb.stat('gone/a.txt')).toEqual({ size: 5, isFile: true, isDirectory: false });
    expect(await sb.stat('gone')).toMatchObject({ isFile: false, isDirectory: true });
    expect(await sb.stat('missing')).toBeNull();
    expect(await sb.stat('gone/a.txt/below')).toBeNull();
    await sb.remove('gone');
    expect(await sb.stat('gone')).toBeNull();
    await sb.remove('gone'); // idempotent
  });

  it('writes modes; readOnly files are 0444 and can be rewritten by the service', async () => {
    await sb.writeFile('ro/data.csv', 'a,b\n', { readOnly: true });
    const host = path.join(sb.hostWorkspace!, 'ro/data.csv');
    expect(fs.statSync(host).mode & 0o777).toBe(0o444);
    if (jailed) {
      // Root inside the jail has no CAP_DAC_OVERRIDE, so 0444 holds there too.
      expect((await sb.exec('echo x >> ro/data.csv')).exitCode).not.toBe(0);
      expect((await sb.readFile('ro/data.csv')).toString()).toBe('a,b\n');
    }
    await sb.writeFile('ro/data.csv', 'c,d\n', { readOnly: true });
    expect((await sb.readFile('ro/data.csv')).toString()).toBe('c,d\n');
    await sb.writeFile('run.sh', '#!/bin/sh\necho ran\n', { mode: 0o755 });
    expect((await sb.exec('./run.sh')).stdout).toBe('ran\n');
    await sb.writeFile('run.sh', '#!/bin/sh\necho again\n'); // keeps the executable bit
    expect((await sb.exec('./run.sh')).stdout).toBe('again\n');
  });
});

describe('driver lifecycle', () => {
  it('provision is idempotent; get reattaches, also from a new driver (a restart) with the spec env', async () => {
    const a = await driver.provision({ sessionId: 'sess_life', env: { MARK: 'kept' } });
    expect(await driver.provision({ sessionId: 'sess_life' })).toBe(a);
    expect(await driver.get('sess_life')).toBe(a);
    await a.writeFile('note.txt', 'persisted');
    const restarted = createLocalDriver({ rootDir: root });
    const again = (await restarted.get('sess_life'))!;
    expect((await again.readFile('note.txt')).toString()).toBe('persisted');
    expect((await again.exec('echo $MARK')).stdout).toBe('kept\n');
    expect(await restarted.get('sess_never')).toBeNull();
    await driver.destroy('sess_life');
  });

  it('destroy kills running processes, removes the directory, and is idempotent', async () => {
    const box = await driver.provision({ sessionId: 'sess_doomed' });
    await box.exec('mkdir -p locked/in && touch locked/in/f && chmod 555 locked/in locked');
    const running = box.exec('sleep 100.106 & sleep 100.107; wait');
    expect(await until(() => sleeperAlive('100.107'))).toBe(true);
    const started = Date.now();
    await driver.destroy('sess_doomed');
    expect(Date.now() - started).toBeLessThan(3000);
    expect((await running).exitCode).toBeNull();
    expect(await until(() => !sleeperAlive('100.106') && !sleeperAlive('100.107'))).toBe(true);
    expect(fs.existsSync(path.join(root, 'sess_doomed'))).toBe(false);
    expect(await driver.get('sess_doomed')).toBeNull();
    await expect(box.exec('true')).rejects.toThrow(/destroyed/);
    await driver.destroy('sess_doomed');
    await driver.destroy('sess_never_existed');
  });

  it('refuses session ids that could leave rootDir', async () => {
    await expect(driver.destroy('../outside')).rejects.toThrow(/invalid session id/);
    await expect(driver.provision({ sessionId: 'a/b' })).rejects.toThrow(/invalid session id/);
  });
});

describe('fallback without the jail', () => {
  let plain: SandboxDriver;
  let box: Sandbox;
  beforeAll(async () => {
    plain = createLocalDriver({ rootDir: root, forceNoJail: true });
    box = await plain.provision({ sessionId: 'sess_plain', env: { GREETING: 'plain' } });
  });
  afterAll(() => plain.destroy('sess_plain'));

  it('runs in the workspace directory with the same clean environment', async () => {
    const r = await box.exec('pwd; echo $HOME; echo $GREETING; env | grep -c ANTHROPIC');
    const ws = fs.realpathSync(box.hostWorkspace!);
    expect(r.stdout).toBe(`${ws}\n${box.hostWorkspace}\nplain\n0\n`);
    await box.exec('echo hi > f.txt');
    expect((await box.readFile('/workspace/f.txt')).toString()).toBe('hi\n');
  });

  it('still kills whole trees on timeout and after the command exits', async () => {
    const r = await box.exec('sleep 100.108 & sleep 100.109; wait', { timeoutMs: 500 });
    expect(r.timedOut).toBe(true);
    expect(await until(() => !sleeperAlive('100.108') && !sleeperAlive('100.109'))).toBe(true);
    const left = await box.exec('(sleep 100.110 &); echo ok');
    expect(left.stdout).toBe('ok\n');
    expect(await until(() => !sleeperAlive('100.110'))).toBe(true);
  });

  it('is what the driver falls back to, with one warning, when bwrap is missing', async () => {
    const warnings: string[] = [];
    const missing = createLocalDriver({
      rootDir: root,
      bwrapPath: '/nonexistent/bwrap',
      unsharePath: '/nonexistent/unshare',
      logger: { warn: (m: string) => warnings.push(m) },
    });
    const one = await missing.provision({ sessionId: 'sess_nobwrap1' });
    await missing.provision({ sessionId: 'sess_nobwrap2' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/bwrap.*WITHOUT isolation/);
    expect((await one.exec('pwd')).stdout).toBe(`${fs.realpathSync(one.hostWorkspace!)}\n`);
    await missing.destroy('sess_nobwrap1');
    await missing.destroy('sess_nobwrap2');
  });

  it('does not hang on a grandchild that escaped the process group', async () => {
    const started = Date.now();
    const r = await box.exec('setsid sleep 100.111 & echo $!');
    expect(Date.now() - started).toBeLessThan(3000);
    process.kill(Number(r.stdout.trim()), 'SIGKILL'); // the known limit of the fallback
  });
});

describe('copyWorkspace (a fork)', () => {
  it('copies files, modes and links as they are (never following a link out); the copies are independent', async () => {
    await sb.exec('mkdir -p tree/ro && printf hi > tree/a.txt && printf kept > tree/ro/f && chmod 555 tree/ro && ln -s /etc/hostname out-link && mkfifo pipe');
    expect(await driver.copyWorkspace('sess_local', 'sess_local_fork')).toBe(true);
    const fork = await driver.provision({ sessionId: 'sess_local_fork' });
    expect((await fork.readFile('tree/a.txt')).toString()).toBe('hi');
    expect((await fork.readFile('tree/ro/f')).toString()).toBe('kept');
    const host = fork.hostWorkspace!;
    expect(fs.statSync(path.join(host, 'tree/ro')).mode & 0o777).toBe(0o555);
    expect(fs.readlinkSync(path.join(host, 'out-link'))).toBe('/etc/hostname');
    await fork.writeFile('tree/a.txt', 'changed in the fork');
    expect((await sb.readFile('tree/a.txt')).toString()).toBe('hi');
    expect(await driver.copyWorkspace('sess_never_made', 'sess_local_fork_2')).toBe(false);
    await driver.destroy('sess_local_fork');
    await sb.exec('chmod 755 tree/ro && rm -rf tree out-link pipe');
  });
});
