// opencode (`opencode-ai`: a native binary from the `opencode-linux-x64` package, no Node of its
// own): `opencode run --format json` runs one turn on the prompt read from stdin and prints one
// JSON line per finished part (reasoning, text, tool_use with its input and output, step_finish
// with the reason, error); `--session <id>` continues a conversation. Its built-in `anthropic`
// and `openai` providers are pointed at the gateway in its config (XDG_CONFIG_HOME/opencode/
// opencode.json) with the key `{env:AGENT_SERVICE_TOKEN}` (opencode reads the variable; the value
// is never written). A fixed `--title` keeps it from spending a model call on a session title;
// `--pure` and the OPENCODE_DISABLE_* switches keep it from fetching plugins, model lists or
// language servers at start.
import type { CliOutputMapper, EngineAdapter, EngineEvent } from '../core/adapter.js';
import { jsonLinesMapper } from '../core/json-lines-mapper.js';
import { effortFor } from '../../../catalog/reasoning-effort.js';
import { gatewayUrls, providerOf, TextStream, ToolCalls, xhighScaleEffort } from '../core/cli-events.js';
import { cliMcpToolName, MCP_RELAY_SERVER, type McpRelay } from '../core/mcp-relay.js';
import { toolResult, type ToolKind } from '../core/tool-results.js';
import { opencodeServerTurn } from './server.js';

/** Renewed this often: a server's session credential (in its environment since it started) lasts 24 h. */
const SERVER_GENERATION_MS = 12 * 60 * 60 * 1000;

/** The platform's opencode version (an agent's harnessVersion pins another). */
export const OPENCODE_VERSION = '1.18.33';

/**
 * Our reasoningEffort onto opencode's `--variant` (its per-provider reasoning presets): OpenAI
 * models take the effort names (none … xhigh); Claude models have `high` and `max` thinking
 * budgets, and run without extended thinking below high. null keeps opencode's default (the
 * table: src/catalog/reasoning-effort.ts).
 */
export function opencodeVariant(model: string, effort: string | null): string | null {
  if (effort === null) return null;
  if (providerOf(model) === 'anthropic') return effortFor('opencode_claude', effort);
  return xhighScaleEffort(effort, 'none');
}

export function opencodeConfig(gatewayBaseUrl: string, instructionsFile: string, relay: McpRelay | null): string {
  const urls = gatewayUrls(gatewayBaseUrl);
  const key = '{env:AGENT_SERVICE_TOKEN}';
  return JSON.stringify(
    {
      $schema: 'https://opencode.ai/config.json',
      provider: {
        // The AI SDK's Anthropic base URL includes /v1.
        anthropic: { options: { baseURL: `${urls.anthropic}/v1`, apiKey: key } },
        openai: { options: { baseURL: urls.openai, apiKey: key } },
      },
      instructions: [instructionsFile],
      // No prompts: the session's sandbox is the boundary.
      permission: { edit: 'allow', bash: 'allow', webfetch: 'allow', external_directory: 'allow' },
      autoupdate: false,
      share: 'disabled',
      // `timeout` (ms) bounds both its tool listing (default 5 s: the relay may first connect the
      // remote servers) and each call (default 60 s: a relayed capability task may take minutes).
      ...(relay
        ? {
            mcp: {
              [MCP_RELAY_SERVER]: {
                type: 'remote',
                url: relay.url,
                headers: { Authorization: `Bearer {env:${relay.tokenEnv}}` },
                enabled: true,
                timeout: relay.toolTimeoutSec * 1000,
              },
            },
          }
        : {}),
    },
    null,
    2,
  );
}

