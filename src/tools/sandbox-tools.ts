// The sandbox tools the hermes loop offers (through the session's Toolbox, toolbox.ts), all
// acting inside the session's /workspace through the Sandbox: bash, read_file, write_file,
// edit_file. Bad arguments and failed file operations become error outcomes the model can read
// and correct, never exceptions.
import { z } from 'zod';
import { SandboxPathError, type Sandbox } from '../sandbox/driver.js';
import { sandboxPath } from '../sandbox/paths.js';

export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema object for the tool's input. */
  inputSchema: Record<string, unknown>;
}

export interface ToolOutcome {
  status: 'ok' | 'error';
  /** JSON object shown to the model and stored in the tool_result part. */
  result: Record<string, unknown>;
}

const MAX_READ_OUTPUT = 64 * 1024; // what one read_file returns to the model
const MAX_READ_SOURCE = 8 * 1024 * 1024; // how much of a file read_file and edit_file load
const MAX_TIMEOUT_MS = 600_000;

const filePath = z.string().min(1).max(4096).describe('Absolute under /workspace or relative to it');
const schemas = {
  bash: z.strictObject({
    command: z.string().min(1).max(100_000),
    timeout_ms: z.number().int().min(1).max(MAX_TIMEOUT_MS).optional().describe('Default 120000'),
  }),
  read_file: z.strictObject({
    path: filePath,
    offset: z.number().int().min(1).max(100_000_000).optional().describe('First line to read, 1-based'),
    limit: z.number().int().min(1).max(100_000).optional().describe('Number of lines'),
  }),
  write_file: z.strictObject({ path: filePath, content: z.string().max(10 * 1024 * 1024) }),
  edit_file: z.strictObject({
    path: filePath,
    old_string: z.string().min(1),
    new_string: z.string(),
    replace_all: z.boolean().optional(),
  }),
};
type ToolName = keyof typeof schemas;

const DESCRIPTIONS: Record<ToolName, string> = {
  bash: 'Run a bash command with /workspace as the working directory. Each call is a fresh shell: cd and variables do not carry over, and background processes end with the command. Returns exit_code, stdout and stderr (each cut at 64 KiB).',
  read_file:
    'Read a text file. Returns its lines from offset (1-based) for limit lines, at most 64 KiB per call; total_lines tells how many lines the file has.',
  write_file: 'Create or overwrite a file with the given content; parent directories are created.',
  edit_file: 'Replace old_string with new_string in a file. old_string must match exactly and occur once, unless replace_all is true.',
};

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema) as Record<string, unknown>;
  return rest;
}

export const SANDBOX_TOOLS: ToolDefinition[] = (Object.keys(schemas) as ToolName[]).map((name) => ({
  name,
  description: DESCRIPTIONS[name],
  inputSchema: jsonSchema(schemas[name]),
}));

const fail = (error: string, extra: Record<string, unknown> = {}): ToolOutcome => ({ status: 'error', result: { error, ...extra } });
const ok = (result: Record<string, unknown>): ToolOutcome => ({ status: 'ok', result });

function looksBinary(buf: Buffer): boolean {
  return buf.subarray(0, 8000).includes(0);
}

type Args<N extends ToolName> = z.infer<(typeof schemas)[N]>;
type Runner<N extends ToolName> = (sandbox: Sandbox, a: Args<N>, opts: { signal?: AbortSignal; timeoutMs?: number }) => Promise<ToolOutcome>;

