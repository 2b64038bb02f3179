// OpenClaw's agent events, as the plugin of plugin.ts prints them while a run goes
// (`AGENT_SERVICE_EVENT {runId, seq, stream, data}`), → the session events hermes produces:
// - `assistant` {text, delta, itemId, replace?}: agent.message chunks of one message per itemId,
//   then the complete message when another stream takes over (or at the run's end);
// - `thinking` {text, delta}: agent.reasoning chunks, then the complete block;
// - `tool` start {name, toolCallId, args, parentToolCallId?} / result {result, isError}:
//   agent.tool_use with its arguments and agent.tool_result with its output;
// - `transcript` {role: assistant, content}: the complete message once OpenClaw stores it (before
//   its tool calls run). It completes what streamed, and is the record of the thinking and text
//   that did not: OpenClaw streams neither when the message also calls a tool and the provider's
//   answer arrived at once (its "commentary"), which is a matter of network timing.
// OpenClaw's Tool Search (its default) offers MCP tools through `tool_call`, which runs the real
// tool as a child call: the child is recorded (`mcp__docs__search` with its own arguments), not
// the wrapper; a `tool_call` that ran nothing (an unknown name) is recorded itself.
import type { EngineEvent } from '../core/adapter.js';
import { asRecord, contentText, TextStream, ToolCalls } from '../core/cli-events.js';
import { cliMcpToolName, MCP_RELAY_SERVER } from '../core/mcp-relay.js';
import { OPENCLAW_EVENT_MARK } from './plugin.js';
import { errorResult, mcpToolResult, outputResult, shellResult, type ToolResult } from '../core/tool-results.js';

/** Tool Search's call-by-name tool: its child call is the one recorded. */
const WRAPPERS = new Set(['tool_call']);
/** Text of a tool result kept in an event (hermes cuts a command's output at 64 KiB too). */
const MAX_RESULT_CHARS = 64 * 1024;

interface AgentEvent {
  runId: string;
  seq: number;
  stream: string;
  data: Record<string, any>;
}

/** The event a stdout line carries, or null for any other line. */
export function openclawEventOf(line: string): AgentEvent | null {
  if (!line.startsWith(OPENCLAW_EVENT_MARK)) return null;
  try {
    const v = JSON.parse(line.slice(OPENCLAW_EVENT_MARK.length)) as Partial<AgentEvent> | null;
    if (!v || typeof v.stream !== 'string' || !v.data || typeof v.data !== 'object') return null;
    return { runId: String(v.runId ?? ''), seq: Number(v.seq ?? 0), stream: v.stream, data: v.data };
  } catch {
    return null;
  }
}

/** OpenClaw names an MCP tool `<server>__<tool>`: a relayed one keeps the name hermes gives it. */
export function openclawToolName(name: string): string {
  const i = name.indexOf('__');
  if (i <= 0) return name;
  return name.slice(0, i) === MCP_RELAY_SERVER ? cliMcpToolName(MCP_RELAY_SERVER, name.slice(i + 2)) : name;
}

const cut = (text: string) => (text.length > MAX_RESULT_CHARS ? { text: text.slice(0, MAX_RESULT_CHARS), truncated: true } : { text, truncated: false });

/**
 * A tool result as hermes records one (src/engines/cli/core/tool-results.ts): an MCP tool's
 * `{content, structured_content}` (an error also with `error`), a command's `{exit_code, output}`
 * (an error when it exits non-zero or did not complete), any other tool's text as `{output}`, a
 * failure as `{error}`; a cut output says `truncated`.
 */
export function openclawToolResult(name: string, data: Record<string, any>): ToolResult {
  const raw = asRecord(data.result);
  const details = asRecord(raw.details);
  const failed = data.isError === true;
  if (typeof details.mcpServer === 'string') {
    let content: unknown[] = Array.isArray(raw.content) ? raw.content : [];
    const structured = details.structuredContent;
    // OpenClaw puts the structured content in front as text for its model; it is kept apart here.
    if (structured != null) content = content.filter((b: any) => !(b?.type === 'text' && String(b.text ?? '').startsWith('structuredContent:')));
    const r = mcpToolResult(content, failed);
    if (structured != null) r.result.structured_content = structured;
    return r;
  }
  const output = cut(contentText(raw.content));
  const withCut = (r: ToolResult): ToolResult => (output.truncated ? { ...r, result: { ...r.result, truncated: true } } : r);
  if (typeof details.exitCode === 'number' || details.exitCode === null) {
    const exitCode = details.exitCode as number | null;
    const completed = !failed && (details.status === undefined || details.status === 'completed');
    const r = shellResult(exitCode, output.text);
    return withCut(completed ? r : { ...r, status: 'error' });
  }
  return withCut(failed ? errorResult(output.text || `${name} failed`) : outputResult(output.text));
}

