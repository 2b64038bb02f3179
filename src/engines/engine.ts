// The one seam between the runtime and the engines: an Engine runs one turn of a session from a
// TurnContext and says how it ended. The runtime (src/runtime/turn-context.ts) builds the
// context (the session and agent rows, the typed emit into the event store, sandbox access);
// engines (hermes, the CLI engines; new engines, graders, threads alike) only implement runTurn.
import type { Agent, Session } from '../generated/prisma/client.js';
import type { StopReason } from '../events/types.js';
import type { Sandbox } from '../sandbox/driver.js';
import type { EmitEvent } from '../tools/tool-events.js';

export type { EmitEvent, StopReason };
export type { EngineEvent } from '../events/types.js';

export interface TurnContext {
  session: Session;
  agent: Agent | null;
  /** This turn's number (the inputs given to it carry it). */
  turn: number;
  /** Aborts when the turn is interrupted (or the process shuts down): end with `end_turn`. */
  signal: AbortSignal;
  /** Stores and announces one event of this turn; the stored event comes back. */
  emit: EmitEvent;
  /** The same into an earlier turn (the results of calls a paused turn left waiting). */
  emitIn(turn: number): EmitEvent;
  /** The session's sandbox: its own, or a new one (announced as progress) when the old one is gone. */
  sandbox(): Promise<Sandbox>;
  /** The sandbox driver's name (`local`, `kubernetes`), for messages. */
  readonly sandboxDriver: string;
}

export interface Engine {
  /** Runs one turn to its end; failures it can explain are session.error events, then a stop reason. */
  runTurn(ctx: TurnContext): Promise<StopReason>;
}

/** Reports a failure that ends the turn: one session.error (retry_status exhausted), stop `retries_exhausted`. */
export async function turnFailed(emit: EmitEvent, type: string, message: string): Promise<StopReason> {
  await emit({ type: 'session.error', fields: { error: { type, message, retry_status: 'exhausted' } } });
  return { type: 'retries_exhausted' };
}

/** Reports a remote tool server that could not be listed: the turn goes on without its tools. */
export async function toolServerUnavailable(emit: EmitEvent, server: string, message: string): Promise<void> {
  await emit({
    type: 'session.error',
    fields: {
      error: {
        type: 'tool_server_unavailable',
        message: `the tool server ${server} could not be reached; its tools are missing from this turn: ${message}`,
        retry_status: 'retrying',
      },
    },
  });
}
