// The sandbox tools hermes offers (src/tools/sandbox-tools.ts) against a real local sandbox:
// results the model sees, error outcomes for bad arguments and failed operations (never a
// throw), containment to /workspace.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_TOOLS, runSandboxTool } from '../../src/tools/sandbox-tools.js';
import type { Sandbox, SandboxDriver } from '../../src/sandbox/driver.js';
import { createLocalDriver } from '../../src/sandbox/local.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'hermes-tools-'));
let driver: SandboxDriver;
let sb: Sandbox;

beforeAll(async () => {
  driver = createLocalDriver({ rootDir: root });
  sb = await driver.provision({ sessionId: 'sess_tools' });
});
afterAll(async () => {
  await driver.destroy('sess_tools');
  fs.rmSync(root, { recursive: true, force: true });
});

describe('definitions', () => {
  it('offers bash, read_file, write_file and edit_file with JSON Schema inputs', () => {
    expect(SANDBOX_TOOLS.map((t) => t.name)).toEqual(['bash', 'read_file', 'write_file', 'edit_file']);
    for (const t of SANDBOX_TOOLS) {
      expect(t.description.length).toBeGreaterThan(20);
      expect(t.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
      expect(t.inputSchema).not.toHaveProperty('$schema');
    }
    expect(SANDBOX_TOOLS[0]!.inputSchema).toMatchObject({
      required: ['command'],
      properties: { command: { type: 'string' }, timeout_ms: { type: 'integer' } },
    });
    expect(SANDBOX_TOOLS[3]!.inputSchema).toMatchObject({ required: ['path', 'old_string', 'new_string'] });
  });
});

describe('bash', () => {
  it('returns exit code and output; non-zero exit is an error outcome', async () => {
    expect(await runSandboxTool(sb, 'bash', { command: 'echo hi; echo oops >&2' })).toEqual({
      status: 'ok',
      result: { exit_code: 0, stdout: 'hi\n', stderr: 'oops\n', timed_out: false, truncated: false },
    });
    expect(await runSandboxTool(sb, 'bash', { command: 'exit 7' })).toMatchObject({ status: 'error', result: { exit_code: 7 } });
  });

  it('times out with timeout_ms, or the caller default', async () => {
    const started = Date.now();
    expect(await runSandboxTool(sb, 'bash', { command: 'sleep 100', timeout_ms: 300 })).toMatchObject({
      status: 'error',
      result: { timed_out: true, exit_code: null },
    });
    expect(await runSandboxTool(sb, 'bash', { command: 'sleep 100' }, { timeoutMs: 300 })).toMatchObject({ status: 'error', result: { timed_out: true } });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('stops on the abort signal', async () => {
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 150);
    expect(await runSandboxTool(sb, 'bash', { command: 'sleep 100' }, { signal: ctl.signal })).toMatchObject({ status: 'error', result: { exit_code: null } });
  });

  it('reports truncated output', async () => {
    const r = await runSandboxTool(sb, 'bash', { command: 'head -c 200000 /dev/zero | tr "\\0" x' });
    expect(r.result).toMatchObject({ truncated: true });
    expect((r.result.stdout as string).length).toBe(64 * 1024);
  });
});

describe('read_file', () => {
  beforeAll(async () => {
    await sb.writeFile('lines.txt', 'a\nb\nc\nd\n');
  });

  it('reads whole files and pages by lines', async () => {
    expect(await runSandboxTool(sb, 'read_file', { path: 'lines.txt' })).toEqual({
      status: 'ok',
      result: { path: '/workspace/lines.txt', content: 'a\nb\nc\nd', total_lines: 4, truncated: false },
    });
    expect(await runSandboxTool(sb, 'read_file', { path: '/workspace/lines.txt', offset: 2, limit: 2 })).toMatchObject({
      status: 'ok',
      result: { content: 'b\nc', total_lines: 4, truncated: false },
    });
    expect(await runSandboxTool(sb, 'read_file', { path: 'lines.txt', offset: 10 })).toMatchObject({ status: 'ok', result: { content: '' } });
    await sb.writeFile('empty.txt', '');
    expect(await runSandboxTool(sb, 'read_file', { path: 'empty.txt' })).toMatchObject({ status: 'ok', result: { content: '', total_lines: 0 } });
  });

  it('sees files written by commands', async () => {
    await runSandboxTool(sb, 'bash', { command: 'seq 1 5 > nums.txt' });
    expect(await runSandboxTool(sb, 'read_file', { path: 'nums.txt', offset: 5 })).toMatchObject({ result: { content: '5', total_lines: 5 } });
  });

  it('limits one read to about 64 KiB and says where to continue', async () => {
    const line = 'y'.repeat(99);
    await sb.writeFile('big.txt', `${line}\n`.repeat(2000)); // 200 KB
    const r = await runSandboxTool(sb, 'read_file', { path: 'big.txt' });
    expect(r.status).toBe('ok');
    expect(r.result).toMatchObject({ truncated: true, total_lines: 2000, next_offset: 656 });
    expect(Buffer.byteLength(r.result.content as string)).toBeLessThanOrEqual(64 * 1024);
    expect((r.result.content as string).split('\n')).toHaveLength(655);
    const rest = await runSandboxTool(sb, 'read_file', { path: 'big.txt', offset: 656, limit: 10 });
    expect(rest.result).toMatchObject({ truncated: false, content: Array(10).fill(line).join('\n') });
    // One line longer than the limit still shows its start.
    await sb.writeFile('wide.txt', 'é'.repeat(40_000));
    const wide = await runSandboxTool(sb, 'read_file', { path: 'wide.txt' });
    expect(wide.result).toMatchObject({ truncated: true, total_lines: 1 });
    expect(wide.result.content).toBe('é'.repeat(32 * 1024));
  });

  it('reports binary files, directories and missing files as errors', async () => {
    await sb.writeFile('blob.bin', Buffer.from([0x7f, 0x45, 0x00, 0x01]));
    expect(await runSandboxTool(sb, 'read_file', { path: 'blob.bin' })).toMatchObject({ status: 'error', result: { binary: true, size: 4 } });
    expect(await runSandboxTool(sb, 'read_file', { path: '/workspace' })).toMatchObject({
      status: 'error',
      result: { error: expect.stringMatching(/directory/) },
    });
    expect(await runSandboxTool(sb, 'read_file', { path: 'missing.txt' })).toMatchObject({
      status: 'error',
      result: { error: expect.stringMatching(/no such file/) },
    });
  });
});

describe('write_file and edit_file', () => {
  it('writes files, creating directories, visible to bash', async () => {
    expect(await runSandboxTool(sb, 'write_file', { path: 'src/app/main.py', content: 'print("héllo")\n' })).toEqual({
      status: 'ok',
      result: { path: '/workspace/src/app/main.py', bytes_written: 16 },
    });
    expect((await runSandboxTool(sb, 'bash', { command: 'cat src/app/main.py' })).result.stdout).toBe('print("héllo")\n');
  });

  it('replaces exactly once, refuses ambiguity and missing strings, or replaces all', async () => {
    await runSandboxTool(sb, 'write_file', { path: 'e.txt', content: 'one two two $&' });
    expect(await runSandboxTool(sb, 'edit_file', { path: 'e.txt', old_string: 'one', new_string: '1' })).toEqual({
      status: 'ok',
      result: { path: '/workspace/e.txt', replacements: 1 },
    });
    expect(await runSandboxTool(sb, 'edit_file', { path: 'e.txt', old_string: 'two', new_string: '2' })).toMatchObject({
      status: 'error',
      result: { error: expect.stringMatching(/occurs 2 times/) },
    });
    expect(await runSandboxTool(sb, 'edit_file', { path: 'e.txt', old_string: 'zzz', new_string: '' })).toMatchObject({
      status: 'error',
      result: { error: expect.stringMatching(/not found/) },
    });
    expect(await runSandboxTool(sb, 'edit_file', { path: 'e.txt', old_string: 'two', new_string: '2', replace_all: true })).toMatchObject({
      status: 'ok',
      result: { replacements: 2 },
    });
    // Replacement text is literal: no `$&` patterns.
    expect(await runSandboxTool(sb, 'edit_file', { path: 'e.txt', old_string: '$&', new_string: '$`' })).toMatchObject({ status: 'ok' });
    expect((await sb.readFile('e.txt')).toString()).toBe('1 2 2 $`');
    expect(await runSandboxTool(sb, 'edit_file', { path: 'nope.txt', old_string: 'a', new_string: 'b' })).toMatchObject({ status: 'error' });
    expect(await runSandboxTool(sb, 'edit_file', { path: 'blob.bin', old_string: 'E', new_string: 'F' })).toMatchObject({
      status: 'error',
      result: { binary: true },
    });
  });
});

describe('errors are outcomes, never throws', () => {
  it.each([
    ['bash', {}],
    ['bash', { command: '' }],
    ['bash', { command: 'true', timeout_ms: -1 }],
    ['bash', { command: 'true', extra: 1 }],
    ['read_file', { nope: 1 }],
    ['read_file', { path: 'lines.txt', offset: 0 }],
    ['read_file', null],
    ['write_file', { path: 'x.txt' }],
    ['edit_file', { path: 'x.txt', old_string: '', new_string: 'a' }],
    ['edit_file', 'not an object'],
  ])('%s with invalid arguments %j', async (name, args) => {
    const r = await runSandboxTool(sb, name, args);
    expect(r.status).toBe('error');
    expect(r.result.error).toMatch(/^invalid arguments/);
  });

  it('unknown tools, including inherited property names', async () => {
    for (const name of ['teleport', 'toString', '__proto__']) {
      expect(await runSandboxTool(sb, name, {})).toMatchObject({ status: 'error', result: { error: expect.stringMatching(/unknown tool/) } });
    }
  });

  it('paths outside /workspace, directly or through a symlink', async () => {
    const outside = path.join(os.tmpdir(), `tools-outside-${process.pid}.txt`);
    fs.writeFileSync(outside, 'host data');
    try {
      fs.symlinkSync(outside, path.join(sb.hostWorkspace!, 'link.txt'));
      for (const [name, args] of [
        ['read_file', { path: '/etc/passwd' }],
        ['read_file', { path: '../../x' }],
        ['read_file', { path: 'link.txt' }],
        ['write_file', { path: 'link.txt', content: 'pwned' }],
        ['write_file', { path: '/tmp/x', content: 'x' }],
        ['edit_file', { path: 'link.txt', old_string: 'host', new_string: 'pwned' }],
      ] as const) {
        const r = await runSandboxTool(sb, name, args);
        expect(r, `${name} ${JSON.stringify(args)}`).toMatchObject({ status: 'error', result: { error: expect.stringMatching(/outside \/workspace/) } });
      }
      expect(fs.readFileSync(outside, 'utf8')).toBe('host data');
    } finally {
      fs.rmSync(outside, { force: true });
    }
  });

  it('writing into a path below a file', async () => {
    await runSandboxTool(sb, 'write_file', { path: 'plain.txt', content: 'x' });
    expect(await runSandboxTool(sb, 'write_file', { path: 'plain.txt/child', content: 'x' })).toMatchObject({ status: 'error' });
    await runSandboxTool(sb, 'bash', { command: 'mkfifo fifo' });
    const fifo = await runSandboxTool(sb, 'read_file', { path: 'fifo' });
    expect(fifo).toMatchObject({ status: 'error', result: { error: 'fifo: not a regular file (a pipe, socket or device)' } });
    // Messages never show the host's path of the workspace.
    expect(JSON.stringify(fifo)).not.toContain(sb.hostWorkspace!);
  });
});