/** One turn's agent events → session events; `close()` completes what is still open. */
export class OpenclawEvents {
  private readonly seen = new Set<string>();
  private readonly tools = new ToolCalls();
  private message: { itemId: string; stream: TextStream; text: string } | null = null;
  private reasoning: { stream: TextStream; text: string } | null = null;
  /** `tool_call` wrappers not yet recorded: their arguments, and whether a child call ran. */
  private readonly wrappers = new Map<string, { name: string; args: unknown; ran: boolean }>();
  /** The complete texts of the messages streamed so far. */
  readonly messages: string[] = [];
  /** Whether any tool event came (the summary's names-only list is then not needed). */
  sawTools = false;
  /** Whether thinking / text streamed since the last complete message. */
  private streamedThinking = false;
  private streamedText = false;

  event(ev: AgentEvent): EngineEvent[] {
    // One event once, whatever happens to print it twice.
    const key = `${ev.stream === 'transcript' ? 'transcript' : 'event'}:${ev.runId}:${ev.seq}`;
    if (ev.seq && this.seen.has(key)) return [];
    if (ev.seq) this.seen.add(key);
    const d = ev.data;
    switch (ev.stream) {
      case 'assistant':
        return this.assistant(d);
      case 'thinking': {
        const out = this.closeMessage();
        if (!this.reasoning) this.reasoning = { stream: new TextStream('reasoning'), text: '' };
        this.streamedThinking = true;
        if (typeof d.text === 'string') this.reasoning.text = d.text;
        out.push(...this.reasoning.stream.chunk(typeof d.delta === 'string' ? d.delta : ''));
        return out;
      }
      case 'tool':
        return this.tool(d);
      case 'transcript':
        return d.role === 'assistant' ? this.complete(Array.isArray(d.content) ? d.content : []) : [];
      default:
        return [];
    }
  }

  /** Completes the open message and reasoning (at a tool call, or the run's end). */
  close(): EngineEvent[] {
    return [...this.closeReasoning(), ...this.closeMessage()];
  }

  /**
   * A complete assistant message: what streamed of it is completed; its thinking and text that
   * did not stream are recorded whole, in the message's order.
   */
  private complete(blocks: any[]): EngineEvent[] {
    // Thinking comes before text in a message: completed streams and whole blocks keep that order.
    const thinking: EngineEvent[] = this.closeReasoning();
    const text: EngineEvent[] = this.closeMessage();
    const [streamedThinking, streamedText] = [this.streamedThinking, this.streamedText];
    this.streamedThinking = this.streamedText = false;
    for (const b of blocks) {
      if (b?.type === 'thinking' && !streamedThinking) {
        const redacted = b.redacted === true;
        const said = typeof b.thinking === 'string' ? b.thinking : '';
        thinking.push(
          ...new TextStream('reasoning').final(said, { signature: typeof b.thinkingSignature === 'string' ? b.thinkingSignature : null, redacted }),
        );
      } else if (b?.type === 'text' && !streamedText && typeof b.text === 'string' && b.text.trim()) {
        this.messages.push(b.text);
        text.push(...new TextStream('message').final(b.text));
      }
    }
    return [...thinking, ...text];
  }

  private assistant(d: Record<string, any>): EngineEvent[] {
    const out = this.closeReasoning();
    this.streamedText = true;
    const itemId = String(d.itemId ?? '');
    if (this.message && this.message.itemId !== itemId) out.push(...this.closeMessage());
    if (!this.message) this.message = { itemId, stream: new TextStream('message'), text: '' };
    if (typeof d.text === 'string') this.message.text = d.text;
    // A replacement (OpenClaw rewrote the text) has no delta to add: the complete text says it.
    if (d.replace !== true && typeof d.delta === 'string') out.push(...this.message.stream.chunk(d.delta));
    return out;
  }

  private tool(d: Record<string, any>): EngineEvent[] {
    const id = String(d.toolCallId ?? '');
    const name = String(d.name ?? '');
    if (!id) return [];
    this.sawTools = true;
    const out = this.close();
    if (d.phase === 'start') {
      const parent = typeof d.parentToolCallId === 'string' ? this.wrappers.get(d.parentToolCallId) : undefined;
      if (parent) parent.ran = true;
      if (WRAPPERS.has(name)) {
        this.wrappers.set(id, { name, args: d.args, ran: false });
        return out;
      }
      out.push(...this.tools.use(id, openclawToolName(name), d.args));
      return out;
    }
    if (d.phase === 'result') {
      const wrapper = this.wrappers.get(id);
      if (wrapper) {
        this.wrappers.delete(id);
        if (wrapper.ran) return out;
        out.push(...this.tools.use(id, wrapper.name, wrapper.args));
      }
      const { status, result } = openclawToolResult(name, d);
      out.push(...this.tools.result(id, status, result, openclawToolName(name)));
    }
    return out;
  }

  private closeMessage(): EngineEvent[] {
    const m = this.message;
    this.message = null;
    if (!m) return [];
    const text = m.text || m.stream.text;
    if (text) this.messages.push(text);
    return m.stream.final(text);
  }

  private closeReasoning(): EngineEvent[] {
    const r = this.reasoning;
    this.reasoning = null;
    return r ? r.stream.final(r.text || r.stream.text) : [];
  }
}
