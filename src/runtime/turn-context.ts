// One turn of a session, as the runner starts it: reads the session and its agent, builds the
// engine's TurnContext (typed emit into the event store, the session's sandbox) and runs the
// engine of the session's agentType (src/engines/registry.ts) through the one Engine seam.
import { performance } from 'node:perf_hooks';
import { prisma } from '../db/client.js';
import { batched } from '../db/batched.js';
import { AppError } from '../errors.js';
import { logger } from '../logger.js';
import { commitEvents } from '../events/store.js';
import type { StopReason } from '../events/types.js';
import type { EmitEvent, TurnContext } from '../engines/engine.js';
import { engineFor } from '../engines/registry.js';
import { sandboxDriver } from '../sandbox/current-driver.js';
import { newTurnSandbox } from './turn-sandbox.js';
import { asSessionTurn, inSpan } from '../telemetry/tracing.js';
import { firstFrameDuration, turnDuration, turnsFinished, turnsStarted } from '../telemetry/metrics.js';

export type { StopReason };

/**
 * Runs one turn, inside its span (`invoke_agent <engine>`: session, agent, engine, universe and
 * turn number, then the stop reason; never content) and counted in the turn metrics; the time to
 * the engine's first event is the first-frame latency.
 */
export async function runTurn(sessionId: string, turn: number, signal: AbortSignal): Promise<StopReason> {
  const session = await sessionRowOf(sessionId);
  if (!session) throw new AppError('not_found', `session ${sessionId} not found`);
  const engine = session.agentType;
  const started = performance.now();
  let firstFrame = false;
  const emitIn =
    (turnNo: number): EmitEvent =>
    async (event) => {
      if (!firstFrame) {
        firstFrame = true;
        firstFrameDuration.observe({ engine }, (performance.now() - started) / 1000);
      }
      return (await commitEvents(sessionId, [{ ...event, turn: turnNo }]))[0]!.event;
    };
  const emit = emitIn(turn);
  const attributes = {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.conversation.id': sessionId,
    'agent_service.session.id': sessionId,
    'agent_service.universe.id': session.universeId,
    'agent_service.engine': engine,
    'agent_service.turn': turn,
    ...(session.agentId ? { 'gen_ai.agent.id': session.agentId, 'agent_service.agent.id': session.agentId } : {}),
  };
  turnsStarted.inc({ engine });
  logger.debug({ sessionId, turn, engine }, 'turn started');
  let stopReason = 'error';
  try {
    return await inSpan(`invoke_agent ${engine}`, attributes, async (span) => {
      const stop = await asSessionTurn(sessionId, () => runEngine(session, turn, signal, emit, emitIn));
      stopReason = stop.type;
      span?.setAttribute('agent_service.stop_reason', stop.type);
      return stop;
    });
  } finally {
    turnsFinished.inc({ engine, stop_reason: stopReason });
    turnDuration.observe({ engine }, (performance.now() - started) / 1000);
    logger.debug({ sessionId, turn, engine, stopReason }, 'turn finished');
  }
}

type SessionRow = Awaited<ReturnType<typeof prisma.session.findUniqueOrThrow>>;
type AgentRow = Awaited<ReturnType<typeof prisma.agent.findUniqueOrThrow>>;

// Turns starting together read their sessions and their agents in one query each (src/db/batched.ts):
// under a burst of sends, one Prisma call per batch instead of one per turn (issue #29).
const sessionRowOf = batched(async (ids: string[]): Promise<(SessionRow | null)[]> => {
  const rows = await prisma.session.findMany({ where: { id: { in: ids } } });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id) ?? null);
});
const agentRowOf = batched(async (ids: string[]): Promise<(AgentRow | null)[]> => {
  const rows = await prisma.agent.findMany({ where: { id: { in: ids } } });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id) ?? null);
});

async function runEngine(session: SessionRow, turn: number, signal: AbortSignal, emit: EmitEvent, emitIn: (turn: number) => EmitEvent): Promise<StopReason> {
  const sessionId = session.id;
  const agent = session.agentId ? await agentRowOf(session.agentId) : null;
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