const runners: { [N in ToolName]: Runner<N> } = {
  async bash(sandbox, a, opts) {
    const r = await sandbox.exec(a.command, { timeoutMs: a.timeout_ms ?? opts.timeoutMs, signal: opts.signal });
    const result = { exit_code: r.exitCode, stdout: r.stdout, stderr: r.stderr, timed_out: r.timedOut, truncated: r.truncated };
    return { status: r.exitCode === 0 && !r.timedOut ? 'ok' : 'error', result };
  },

  async read_file(sandbox, a) {
    const loaded = await loadText(sandbox, a.path);
    if ('error' in loaded) return loaded.error;
    // A final newline ends the last line rather than starting an empty one.
    const lines = loaded.text.split('\n');
    if (loaded.text.endsWith('\n') || loaded.text === '') lines.pop();
    const start = (a.offset ?? 1) - 1;
    const end = Math.min(lines.length, a.limit ? start + a.limit : lines.length);
    const picked: string[] = [];
    let bytes = 0;
    let next = start;
    for (; next < end; next++) {
      const line = lines[next]!;
      const size = Buffer.byteLength(line) + 1;
      if (bytes + size > MAX_READ_OUTPUT) {
        // A single huge line still shows its beginning.
        if (next === start) picked.push(cutUtf8(line, MAX_READ_OUTPUT));
        break;
      }
      picked.push(line);
      bytes += size;
    }
    const content = picked.join('\n');
    const truncated = next < end || loaded.partial;
    const result: Record<string, unknown> = { path: sandboxPath(a.path), content, total_lines: lines.length, truncated };
    if (next < end) result.next_offset = next === start ? next + 2 : next + 1;
    if (loaded.partial) result.note = `only the first ${MAX_READ_SOURCE} bytes were read; use bash (sed -n, tail) for the rest`;
    return ok(result);
  },

  async write_file(sandbox, a) {
    await sandbox.writeFile(a.path, a.content);
    return ok({ path: sandboxPath(a.path), bytes_written: Buffer.byteLength(a.content) });
  },

  async edit_file(sandbox, a) {
    const loaded = await loadText(sandbox, a.path);
    if ('error' in loaded) return loaded.error;
    if (loaded.partial) return fail(`${a.path} is larger than ${MAX_READ_SOURCE} bytes; edit it with bash`);
    const parts = loaded.text.split(a.old_string);
    const count = parts.length - 1;
    if (count === 0) return fail('old_string was not found in the file');
    if (count > 1 && !a.replace_all) return fail(`old_string occurs ${count} times; add context to make it unique or set replace_all`);
    const next = a.replace_all ? parts.join(a.new_string) : loaded.text.replace(a.old_string, () => a.new_string);
    await sandbox.writeFile(a.path, next);
    return ok({ path: sandboxPath(a.path), replacements: a.replace_all ? count : 1 });
  },
};

/** A text file's content (up to MAX_READ_SOURCE), or the error outcome explaining why not. */
async function loadText(sandbox: Sandbox, p: string): Promise<{ text: string; partial: boolean } | { error: ToolOutcome }> {
  const st = await sandbox.stat(p);
  if (!st) return { error: fail(`no such file: ${p}`) };
  if (st.isDirectory) return { error: fail(`${p} is a directory; list it with bash`) };
  const buf = await sandbox.readFile(p, { maxBytes: MAX_READ_SOURCE });
  if (looksBinary(buf)) return { error: fail(`${p} is a binary file (${st.size} bytes)`, { binary: true, size: st.size }) };
  const partial = buf.length >= MAX_READ_SOURCE && st.size > buf.length;
  return { text: buf.subarray(0, partial ? cutUtf8Length(buf) : buf.length).toString('utf8'), partial };
}

function cutUtf8(text: string, maxBytes: number): string {
  const buf = Buffer.from(text).subarray(0, maxBytes);
  return buf.subarray(0, cutUtf8Length(buf)).toString('utf8');
}

/** Length without a trailing partial UTF-8 sequence. */
function cutUtf8Length(buf: Buffer): number {
  let i = buf.length;
  while (i > 0 && i > buf.length - 4 && (buf[i - 1]! & 0xc0) === 0x80) i--;
  if (i === 0) return buf.length;
  const lead = buf[i - 1]!;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return buf.length - (i - 1) < need ? i - 1 : buf.length;
}

const ERRNO_MESSAGES: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ELOOP: 'refusing to follow a symbolic link',
  EISDIR: 'is a directory',
  ENOTDIR: 'a component of the path is not a directory',
  EEXIST: 'a file is in the way of a directory that was needed',
  ENAMETOOLONG: 'file name too long',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  EINVAL: 'not a regular file (a pipe, socket or device)',
};

/**
 * File-system failures become messages the model can act on (fixed texts: Node's own messages
 * carry host paths). Anything without an errno code is a bug and is thrown.
 */
function describeError(err: unknown): string | null {
  if (err instanceof SandboxPathError) return err.message;
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (typeof code !== 'string') return null;
  if (code === 'ESANDBOXGONE') return (err as Error).message; // ours: no host paths
  return ERRNO_MESSAGES[code] ?? `failed (${code})`;
}

export async function runSandboxTool(
  sandbox: Sandbox,
  name: string,
  args: unknown,
  opts: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<ToolOutcome> {
  if (!Object.hasOwn(schemas, name)) return fail(`unknown tool ${name}; available: ${SANDBOX_TOOLS.map((t) => t.name).join(', ')}`);
  const tool = name as ToolName;
  const parsed = schemas[tool].safeParse(args);
  if (!parsed.success) return fail(`invalid arguments for ${tool}: ${z.prettifyError(parsed.error)}`);
  try {
    return await (runners[tool] as Runner<ToolName>)(sandbox, parsed.data as Args<ToolName>, opts);
  } catch (err) {
    const message = describeError(err);
    if (message === null) throw err;
    const p = (parsed.data as { path?: string }).path;
    return fail(p && !(err instanceof SandboxPathError) ? `${p}: ${message}` : message);
  }
}
