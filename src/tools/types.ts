// What an engine needs from a session's tools: the specs to offer the model at each step, and
// one way to run a call. Sandbox tools, remote MCP tools and platform capabilities all fit it.
import type { ToolSpec } from '../gateway/types.js';
import type { MessagePart } from '../events/parts.js';

export interface ToolOutcome {
  status: 'ok' | 'error';
  /** JSON object shown to the model and stored in the tool_result part. */
  result: Record<string, unknown>;
  /** Files the call produced, shown to clients as message parts after the result. */
  attachments?: MessagePart[];
}

export interface ToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** How a tool call is decided before it runs. */
export type ToolDecision = 'run' | 'ask';

export interface Toolbox {
  /** The tools offered to the model for its next step. */
  specs(): Promise<ToolSpec[]>;
  /** Whether a call runs at once or waits for a person's confirmation (the agent's tool policy). */
  decide(name: string): Promise<ToolDecision>;
  /** Runs one call; failures are error outcomes the model can read, never exceptions. */
  run(call: ToolCall, signal: AbortSignal): Promise<ToolOutcome>;
}
