// What a CLI engine is told about the MCP relay (src/tools/mcp/relay.ts): the session's
// service-side tools (its agent's remote MCP servers and granted capabilities) as one streamable
// HTTP MCP server at `<gateway>/mcp`, authenticated by the session credential the CLI already
// holds in AGENT_SERVICE_TOKEN. The relay carries the remote servers' own credentials itself, so
// nothing secret is ever written into the sandbox.
import { settings } from '../../../config.js';
import { EGRESS_ENDPOINT } from '../../../egress/env.js';

/** The name the relay has in each CLI's MCP configuration (codex shows its tools as `mcp__agent_service__<tool>`). */
export const MCP_RELAY_SERVER = 'agent_service';

export interface McpRelay {
  /** Streamable HTTP endpoint of the relay, as reachable from where the CLI runs. */
  url: string;
  /** The variable holding the session credential, sent as `Authorization: Bearer <value>`. */
  tokenEnv: 'AGENT_SERVICE_TOKEN';
  /** How long the CLI should wait for the tool list: the relay may first connect the remote servers. */
  startupTimeoutSec: number;
  /** How long the CLI should wait for one call: the longest a relayed tool may take, plus a margin. */
  toolTimeoutSec: number;
}

/** The longest a relayed call may take: a remote tool call, or a capability's video task. */
export function relayToolTimeoutSec(): number {
  const mcpCall = settings.mcpCallTimeoutMs();
  const capabilityTask = settings.capabilityTaskTimeoutMs();
  return Math.ceil(Math.max(mcpCall, capabilityTask) / 1000) + 60;
}

/**
 * The relay for a turn of this agent's session, or null when the agent has no service-side tool
 * (no MCP server, no capability): then the CLI gets no MCP configuration at all.
 * `gatewayRoot` is the gateway as the CLI reaches it (inside a sandbox: the egress endpoint).
 */
export function mcpRelayFor(
  agent: { mcpServers: unknown; capabilities: readonly string[] } | null,
  gatewayRoot = `${EGRESS_ENDPOINT}/gateway`,
  /** Multiagent: the session is a coordinator's (its delegation tools come through the relay). */
  coordinator = false,
): McpRelay | null {
  if (!agent) return null;
  const servers = Array.isArray(agent.mcpServers) ? agent.mcpServers.length : 0;
  if (!servers && !agent.capabilities.length && !coordinator) return null;
  return {
    url: `${gatewayRoot.replace(/\/+$/, '')}/mcp`,
    tokenEnv: 'AGENT_SERVICE_TOKEN',
    startupTimeoutSec: Math.ceil(settings.mcpConnectTimeoutMs() / 1000) + 15,
    // A coordinator's wait_threads lasts as long as its threads' turns.
    toolTimeoutSec: coordinator ? Math.max(relayToolTimeoutSec(), 3600) : relayToolTimeoutSec(),
  };
}

/**
 * The tool name events carry for a CLI's MCP call: a relayed tool keeps the name hermes gives
 * it (`mcp__docs__search`, `exa_search`), so tool policies and history read the same whatever
 * the engine; a tool of another MCP server is `mcp__<server>__<tool>`.
 */
export function cliMcpToolName(server: string, tool: string): string {
  return server === MCP_RELAY_SERVER ? tool : `mcp__${server}__${tool}`;
}
