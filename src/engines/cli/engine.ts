// The CLI Engine: one turn of a CLI engine (codex, claude_code, …; adapters by agentType in
// registry.ts). The engine's CLI at the agent's harnessVersion is installed into the shared
// cache if missing, started inside the session's sandbox in /workspace (the cache bound
// read-only at /opt/engines), given the turn's input, the system prompt and the model, and
// resumed from the CLI's own conversation id of the previous turn (kept on the session; its
// state lives in /workspace/.agent/<engine>, the session's storage, so a turn after a restart
// resumes too). Its output lines become session events as they come; an interrupt stops it
// within a second; a budget stopped by the gateway ends the turn `budget_reached`. The CLI
// never holds a provider key: only the session credential.
import { prisma } from '../../db/client.js';
import { currentHarness } from '../../catalog/catalog.js';
import type { CliTurn, EngineAdapter } from './core/adapter.js';
import { type Engine, type StopReason, type TurnContext, toolServerUnavailable, turnFailed } from '../engine.js';
import { warmSandboxes } from '../../runtime/warm-sandboxes.js';
import { engineAdapter } from './registry.js';
import { mcpRelayFor } from './core/mcp-relay.js';
import { rosterOf } from '../../runtime/threads.js';
import { sessionMcpTools } from '../../tools/mcp/servers.js';
import type { StoredMcpServer } from '../../tools/mcp/auth.js';
import { EngineInstallError, installEngine, type InstalledEngine } from './core/install.js';
import { runCliTurn } from './core/run-cli.js';
import { sandboxTurn } from './core/sandbox-turn.js';
import { uninstallableEngine } from './core/unavailable.js';
import { cliSystemPrompt, turnPrompt } from './core/turn-input.js';
import { EGRESS_ENDPOINT } from '../../egress/env.js';
import { modelProvider } from '../../gateway/models.js';
import { sandboxFilling } from '../../runtime/sandbox-filling.js';
import { installedSkills } from '../installed-skills.js';
import { memoryMountNotes } from '../memory-prompt.js';
import { engineHome } from './core/engine-home.js';
import type { Sandbox } from '../../sandbox/driver.js';
import { logger } from '../../logger.js';
import { sandboxClientText } from '../../sandbox/client-text.js';
import { config } from '../../config.js';

export const cliEngine: Engine = { runTurn: runCliEngineTurn };

