// One turn of a session, as the runner starts it: reads the session and its agent, builds the
// engine's TurnContext (typed emit into the event store, the session's sandbox) and runs the
// engine of the session's agentType (src/engines/registry.ts) through the one Engine seam.
import { prisma } from '../db/client.js';
import { commitEvents } from '../events/store.js';
import type { StopReason } from '../events/types.js';
import type { EmitEvent, TurnContext } from '../engines/engine.js';
import { engineFor } from '../engines/registry.js';
import { sandboxDriver } from '../sandbox/current-driver.js';
import { newTurnSandbox } from './turn-sandbox.js';

export type { StopReason };

export async function runTurn(sessionId: string, turn: number, signal: AbortSignal): Promise<StopReason> {
  const emitIn =
    (turnNo: number): EmitEvent =>
    async (event) =>
      (await commitEvents(sessionId, [{ ...event, turn: turnNo }]))[0]!.event;
  const emit = emitIn(turn);
  const session = await prisma.session.findUniqueOrThrow({ where: { id: sessionId } });
  const agent = session.agentId ? await prisma.agent.findUnique({ where: { id: session.agentId } }) : null;
  const ctx: TurnContext = {
    session,
    agent,
    turn,
    signal,
    emit,
    emitIn,
    // A thread (multiagent) works in its session's sandbox.
    sandbox: async () =>
      (await sandboxDriver().get(session.parentSessionId ?? sessionId)) ??
      (await newTurnSandbox({ ...session, id: session.parentSessionId ?? sessionId }, (type, fields) => emit({ type, fields }))),
    get sandboxDriver() {
      return sandboxDriver().name;
    },
  };
  return engineFor(session.agentType).runTurn(ctx);
}
