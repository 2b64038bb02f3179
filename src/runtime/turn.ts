// One turn of a session: gathers what the engine needs (model, prompt, instructions, sandbox,
// tools, conversation) and runs it. hermes runs here; CLI engines (codex, …) run in the sandbox
// (cli-turn.ts). Tool calls a previous turn left waiting for a confirmation are settled first.
import { prisma } from '../db/client.js';
import { commitEvents } from '../events/store.js';
import type { EventFields, NewEvent, SessionEventType } from '../events/types.js';
import { buildConversation } from '../engines/hermes/history.js';
import { runCliEngineTurn } from './cli-turn.js';
import { runHermesTurn, type StopReason } from '../engines/hermes/loop.js';
import { sandboxDriver } from './sandboxes.js';
import { newTurnSandbox } from './turn-sandbox.js';
import { meteredModelStream } from '../gateway/metering.js';
import { modelProvider } from './models.js';
import { systemPromptFor } from '../engines/hermes/system-prompt.js';
import { syncResources } from '../resources/resources.js';
import { installedSkillsOf } from '../skills/materialize.js';
import { sessionToolbox } from '../tools/toolbox.js';
import { settlePendingCalls } from '../tools/confirmations.js';
import { memoryMountNotes } from '../memory/prompt.js';

export type { StopReason };

export async function runTurn(sessionId: string, turn: number, signal: AbortSignal): Promise<StopReason> {
  const emitIn =
    (turnNo: number) =>
    async <T extends SessionEventType>(type: T, fields: EventFields<T>) =>
      (await commitEvents(sessionId, [{ type, fields, turn: turnNo } as NewEvent]))[0]!.event;
  const emit = emitIn(turn);
  const session = await prisma.session.findUniqueOrThrow({ where: { id: sessionId } });
  const agent = session.agentId ? await prisma.agent.findUnique({ where: { id: session.agentId } }) : null;

  // Every other engine is a coding-agent CLI run inside the sandbox (kimi_code and dsh, which have
  // no installable CLI, end with an error saying what is missing).
  if (session.agentType !== 'hermes') return runCliEngineTurn({ session, agent, turn, signal, emit });

  // Independent reads together: one round trip's wait instead of two.
  const [prompt, placed, memoryStores] = await Promise.all([
    agent && session.promptVersion
      ? prisma.promptVersion.findUnique({ where: { agentId_version: { agentId: agent.id, version: session.promptVersion } } })
      : null,
    sandboxDriver().get(sessionId),
    memoryMountNotes(sessionId),
  ]);
  const sandbox = placed ?? (await newTurnSandbox(session, emit));
  try {
    await syncResources(sessionId, sandbox);
  } catch (err) {
    await emit('session.error', {
      error: {
        type: 'resource_unavailable',
        message: `a session resource could not be placed in the sandbox: ${(err as Error).message}`,
        retry_status: 'exhausted',
      },
    });
    return { type: 'retries_exhausted' };
  }
  const tools = await sessionToolbox({
    sessionId,
    universeId: session.universeId,
    agentId: session.agentId,
    turn,
    sandbox,
    onServerUnavailable: async (server, message) => {
      await emit('session.error', {
        error: {
          type: 'tool_server_unavailable',
          message: `the tool server ${server} could not be reached; its tools are missing from this turn: ${message}`,
          retry_status: 'retrying',
        },
      });
    },
  });
  const stopped = await settlePendingCalls({ sessionId, turn, tools, signal, emitIn });
  if (stopped) return stopped;
  // What provisioning installed (written before the session went idle): in the row read above.
  const skills = installedSkillsOf(session);
  const effort = session.reasoningEffort ?? agent?.reasoningEffort ?? null;
  const messages = await buildConversation(sessionId, turn);
  const provider = modelProvider(session.llm);

  return runHermesTurn({
    request: {
      provider,
      model: session.llm,
      system: systemPromptFor({
        agentPrompt: prompt?.content ?? null,
        agentInstructions: (agent?.instructions ?? []) as { name: string; content: string }[],
        sessionInstructions: session.instructions as { name: string; content: string }[],
        skills,
        customData: (agent?.customData ?? []) as { name: string; kind: string; description?: string | null; uri?: string | null }[],
        memoryStores,
      }),
      reasoningEffort: effort,
      maxTokens: 8192,
    },
    messages,
    tools,
    signal,
    emit,
    callModel: (req, sig) => meteredModelStream({ sessionId, universeId: session.universeId, turn }, req, sig),
    maxAttempts: Number(process.env.MODEL_MAX_ATTEMPTS || 3),
    retryDelayMs: (attempt) => Number(process.env.MODEL_RETRY_BASE_MS || 500) * 2 ** (attempt - 1),
  });
}