/** Resolves with `p`, or with null once `signal` aborts (the work goes on in the background). */
function unlessAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T | null> {
  if (signal.aborted) return Promise.resolve(null);
  return new Promise<T | null>((resolve, reject) => {
    const onAbort = () => resolve(null);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

async function runCliEngineTurn(ctx: TurnContext): Promise<StopReason> {
  const { session, agent, signal, emit } = ctx;
  const missing = uninstallableEngine(session.agentType);
  if (missing) return turnFailed(emit, missing.type, missing.message);
  const adapter = engineAdapter(session.agentType);
  if (!adapter)
    return turnFailed(
      emit,
      'engine_unavailable',
      `this service has no runner for the ${session.agentType} engine's CLI; choose another agentType for this agent (hermes runs everywhere)`,
    );

  const version = agent?.harnessVersion ?? currentHarness(session.agentType);
  const installing = installEngine(adapter.cli, version);
  installing.catch(() => undefined); // awaited below; a failure must not go unhandled meanwhile
  const sandbox = await ctx.sandbox();
  if (!sandbox.spawn) return turnFailed(emit, 'engine_unavailable', `the ${ctx.sandboxDriver} sandbox driver cannot start CLI engines`);
  try {
    await sandboxFilling().syncResources(session.id, sandbox);
  } catch (err) {
    return turnFailed(
      emit,
      'resource_unavailable',
      `a session resource could not be placed in the sandbox: ${sandboxClientText((err as Error).message, config().dataDir)}`,
    );
  }

  let engine: InstalledEngine | null;
  try {
    engine = await unlessAborted(installing, signal);
  } catch (err) {
    const detail = err instanceof EngineInstallError ? err.message : `installing ${adapter.cli.npm}@${version} failed: ${(err as Error).message}`;
    logger.warn({ err, sessionId: session.id, engine: session.agentType, version }, 'engine CLI install failed');
    return turnFailed(
      emit,
      'engine_install_failed',
      `the ${session.agentType} engine could not be installed (${adapter.cli.npm}@${version}, the agent's harnessVersion): ${detail}`,
    );
  }
  if (!engine) return { type: 'end_turn' }; // interrupted while the CLI was being installed

  return runInstalled({ ...ctx, adapter, engine, sandbox, version });
}

async function runInstalled(
  ctx: Omit<TurnContext, 'sandbox'> & { adapter: EngineAdapter; engine: InstalledEngine; sandbox: Sandbox; version: string },
): Promise<StopReason> {
  const { session, agent, turn, signal, emit, adapter, engine, sandbox, version } = ctx;
  const prompt =
    agent && session.promptVersion
      ? await prisma.promptVersion.findUnique({ where: { agentId_version: { agentId: agent.id, version: session.promptVersion } } })
      : null;
  const home = engineHome(session.agentType);
  const endpoint = sandbox.egressEndpoint ?? EGRESS_ENDPOINT;
  const gatewayBaseUrl = modelProvider(session.llm) === 'anthropic' ? `${endpoint}/gateway/anthropic` : `${endpoint}/gateway/openai/v1`;
  const mcpRelay = mcpRelayFor(agent, `${endpoint}/gateway`, rosterOf(session).length > 0);
  // Skills in the CLI's own skills folder are listed by the CLI itself; the prompt names only
  // others (a session provisioned before its engine had a folder keeps them in /workspace/.skills).
  const skillsDir = adapter.skillsDir(home);
  const promptSkills = (await installedSkills(session.id)).filter((s) => !skillsDir || !s.path.startsWith(`${skillsDir}/`));
  // The relay's remote tools are listed before the CLI starts, so its MCP client gets them from
  // the session's cache at once (a CLI may not wait for a slow listing before its first model
  // call); a server that cannot be listed is reported now, as hermes does.
  if (mcpRelay && agent && Array.isArray(agent.mcpServers) && agent.mcpServers.length) {
    await sessionMcpTools(session.id, agent.mcpServers as unknown as StoredMcpServer[], (server, message) => toolServerUnavailable(emit, server, message));
  }
  const cliTurn: CliTurn = {
    prompt: await turnPrompt(session.id, turn, sandbox),
    systemPrompt: cliSystemPrompt({
      agentPrompt: prompt?.content ?? null,
      agentInstructions: (agent?.instructions ?? []) as { name: string; content: string }[],
      sessionInstructions: session.instructions as { name: string; content: string }[],
      skills: promptSkills,
      customData: (agent?.customData ?? []) as { name: string; kind: string; description?: string | null; uri?: string | null }[],
      memoryStores: await memoryMountNotes(session.id),
    }),
    model: session.llm,
    reasoningEffort: session.reasoningEffort ?? agent?.reasoningEffort ?? null,
    resumeId: session.cliConversationId,
    // The agent's MCP servers and capabilities, through the service-side relay (no credential inside).
    mcpRelay,
  };
  const invocation = adapter.invocation(cliTurn, { binPath: engine.binPath, home, gatewayBaseUrl });

  const { spawn, mapper } = sandboxTurn({
    sessionId: session.id,
    agentType: session.agentType,
    sandbox,
    adapter,
    engine,
    home,
    cliTurn,
    // A server's turn has answered: a spare sandbox asked for is made now.
    onServerTurnEnded: () => warmSandboxes().turnEnded(session.agentType, version),
  });

  let result: Awaited<ReturnType<typeof runCliTurn>>;
  try {
    result = await runCliTurn({
      invocation,
      mapper,
      spawn,
      emit,
      signal,
    });
  } catch (err) {
    logger.warn({ err, sessionId: session.id, engine: session.agentType }, 'engine CLI could not run');
    return turnFailed(emit, 'engine_error', `the ${session.agentType} CLI could not be started in the sandbox: ${(err as Error).message}`);
  }
  if (result.resumeId && result.resumeId !== session.cliConversationId) {
    await prisma.session.update({ where: { id: session.id }, data: { cliConversationId: result.resumeId } });
  }
  return result.stop;
}
