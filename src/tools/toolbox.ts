// A session's tools for one turn, in one place for the engine: the sandbox tools (bash and the
// file tools), the agent's remote MCP tools (listed once per provision) and the platform
// capabilities the agent is granted, read again at every step and every call so a PATCH that
// revokes one takes effect on the next call without a restart.
import { prisma } from '../db/client.js';
import type { Sandbox } from '../sandbox/driver.js';
import type { ToolSpec } from '../gateway/types.js';
import { SANDBOX_TOOLS, runSandboxTool } from './sandbox-tools.js';
import type { StoredMcpServer } from './mcp/auth.js';
import { callMcpTool, mcpToolNamed, sessionMcpTools } from './mcp/servers.js';
import { capabilitySpecs, runCapability, capabilityForTool } from './capabilities/run.js';
import { decideTool, parseToolPolicy } from './policy.js';
import type { Toolbox, ToolCall, ToolOutcome } from './types.js';
import { captureContent, inSpan } from '../telemetry/tracing.js';
import { toolCalls, toolDuration } from '../telemetry/metrics.js';
import { performance } from 'node:perf_hooks';

type ToolKind = 'sandbox' | 'mcp' | 'capability' | 'unknown';

/** Content attributes are capped: an operator asking for content wants a look, not the payload. */
const clip = (value: unknown) => JSON.stringify(value).slice(0, 4096);

/**
 * One tool call inside its span (`execute_tool <name>`: kind, status, the MCP server or the
 * capability; its input and result only with OTEL_CAPTURE_CONTENT=1) and counted by kind and status.
 */
async function observedCall(call: ToolCall, kind: ToolKind, origin: Record<string, string>, run: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
  const started = performance.now();
  let status = 'error';
  try {
    return await inSpan(
      `execute_tool ${call.name}`,
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': call.name, 'gen_ai.tool.call.id': call.id, 'agent_service.tool.kind': kind, ...origin },
      async (span) => {
        if (span && captureContent()) span.setAttribute('gen_ai.tool.call.arguments', clip(call.input));
        const outcome = await run();
        status = outcome.status;
        span?.setAttribute('agent_service.tool.status', outcome.status);
        if (span && captureContent()) span.setAttribute('gen_ai.tool.call.result', clip(outcome.result));
        return outcome;
      },
    );
  } finally {
    toolCalls.inc({ kind, status });
    toolDuration.observe({ kind }, (performance.now() - started) / 1000);
  }
}

const SANDBOX_SPECS: ToolSpec[] = SANDBOX_TOOLS.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
const SANDBOX_NAMES = new Set(SANDBOX_SPECS.map((t) => t.name));

export interface ToolboxScope {
  sessionId: string;
  universeId: string;
  agentId: string | null;
  turn: number;
  sandbox: Sandbox;
  /** Reports a remote tool server that could not be reached (the turn goes on without it). */
  onServerUnavailable(server: string, message: string): Promise<void>;
  /**
   * The agent's row as the turn just read it: its MCP servers, and the capabilities and tool
   * policy of the turn's first step (later steps and calls read them again), without a query.
   */
  agent?: { mcpServers: unknown; capabilities: string[]; toolPolicy: unknown } | null;
}

/** What the agent says right now about capabilities and tool policy (one query). */
async function agentNow(agentId: string | null) {
  if (!agentId) return { capabilities: [] as string[], toolPolicy: parseToolPolicy(null) };
  const a = await prisma.agent.findUnique({ where: { id: agentId }, select: { capabilities: true, toolPolicy: true } });
  return { capabilities: a?.capabilities ?? [], toolPolicy: parseToolPolicy(a?.toolPolicy ?? null) };
}

/**
 * The session's tools that run in the service, not in the sandbox: the agent's remote MCP tools
 * and its granted capabilities. hermes gets them beside the sandbox tools (sessionToolbox); CLI
 * engines reach the same ones through the MCP relay (src/tools/mcp/relay.ts), so a call runs
 * the same way whichever engine makes it.
 */
export async function serviceToolbox(scope: ToolboxScope): Promise<Toolbox> {
  const agent =
    scope.agent !== undefined
      ? scope.agent
      : scope.agentId
        ? await prisma.agent.findUnique({ where: { id: scope.agentId }, select: { mcpServers: true } })
        : null;
  // The turn's own read serves the first look at capabilities and policy; every later one reads again.
  let fresh = scope.agent ? { capabilities: scope.agent.capabilities, toolPolicy: parseToolPolicy(scope.agent.toolPolicy) } : null;
  const agentNowOnce = () => {
    const now = fresh;
    fresh = null;
    return now ? Promise.resolve(now) : agentNow(scope.agentId);
  };
  const servers = (Array.isArray(agent?.mcpServers) ? agent.mcpServers : []) as unknown as StoredMcpServer[];
  const mcpTools = servers.length ? await sessionMcpTools(scope.sessionId, servers, scope.onServerUnavailable) : [];
  const mcpSpecs = mcpTools.map((t) => t.spec);

  return {
    async specs() {
      const { capabilities } = await agentNowOnce();
      return [...mcpSpecs, ...capabilitySpecs(capabilities)];
    },

    async decide(name) {
      const { toolPolicy } = await agentNowOnce();
      const mcp = mcpToolNamed(scope.sessionId, name);
      const capability = capabilityForTool(name);
      return decideTool(toolPolicy, { name, server: mcp?.server ?? null, capability: capability?.id ?? null });
    },

    async run(call: ToolCall, signal: AbortSignal): Promise<ToolOutcome> {
      const mcp = mcpToolNamed(scope.sessionId, call.name);
      if (mcp) return observedCall(call, 'mcp', { 'agent_service.mcp.server': mcp.server }, () => callMcpTool(scope, mcp, call.input, signal));
      const capability = capabilityForTool(call.name);
      if (capability) {
        return observedCall(call, 'capability', { 'agent_service.capability': capability.id }, async () => {
          const { capabilities } = await agentNow(scope.agentId);
          return runCapability(capability, call.input, { ...scope, granted: capabilities, signal });
        });
      }
      return observedCall(call, 'unknown', {}, async () => ({ status: 'error', result: { error: `unknown tool ${call.name}` } }));
    },
  };
}

export async function sessionToolbox(scope: ToolboxScope): Promise<Toolbox> {
  const service = await serviceToolbox(scope);
  return {
    specs: async () => [...SANDBOX_SPECS, ...(await service.specs())],
    decide: (name) => service.decide(name),
    run(call: ToolCall, signal: AbortSignal): Promise<ToolOutcome> {
      if (SANDBOX_NAMES.has(call.name)) return observedCall(call, 'sandbox', {}, () => runSandboxTool(scope.sandbox, call.name, call.input, { signal }));
      return service.run(call, signal);
    },
  };
}
