// codex (`@openai/codex`, a native binary inside the npm package): `codex exec --json` runs one
// turn and prints JSON lines (thread.started, item.started/completed for agent messages,
// reasoning, command executions, file changes, MCP and web-search calls, turn.completed or
// turn.failed); `codex exec resume <thread_id>` continues a conversation. It talks to the
// gateway's OpenAI Responses endpoint as a custom model provider whose key is
// AGENT_SERVICE_TOKEN. Codex's own sandbox is off: the session's sandbox is the boundary.
import { effortFor } from '../../../catalog/reasoning-effort.js';
import { newId } from '../../../ids.js';
import type { CliOutputMapper, EngineAdapter, EngineEvent } from '../core/adapter.js';
import { jsonLinesMapper } from '../core/json-lines-mapper.js';
import { cliMcpToolName, MCP_RELAY_SERVER, type McpRelay } from '../core/mcp-relay.js';

/** The platform's codex version (an agent's harnessVersion pins another). */
export const CODEX_VERSION = '0.169.0';

/** Our reasoningEffort scale onto codex's `model_reasoning_effort` (the table in src/catalog/reasoning-effort.ts). */
export const codexReasoningEffort = (effort: string | null): string | null => effortFor('codex', effort);

/** A TOML basic string (JSON's escapes are TOML's). */
const toml = (s: string) => JSON.stringify(s);

export function codexConfig(gatewayBaseUrl: string, relay: McpRelay | null = null): string {
  return [
    'model_provider = "agent_service"',
    '',
    '[model_providers.agent_service]',
    'name = "Agent Service gateway"',
    `base_url = ${toml(gatewayBaseUrl)}`,
    'env_key = "AGENT_SERVICE_TOKEN"',
    'wire_api = "responses"',
    '',
    ...(relay ? codexRelayConfig(relay) : []),
  ].join('\n');
}

/**
 * The MCP relay as a streamable HTTP MCP server of codex (keys checked against codex 0.169.0
 * with --strict-config): the bearer token is read from the variable, never written here; the
 * service enforces the agent's tool policy, so codex approves the calls itself.
 */
function codexRelayConfig(relay: McpRelay): string[] {
  return [
    `[mcp_servers.${MCP_RELAY_SERVER}]`,
    `url = ${toml(relay.url)}`,
    `bearer_token_env_var = ${toml(relay.tokenEnv)}`,
    `startup_timeout_sec = ${relay.startupTimeoutSec}`,
    `tool_timeout_sec = ${relay.toolTimeoutSec}`,
    'default_tools_approval_mode = "approve"',
    '',
  ];
}

export const codexAdapter: EngineAdapter = {
  agentType: 'codex',
  cli: { npm: '@openai/codex', version: CODEX_VERSION, bin: 'codex', nodeMajor: null },
  invocation(turn, { binPath, home, gatewayBaseUrl }) {
    const effort = codexReasoningEffort(turn.reasoningEffort);
    const codexHome = `${home}/.codex`;
    return {
      argv: [
        binPath,
        'exec',
        ...(turn.resumeId ? ['resume', turn.resumeId] : []),
        '--json',
        '--skip-git-repo-check',
        '--dangerously-bypass-approvals-and-sandbox',
        '-m',
        turn.model,
        ...(effort ? ['-c', `model_reasoning_effort=${toml(effort)}`] : []),
      ],
      env: { CODEX_HOME: codexHome },
      stdin: turn.prompt, // codex reads the prompt from stdin when none is on the command line
      files: {
        [`${codexHome}/config.toml`]: codexConfig(gatewayBaseUrl, turn.mcpRelay ?? null),
        // Codex's global instructions file: the agent's prompt, instructions and skills.
        [`${codexHome}/AGENTS.md`]: turn.systemPrompt,
      },
    };
  },
  mapper: () => codexMapper(),
  // User skills of codex: $CODEX_HOME/skills (checked with 0.169.0: listed in its `## Skills` section).
  skillsDir: (home) => `${home}/.codex/skills`,
};

type Item = Record<string, any>;

/** The tool a codex item stands for, and its arguments; null for items that are not tool calls. */
function toolOf(item: Item): { name: string; args: Record<string, unknown> } | null {
  switch (item.type) {
    case 'command_execution':
      return { name: 'bash', args: { command: String(item.command ?? '') } };
    case 'file_change':
      return { name: 'apply_patch', args: { changes: Array.isArray(item.changes) ? item.changes : [] } };
    case 'mcp_tool_call':
      return { name: cliMcpToolName(String(item.server), String(item.tool)), args: item.arguments && typeof item.arguments === 'object' ? item.arguments : {} };
    case 'web_search':
      return { name: 'web_search', args: { query: String(item.query ?? '') } };
    default:
      return null;
  }
}

