// The hermes Engine: gathers what the loop needs for one turn (model, prompt, instructions,
// skills, the session's sandbox and tools, the conversation so far) and runs the loop (loop.ts).
// Tool calls a previous turn left waiting for a confirmation are settled first.
import { settings } from '../../config.js';
import { prisma } from '../../db/client.js';
import { meteredModelStream, type MeterRow } from '../../gateway/metering.js';
import { modelProvider } from '../../gateway/models.js';
import { sandboxFilling } from '../../runtime/sandbox-filling.js';
import { installedSkillsOf } from '../installed-skills.js';
import { memoryMountNotes } from '../memory-prompt.js';
import { settlePendingCalls } from '../../tools/confirmations.js';
import { sessionToolbox } from '../../tools/toolbox.js';
import type { Toolbox } from '../../tools/types.js';
import { withDelegation } from '../../runtime/delegation-tools.js';
import { type Engine, type StopReason, type TurnContext, toolServerUnavailable, turnFailed } from '../engine.js';
import { conversationOf, turnStartRows } from './history.js';
import { runHermesTurn } from './loop.js';
import { fitContext, isContextRefusal, type CompactionContext } from './compaction.js';
import { stoppedForBudget, BUDGET_STOP } from '../../gateway/budget-stop.js';
import { ProviderError } from '../../gateway/types.js';
import { systemPromptFor } from './system-prompt.js';
import { sandboxClientText } from '../../sandbox/client-text.js';
import { config } from '../../config.js';

export const hermesEngine: Engine = { runTurn: runHermesEngineTurn };

const TURN_INPUTS = ['user.message', 'system.message', 'user.tool_confirmation', 'user.compact'];

async function runHermesEngineTurn(ctx: TurnContext): Promise<StopReason> {
  const { session, agent, turn, signal, emit, emitIn } = ctx;
  const sessionId = session.id;
  // The conversation so far, this turn's inputs and how the last turn stopped: read while the
  // rest is gathered (issue #29: turn starts waited on one round trip after another). Awaited
  // below; an early return leaves it unread.
  const startRead = turnStartRows(sessionId, turn, TURN_INPUTS);
  startRead.catch(() => undefined);
  // Independent reads together: one round trip's wait instead of two.
  const [prompt, sandbox] = await Promise.all([
    agent && session.promptVersion
      ? prisma.promptVersion.findUnique({ where: { agentId_version: { agentId: agent.id, version: session.promptVersion } } })
      : null,
    ctx.sandbox(),
  ]);
  let memoryStores: Awaited<ReturnType<typeof memoryMountNotes>>;
  try {
    memoryStores = await memoryMountNotes(sessionId, await sandboxFilling().syncResources(sessionId, sandbox));
  } catch (err) {
    return turnFailed(
      emit,
      'resource_unavailable',
      `a session resource could not be placed in the sandbox: ${sandboxClientText((err as Error).message, config().dataDir)}`,
    );
  }
  // A coordinator (multiagent) also gets its delegation tools.
  const own = await sessionToolbox({
    sessionId,
    universeId: session.universeId,
    agentId: session.agentId,
    turn,
    sandbox,
    onServerUnavailable: (server, message) => toolServerUnavailable(emit, server, message),
    agent: agent && agent.id === session.agentId ? agent : null, // read at the turn's start: no second read
  });
  const tools = withDelegation(session, own);
  // The turn's first model call takes the session's spend from the row the turn started with (no
  // read of its own), unless a settled call ran first (a capability may have spent meanwhile).
  let startRow: MeterRow | undefined = session;
  const settling: Toolbox = {
    specs: () => tools.specs(),
    decide: (name) => tools.decide(name),
    run: (call, sig) => ((startRow = undefined), tools.run(call, sig)),
  };
  let start = await startRead;
  // Calls can wait for a confirmation only after a turn that paused for one: settled first, then
  // the conversation read again with what settling stored.
  if (start.lastStop === 'requires_action') {
    const stopped = await settlePendingCalls({ sessionId, turn, tools: settling, signal, emitIn });
    if (stopped) return stopped;
    start = await turnStartRows(sessionId, turn, TURN_INPUTS);
  }
  // What provisioning installed (written before the session went idle): in the row read above.
  const skills = installedSkillsOf(session);
  const effort = session.reasoningEffort ?? agent?.reasoningEffort ?? null;
  let messages = await conversationOf(start.rows);
  const provider = modelProvider(session.llm);

  const request = {
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
    // One cache key per session: its calls share a prefix (docs/engines.md "Prompt caching").
    cacheKey: settings.promptCaching() ? sessionId : null,
  };
  const callModel = (req: Parameters<typeof meteredModelStream>[1], sig: AbortSignal) => {
    const row = startRow;
    startRow = undefined;
    return meteredModelStream({ sessionId, universeId: session.universeId, turn, startRow: row }, req, sig);
  };
  const compaction: CompactionContext = { sessionId, turn, request, emit, signal, callModel };

  // user.compact (a turn of its own, or with other inputs): summarise everything before this turn now.
  const inputs = start.inputs;
  if (inputs.includes('user.compact')) {
    try {
      messages = await fitContext(compaction, messages, await tools.specs(), 'user');
    } catch (err) {
      if (stoppedForBudget(err)) return BUDGET_STOP;
      if (signal.aborted) return { type: 'end_turn' };
      return turnFailed(emit, err instanceof ProviderError ? err.code : 'engine_error', `compaction failed: ${(err as Error).message}`);
    }
    if (signal.aborted || inputs.every((t) => t === 'user.compact')) return { type: 'end_turn' };
  }

  return runHermesTurn({
    request,
    messages,
    tools,
    signal,
    emit,
    callModel,
    fitContext: (msgs, specs, trigger) => fitContext(compaction, msgs, specs, trigger),
    isContextRefusal,
    maxAttempts: settings.modelMaxAttempts(),
    retryDelayMs: (attempt) => settings.modelRetryBaseMs() * 2 ** (attempt - 1),
  });
}