export const opencodeAdapter: EngineAdapter = {
  agentType: 'opencode',
  // The platform binary comes as an optional dependency; the postinstall puts it in place of bin/opencode.exe.
  cli: { npm: 'opencode-ai', version: OPENCODE_VERSION, bin: 'opencode', nodeMajor: null, installScripts: { 'opencode-ai': true } },
  invocation(turn, { binPath, home, gatewayBaseUrl }) {
    const configDir = `${home}/.config/opencode`;
    const promptFile = `${configDir}/agent-service-instructions.md`;
    const variant = opencodeVariant(turn.model, turn.reasoningEffort);
    return {
      argv: [
        binPath,
        'run',
        '--format',
        'json',
        '--pure',
        '--auto',
        '--thinking',
        '--title',
        'agent-service',
        '-m',
        `${providerOf(turn.model)}/${turn.model}`,
        ...(variant ? ['--variant', variant] : []),
        ...(turn.resumeId ? ['--session', turn.resumeId] : []),
      ],
      env: {
        // Its config, conversation database, cache and state, kept with the session.
        XDG_CONFIG_HOME: `${home}/.config`,
        XDG_DATA_HOME: `${home}/.local/share`,
        XDG_CACHE_HOME: `${home}/.cache`,
        XDG_STATE_HOME: `${home}/.local/state`,
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
        OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
        OPENCODE_DISABLE_SHARE: '1',
      },
      stdin: turn.prompt,
      files: {
        [`${configDir}/opencode.json`]: opencodeConfig(gatewayBaseUrl, promptFile, turn.mcpRelay ?? null),
        [promptFile]: turn.systemPrompt,
      },
    };
  },
  mapper: () => opencodeMapper(),
  // `opencode serve`, one per sandbox: its config (read once, at start) is part of its key.
  server: {
    spec(inv, { binPath, home, env, mounts }) {
      const config = inv.files[`${home}/.config/opencode/opencode.json`] ?? '';
      return {
        key: `${binPath}\n${Math.floor(Date.now() / SERVER_GENERATION_MS)}\n${config}`,
        argv: [binPath, 'serve', '--pure', '--hostname', '127.0.0.1', '--port', '0'],
        env,
        mounts,
        socket: `${home}/server.sock`,
      };
    },
    turn: (server, turn, signal) =>
      opencodeServerTurn(
        server,
        {
          prompt: turn.prompt,
          model: turn.model,
          variant: opencodeVariant(turn.model, turn.reasoningEffort),
          resumeId: turn.resumeId,
        },
        signal,
      ),
  },
  // Global skills of opencode: $XDG_CONFIG_HOME/opencode/skills (checked with 1.18.33: listed for its skill tool).
  skillsDir: (home) => `${home}/.config/opencode/skills`,
};

/** opencode names MCP tools `<server>_<tool>`; the relay's tools keep hermes' names. */
function toolName(name: string): string {
  const prefix = `${MCP_RELAY_SERVER}_`;
  return name.startsWith(prefix) ? cliMcpToolName(MCP_RELAY_SERVER, name.slice(prefix.length)) : name;
}

/** What an opencode tool is, for its result's shape: the relay's MCP tools are `agent_service_<tool>`. */
const kindOf = (name: string): ToolKind => (name.startsWith(`${MCP_RELAY_SERVER}_`) ? 'mcp' : name === 'bash' ? 'shell' : 'other');

export function opencodeMapper(): CliOutputMapper {
  let resumeId: string | null = null;
  const tools = new ToolCalls();
  let lastReason: string | null = null;
  let failure: string | null = null;

  const toolPart = (part: Record<string, any>): EngineEvent[] => {
    const state = part.state ?? {};
    const id = String(part.callID ?? part.id);
    const raw = String(part.tool ?? '');
    const out = tools.use(id, toolName(raw), state.input);
    if (state.status === 'completed') {
      // Its bash says the exit code in the call's metadata; a completed call is not a tool error.
      const exit = state.metadata?.exit;
      const { status, result } = toolResult(kindOf(raw), String(state.output ?? ''), false, { exitCode: Number.isInteger(exit) ? exit : undefined });
      out.push(...tools.result(id, status, result));
    } else if (state.status === 'error') {
      const { status, result } = toolResult(kindOf(raw), String(state.error ?? 'the tool failed'), true);
      out.push(...tools.result(id, status, result));
    }
    return out;
  };

  return jsonLinesMapper('opencode', {
    resumeId: () => resumeId,
    event(ev) {
      if (typeof ev.sessionID === 'string') resumeId = ev.sessionID;
      const part: Record<string, any> = ev.part ?? {};
      switch (ev.type) {
        case 'text':
          // opencode prints a text part once it is complete: the message, in one piece.
          return new TextStream('message').final(String(part.text ?? ''));
        case 'reasoning':
          return new TextStream('reasoning').final(String(part.text ?? ''), { signature: part.metadata?.anthropic?.signature ?? null });
        case 'tool_use':
          return toolPart(part);
        case 'step_finish':
          lastReason = String(part.reason ?? '');
          return [];
        case 'error': {
          const e = ev.error ?? {};
          failure = String(e.data?.message ?? e.message ?? e.name ?? 'error');
          return [];
        }
        default:
          return [];
      }
    },
    outcome: () => ({ finished: !failure && lastReason !== null && lastReason !== 'error', failure }),
  });
}
