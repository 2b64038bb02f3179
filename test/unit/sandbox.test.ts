// The local sandbox driver: exec, timeouts and aborts that kill whole process trees, output
// limits, the jail (no host files, no service env, own PID namespace), path containment.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalDriver, bwrapAvailable } from '../../src/sandbox/local.js';
import type { Sandbox, SandboxDriver } from '../../src/sandbox/driver.js';
import { runSandboxTool } from '../../src/tools/sandbox-tools.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-test-'));
let driver: SandboxDriver;
let sb: Sandbox;
beforeAll(async () => {
  process.env.FAKE_PROVIDER_KEY_FOR_TEST = 'must-not-leak';
  driver = createLocalDriver({ rootDir: root });
  sb = await driver.provision({ sessionId: 'sess_unit' });
});
afterAll(async () => {
  await driver.destroy('sess_unit');
  fs.rmSync(root, { recursive: true, force: true });
});

describe('exec', () => {
  it('runs in /workspace and reports exit codes and output', async () => {
    const r = await sb.exec('pwd; echo out; echo err >&2; exit 3');
    expect(r).toMatchObject({ exitCode: 3, stdout: '/workspace\nout\n', stderr: 'err\n', timedOut: false, truncated: false });
  });

  it('files written by exec are visible to readFile and the other way round', async () => {
    await sb.exec('mkdir -p d && printf abc > d/x.txt');
    expect((await sb.readFile('d/x.txt')).toString()).toBe('abc');
    await sb.writeFile('/workspace/d/y.txt', 'from host');
    expect((await sb.exec('cat d/y.txt')).stdout).toBe('from host');
  });

  it('a timeout kills the whole process tree promptly', async () => {
    const started = Date.now();
    const r = await sb.exec('sleep 100 & sleep 100; wait', { timeoutMs: 500 });
    expect(r.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('an abort signal kills the command', async () => {
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 200);
    const r = await sb.exec('sleep 100', { signal: ctl.signal });
    expect(r.aborted).toBe(true);
  });

  it('does not hang on a background child that keeps the pipes open', async () => {
    const started = Date.now();
    const r = await sb.exec('(sleep 100 &) ; echo done', { timeoutMs: 10_000 });
    expect(r.stdout).toBe('done\n');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('truncates output at the limit', async () => {
    const r = await sb.exec('head -c 100000 /dev/zero | tr "\\0" a', { maxOutputBytes: 1000 });
    expect(r.stdout.length).toBe(1000);
    expect(r.truncated).toBe(true);
  });
});

describe.skipIf(!bwrapAvailable())('the jail', () => {
  it('cannot see host files outside the allowed system directories', async () => {
    const hostFile = path.join(os.tmpdir(), `host-only-${Date.now()}`);
    fs.writeFileSync(hostFile, 'secret');
    const r = await sb.exec(`cat ${hostFile}; ls /root /home /work 2>&1 | wc -l; test -e /var/lib && echo var-visible`);
    expect(r.stdout).not.toContain('secret');
    expect(r.stdout).not.toContain('var-visible');
    fs.rmSync(hostFile);
  });

  it("gets a clean environment without the service's variables", async () => {
    const r = await sb.exec('env');
    expect(r.stdout).not.toContain('must-not-leak');
    expect(r.stdout).toContain('HOME=/workspace');
  });

  it('has its own PID namespace', async () => {
    const r = await sb.exec('ls /proc | grep -c "^[0-9]"');
    expect(Number(r.stdout.trim())).toBeLessThan(10);
  });
});

describe('paths', () => {
  it.each(['../escape.txt', '/etc/passwd', '/workspace/../etc/passwd', 'a/../../b'])('refuses %s', async (p) => {
    await expect(sb.readFile(p)).rejects.toThrow(/outside/);
    await expect(sb.writeFile(p, 'x')).rejects.toThrow(/outside/);
  });

  it('refuses to follow symlinks that point outside the workspace', async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'outside-'));
    fs.writeFileSync(path.join(outside, 'target.txt'), 'outside data');
    fs.symlinkSync(path.join(outside, 'target.txt'), path.join(sb.hostWorkspace!, 'link.txt'));
    fs.symlinkSync(outside, path.join(sb.hostWorkspace!, 'linkdir'));
    await expect(sb.readFile('link.txt')).rejects.toThrow();
    await expect(sb.writeFile('link.txt', 'x')).rejects.toThrow();
    await expect(sb.writeFile('linkdir/new.txt', 'x')).rejects.toThrow();
    expect(fs.readFileSync(path.join(outside, 'target.txt'), 'utf8')).toBe('outside data');
    expect(fs.existsSync(path.join(outside, 'new.txt'))).toBe(false);
    const viaTool = await runSandboxTool(sb, 'read_file', { path: 'link.txt' });
    expect(viaTool.status).toBe('error');
  });

  it('read-only copies cannot be changed from inside', async () => {
    await sb.writeFile('ro/data.csv', 'a,b\n', { readOnly: true });
    const r = await sb.exec('echo x >> ro/data.csv; whoami');
    if (r.stdout.trim() !== 'root') expect((await sb.readFile('ro/data.csv')).toString()).toBe('a,b\n');
    expect(fs.statSync(path.join(sb.hostWorkspace!, 'ro/data.csv')).mode & 0o777).toBe(0o444);
  });
});

describe('driver lifecycle', () => {
  it('destroy kills running processes and removes the directory; provision is idempotent', async () => {
    const other = await driver.provision({ sessionId: 'sess_unit2' });
    expect(await driver.provision({ sessionId: 'sess_unit2' })).toBe(other);
    const running = other.exec('sleep 100');
    await new Promise((r) => setTimeout(r, 200));
    await driver.destroy('sess_unit2');
    const r = await running;
    expect(r.exitCode).toBeNull();
    expect(fs.existsSync(path.join(root, 'sess_unit2'))).toBe(false);
    expect(await driver.get('sess_unit2')).toBeNull();
  });

  it('the no-jail fallback runs commands in the workspace directory', async () => {
    const plain = createLocalDriver({ rootDir: root, forceNoJail: true });
    const box = await plain.provision({ sessionId: 'sess_plain' });
    const r = await box.exec('pwd; echo $HOME');
    expect(r.stdout.split('\n')[0]).toBe(fs.realpathSync(box.hostWorkspace!));
    await plain.destroy('sess_plain');
  });
});

describe('hermes tools', () => {
  it('edit_file replaces exactly once, refuses ambiguity and missing strings', async () => {
    await sb.writeFile('e.txt', 'one two two');
    expect(await runSandboxTool(sb, 'edit_file', { path: 'e.txt', old_string: 'one', new_string: '1' })).toMatchObject({
      status: 'ok',
      result: { replacements: 1 },
    });
    expect((await runSandboxTool(sb, 'edit_file', { path: 'e.txt', old_string: 'two', new_string: '2' })).status).toBe('error');
    expect(await runSandboxTool(sb, 'edit_file', { path: 'e.txt', old_string: 'two', new_string: '2', replace_all: true })).toMatchObject({
      status: 'ok',
      result: { replacements: 2 },
    });
    expect((await sb.readFile('e.txt')).toString()).toBe('1 2 2');
    expect((await runSandboxTool(sb, 'edit_file', { path: 'e.txt', old_string: 'zzz', new_string: '' })).status).toBe('error');
  });

  it('read_file pages lines; bad arguments and unknown tools are error outcomes', async () => {
    await sb.writeFile('lines.txt', 'a\nb\nc\nd');
    expect(await runSandboxTool(sb, 'read_file', { path: 'lines.txt', offset: 2, limit: 2 })).toMatchObject({
      status: 'ok',
      result: { content: 'b\nc', total_lines: 4 },
    });
    expect((await runSandboxTool(sb, 'read_file', { nope: 1 })).status).toBe('error');
    expect((await runSandboxTool(sb, 'read_file', { path: 'missing.txt' })).status).toBe('error');
    expect((await runSandboxTool(sb, 'teleport', {})).status).toBe('error');
    expect((await runSandboxTool(sb, 'bash', { command: 'exit 1' })).status).toBe('error');
  });
});
