// The session events of a tool call, as every engine that runs tools in the service records
// them: the agent.tool_use of a call, and its agent.tool_result followed by the files it
// produced. Used by the hermes loop and by the settling of calls that waited for a confirmation.
import { newId } from '../ids.js';
import type { EngineEvent, SessionEvent } from '../events/types.js';
import type { ToolCall, ToolOutcome } from './types.js';

/** Stores one event of the turn and returns it as stored. */
export type EmitEvent = (event: EngineEvent) => Promise<SessionEvent>;

/** The tool_call part of a call, at its index in the model's step. */
export const toolCallPart = (index: number, call: ToolCall) => ({
  type: 'tool_call' as const,
  index,
  call_id: call.id,
  tool_name: call.name,
  args: call.input,
  args_partial: null,
});

/** The tool_result event of a call, then the files it produced as one agent.message of parts. */
export async function emitOutcome(emit: EmitEvent, index: number, call: ToolCall, outcome: ToolOutcome): Promise<void> {
  await emit({
    type: 'agent.tool_result',
    fields: { part: { type: 'tool_result', index, call_id: call.id, tool_name: call.name, status: outcome.status, result: outcome.result } },
  });
  if (outcome.attachments?.length) {
    await emit({ type: 'agent.message', fields: { messageId: newId('msg'), final: true, parts: outcome.attachments, text: '' } });
  }
}
