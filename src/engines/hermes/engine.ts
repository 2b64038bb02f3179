// The hermes Engine: gathers what the loop needs for one turn (model, prompt, instructions,
// skills, the session's sandbox and tools, the conversation so far) and runs the loop (loop.ts).
// Tool calls a previous turn left waiting for a confirmation are settled first.
import { settings } from '../../config.js';
import { prisma } from '../../db/client.js';
import { meteredModelStream } from '../../gateway/metering.js';
import { modelProvider } from '../../gateway/models.js';
import { sandboxFilling } from '../../runtime/sandbox-filling.js';
import { installedSkillsOf } from '../installed-skills.js';
import { memoryMountNotes } from '../memory-prompt.js';
import { settlePendingCalls } from '../../tools/confirmations.js';
import { sessionToolbox } from '../../tools/toolbox.js';
import { withDelegation } from '../../runtime/delegation-tools.js';
import { type Engine, type StopReason, type TurnContext, toolServerUnavailable, turnFailed } from '../engine.js';
import { buildConversation } from './history.js';
import { runHermesTurn } from './loop.js';
import { systemPromptFor } from './system-prompt.js';

export const hermesEngine: Engine = { runTurn: runHermesEngineTurn };

async function runHermesEngineTurn(ctx: TurnContext): Promise<StopReason> {
  const { session, agent, turn, signal, emit, emitIn } = ctx;
  const sessionId = session.id;
  // Independent reads together: one round trip's wait instead of two.
  const [prompt, sandbox, memoryStores] = await Promise.all([
    agent && session.promptVersion
      ? prisma.promptVersion.findUnique({ where: { agentId_version: { agentId: agent.id, version: session.promptVersion } } })
      : null,
    ctx.sandbox(),
    memoryMountNotes(sessionId),
  ]);
  try {
    await sandboxFilling().syncResources(sessionId, sandbox);
  } catch (err) {
    return turnFailed(emit, 'resource_unavailable', `a session resource could not be placed in the sandbox: ${(err as Error).message}`);
  }
  // A coordinator (multiagent) also gets its delegation tools.
  const own = await sessionToolbox({
    sessionId,
    universeId: session.universeId,
    agentId: session.agentId,
    turn,
    sandbox,
    onServerUnavailable: (server, message) => toolServerUnavailable(emit, server, message),
  });
  const tools = withDelegation(session, own);
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
    maxAttempts: settings.modelMaxAttempts(),
    retryDelayMs: (attempt) => settings.modelRetryBaseMs() * 2 ** (attempt - 1),
  });
}
