// A CLI's tool result in the shape hermes records (src/tools/sandbox-tools.ts, src/tools/mcp/
// servers.ts) and the codex adapter maps to, so a client reads one shape whatever the engine:
// - a relayed MCP tool or capability: `{content: [blocks]}`, plus `error` (its text) when it failed;
// - a shell command: `{exit_code, output}`, status error when it exited non-zero (as hermes' bash);
// - any other failed call: `{error: <what the model read>}`;
// - any other tool: `{output: <the text the model read>}`.
import { contentText } from './cli-events.js';

export interface ToolResult {
  status: 'ok' | 'error';
  result: Record<string, unknown>;
}

/** What a call was, for the shape of its result. */
export type ToolKind = 'mcp' | 'shell' | 'other';

type Block = Record<string, unknown>;

/** An MCP tool's result: its content blocks (text as text, others kept), `error` when it failed. */
export function mcpToolResult(content: unknown, isError: boolean): ToolResult {
  const blocks: Block[] = Array.isArray(content)
    ? content.map((b: unknown) =>
        typeof b === 'string' ? { type: 'text', text: b } : b && typeof b === 'object' ? (b as Block) : { type: 'text', text: String(b) },
      )
    : [{ type: 'text', text: contentText(content) }];
  if (!isError) return { status: 'ok', result: { content: blocks } };
  const said = blocks
    .filter((b) => b.type === 'text')
    .map((b) => String(b.text ?? ''))
    .join('\n');
  return { status: 'error', result: { content: blocks, error: said || 'the tool failed' } };
}

/** A shell command's result; a non-zero exit is an error, as hermes' bash reports one. */
export function shellResult(exitCode: number | null, output: string): ToolResult {
  return { status: exitCode === 0 ? 'ok' : 'error', result: { exit_code: exitCode, output } };
}

/** A failed call: what the CLI told the model (without Claude Code's `<tool_use_error>` wrapper). */
export function errorResult(text: string): ToolResult {
  const error = text.replace(/^\s*<tool_use_error>([\s\S]*)<\/tool_use_error>\s*$/, '$1').trim();
  return { status: 'error', result: { error: error || 'the tool failed' } };
}

/** Any other tool's result: the text the model read. */
export function outputResult(output: string): ToolResult {
  return { status: 'ok', result: { output } };
}

/**
 * A result from the text the model read and whether the CLI flagged it as an error. A shell's
 * exit code comes from the CLI's structured output when it gives one, else from its words
 * (`exitCodeIn`); a failed shell call without one (refused, bad arguments) is an error result.
 */
export function toolResult(
  kind: ToolKind,
  text: string,
  isError: boolean,
  opts: { exitCode?: number | null; content?: unknown; exitCodeIn?: (text: string) => number | null } = {},
): ToolResult {
  if (kind === 'mcp') return mcpToolResult(opts.content ?? text, isError);
  if (kind === 'shell') {
    const code = opts.exitCode ?? (isError ? (opts.exitCodeIn?.(text) ?? null) : 0);
    if (code === null || (isError && code === 0)) return errorResult(text);
    return shellResult(code, text);
  }
  return isError ? errorResult(text) : outputResult(text);
}