/**
 * An MCP call's result ({content, structured_content}) as hermes records one; a tool error
 * (codex: status failed, the result kept) is an error whose `error` is its text.
 */
function mcpResultOf(item: Item): { status: 'ok' | 'error'; result: Record<string, unknown> } {
  const raw: Record<string, unknown> =
    item.result && typeof item.result === 'object' && !Array.isArray(item.result) ? item.result : { content: item.result ?? null };
  const result: Record<string, unknown> = { content: raw.content ?? null };
  if (raw.structured_content != null) result.structured_content = raw.structured_content;
  if (item.status !== 'failed') return { status: 'ok', result };
  const text = Array.isArray(raw.content)
    ? raw.content
        .filter((c: Item) => c?.type === 'text')
        .map((c: Item) => String(c.text))
        .join('\n')
    : '';
  return { status: 'error', result: { ...result, error: text || `tool ${String(item.tool)} failed` } };
}

function resultOf(item: Item): { status: 'ok' | 'error'; result: Record<string, unknown> } {
  switch (item.type) {
    case 'command_execution':
      return { status: item.exit_code === 0 ? 'ok' : 'error', result: { exit_code: item.exit_code ?? null, output: String(item.aggregated_output ?? '') } };
    case 'file_change':
      return { status: item.status === 'failed' ? 'error' : 'ok', result: { changes: item.changes ?? [] } };
    case 'mcp_tool_call':
      if (item.error) return { status: 'error', result: { error: item.error } };
      return mcpResultOf(item);
    default:
      return { status: item.status === 'failed' ? 'error' : 'ok', result: {} };
  }
}

export function codexMapper(): CliOutputMapper {
  let resumeId: string | null = null;
  let toolIndex = 0;
  const toolIndexOf = new Map<string, number>(); // codex item id → our call index
  let outcome: 'completed' | 'failed' | null = null;
  let failure: string | null = null;

  const toolUse = (item: Item, tool: { name: string; args: Record<string, unknown> }): EngineEvent => {
    const index = toolIndex++;
    toolIndexOf.set(item.id, index);
    return {
      type: 'agent.tool_use',
      fields: { part: { type: 'tool_call', index, call_id: String(item.id), tool_name: tool.name, args: tool.args, args_partial: null } },
    };
  };

  return jsonLinesMapper('codex', {
    resumeId: () => resumeId,
    event(ev) {
      switch (ev.type) {
        case 'thread.started':
          if (typeof ev.thread_id === 'string') resumeId = ev.thread_id;
          return [];
        case 'item.started': {
          const tool = ev.item ? toolOf(ev.item) : null;
          return tool && !toolIndexOf.has(ev.item.id) ? [toolUse(ev.item, tool)] : [];
        }
        case 'item.completed': {
          const item: Item = ev.item ?? {};
          if (item.type === 'agent_message' && item.text) {
            const messageId = newId('msg');
            return [
              {
                type: 'agent.message',
                fields: {
                  messageId,
                  final: true,
                  text: item.text,
                  parts: [{ type: 'text', index: 0, text: item.text, stream_id: messageId, stream_index: null }],
                },
              },
            ];
          }
          if (item.type === 'reasoning' && item.text) {
            return [
              {
                type: 'agent.reasoning',
                fields: {
                  final: true,
                  signature: null,
                  part: { type: 'reasoning', index: 0, text: item.text, redacted: false, stream_id: newId('msg'), stream_index: null },
                },
              },
            ];
          }
          const tool = toolOf(item);
          if (!tool) return []; // codex's own notices (item type `error`: warnings), todo lists
          const out: EngineEvent[] = toolIndexOf.has(item.id) ? [] : [toolUse(item, tool)];
          const { status, result } = resultOf(item);
          out.push({
            type: 'agent.tool_result',
            fields: { part: { type: 'tool_result', index: toolIndexOf.get(item.id)!, call_id: String(item.id), tool_name: tool.name, status, result } },
          });
          return out;
        }
        case 'turn.completed':
          outcome = 'completed';
          return [];
        case 'turn.failed':
          outcome = 'failed';
          failure = String(ev.error?.message ?? 'the turn failed');
          return [];
        case 'error':
          // Codex retries by itself and says so ("Reconnecting... 2/5"); the final word is turn.failed.
          return [
            {
              type: 'session.error',
              fields: { error: { type: 'engine_error', message: `codex: ${String(ev.message ?? 'error')}`, retry_status: 'retrying' } },
            },
          ];
        default:
          return [];
      }
    },
    outcome: () => ({ finished: outcome === 'completed', failure }),
  });
}
