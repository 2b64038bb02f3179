// The hermes engine's tools, all acting inside the session's /workspace through the Sandbox:
// bash, read_file, write_file, edit_file. Bad arguments become error outcomes the model can
// read and correct, never exceptions.
import { z } from 'zod';
import type { Sandbox } from '../../sandbox/driver.js';
import { SandboxPathError } from '../../sandbox/driver.js';

export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface ToolOutcome {
  status: 'ok' | 'error';
  result: Record<string, unknown>;
}

const MAX_READ_BYTES = 64 * 1024;
const MAX_TIMEOUT_MS = 600_000;

const bashArgs = z.strictObject({ command: z.string().min(1).max(100_000), timeout_ms: z.number().int().min(1).max(MAX_TIMEOUT_MS).optional() });
const readArgs = z.strictObject({ path: z.string().min(1).max(4096), offset: z.number().int().min(1).optional(), limit: z.number().int().min(1).max(100_000).optional() });
const writeArgs = z.strictObject({ path: z.string().min(1).max(4096), content: z.string().max(10 * 1024 * 1024) });
const editArgs = z.strictObject({ path: z.string().min(1).max(4096), old_string: z.string().min(1), new_string: z.string(), replace_all: z.boolean().optional() });

export const HERMES_TOOLS: ToolDefinition[] = [
  { name: 'bash', description: 'Run a bash command in /workspace. Returns exit code, stdout and stderr (each truncated at 64 KiB).', inputSchema: z.toJSONSchema(bashArgs) as Record<string, unknown> },
  { name: 'read_file', description: 'Read a text file (path absolute under /workspace or relative to it). offset is the first line (1-based), limit the number of lines.', inputSchema: z.toJSONSchema(readArgs) as Record<string, unknown> },
  { name: 'write_file', description: 'Create or overwrite a file with the given content (parent directories are created).', inputSchema: z.toJSONSchema(writeArgs) as Record<string, unknown> },
  { name: 'edit_file', description: 'Replace old_string with new_string in a file. old_string must occur exactly once unless replace_all is true.', inputSchema: z.toJSONSchema(editArgs) as Record<string, unknown> },
];
for (const t of HERMES_TOOLS) delete t.inputSchema.$schema;

const fail = (message: string, extra: Record<string, unknown> = {}): ToolOutcome => ({ status: 'error', result: { error: message, ...extra } });

function looksBinary(buf: Buffer): boolean {
  return buf.subarray(0, 8000).includes(0);
}

export async function runTool(sandbox: Sandbox, name: string, args: unknown, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<ToolOutcome> {
  try {
    switch (name) {
      case 'bash': {
        const a = bashArgs.safeParse(args);
        if (!a.success) return fail(`invalid arguments: ${a.error.issues[0]?.message}`);
        const r = await sandbox.exec(a.data.command, { timeoutMs: a.data.timeout_ms ?? opts.timeoutMs, signal: opts.signal });
        const result = { exit_code: r.exitCode, stdout: r.stdout, stderr: r.stderr, timed_out: r.timedOut, truncated: r.truncated };
        return { status: r.exitCode === 0 ? 'ok' : 'error', result };
      }
      case 'read_file': {
        const a = readArgs.safeParse(args);
        if (!a.success) return fail(`invalid arguments: ${a.error.issues[0]?.message}`);
        const st = await sandbox.stat(a.data.path);
        if (!st) return fail(`no such file: ${a.data.path}`);
        if (st.isDirectory) return fail(`${a.data.path} is a directory`);
        const buf = await sandbox.readFile(a.data.path, { maxBytes: 4 * 1024 * 1024 });
        if (looksBinary(buf)) return fail(`${a.data.path} is a binary file (${st.size} bytes)`, { binary: true, size: st.size });
        const lines = buf.toString('utf8').split('\n');
        const start = (a.data.offset ?? 1) - 1;
        let content = lines.slice(start, a.data.limit ? start + a.data.limit : undefined).join('\n');
        let truncated = st.size > buf.length;
        if (Buffer.byteLength(content) > MAX_READ_BYTES) {
          content = Buffer.from(content).subarray(0, MAX_READ_BYTES).toString('utf8');
          truncated = true;
        }
        return { status: 'ok', result: { path: a.data.path, content, total_lines: lines.length, truncated } };
      }
      case 'write_file': {
        const a = writeArgs.safeParse(args);
        if (!a.success) return fail(`invalid arguments: ${a.error.issues[0]?.message}`);
        await sandbox.writeFile(a.data.path, a.data.content);
        return { status: 'ok', result: { path: a.data.path, bytes_written: Buffer.byteLength(a.data.content) } };
      }
      case 'edit_file': {
        const a = editArgs.safeParse(args);
        if (!a.success) return fail(`invalid arguments: ${a.error.issues[0]?.message}`);
        const st = await sandbox.stat(a.data.path);
        if (!st?.isFile) return fail(`no such file: ${a.data.path}`);
        const text = (await sandbox.readFile(a.data.path)).toString('utf8');
        const count = text.split(a.data.old_string).length - 1;
        if (count === 0) return fail('old_string was not found in the file');
        if (count > 1 && !a.data.replace_all) return fail(`old_string occurs ${count} times; make it unique or set replace_all`);
        const next = a.data.replace_all ? text.split(a.data.old_string).join(a.data.new_string) : text.replace(a.data.old_string, () => a.data.new_string);
        await sandbox.writeFile(a.data.path, next);
        return { status: 'ok', result: { path: a.data.path, replacements: a.data.replace_all ? count : 1 } };
      }
      default:
        return fail(`unknown tool ${name}; available: ${HERMES_TOOLS.map((t) => t.name).join(', ')}`);
    }
  } catch (err) {
    if (err instanceof SandboxPathError) return fail(err.message);
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return fail('no such file or directory');
    if (code === 'EACCES' || code === 'EPERM') return fail('permission denied (the file is read-only)');
    if (code === 'ELOOP') return fail('refusing to follow a symbolic link');
    if (code === 'EISDIR') return fail('is a directory');
    throw err;
  }
}
