// claude_code (`@anthropic-ai/claude-code`: the npm package's postinstall puts Claude Code's
// native binary in place, so it needs no Node of its own): `claude -p --input-format stream-json
// --output-format stream-json --verbose --include-partial-messages` runs one turn, reading the
// user message as a JSON line and printing JSON lines (system init with the session id, partial
// Anthropic stream events, assistant/user messages with tool calls and results, a final result);
// `--resume <session_id>` continues a conversation. It talks to the gateway's Anthropic Messages
// endpoint (ANTHROPIC_BASE_URL) with the session credential, which an `apiKeyHelper` reads from
// AGENT_SERVICE_TOKEN (never written anywhere). Its permission prompts are off: the session's
// sandbox is the boundary (IS_SANDBOX=1 tells it so when the sandbox runs it as root).
import { effortFor, OFF } from '../../../catalog/reasoning-effort.js';
import type { CliOutputMapper, EngineAdapter, EngineEvent } from '../core/adapter.js';
import { jsonLinesMapper } from '../core/json-lines-mapper.js';
import { contentText, gatewayUrls, TextStream, ToolCalls } from '../core/cli-events.js';
import { cliMcpToolName, MCP_RELAY_SERVER, type McpRelay } from '../core/mcp-relay.js';
import { toolResult, type ToolKind } from '../core/tool-results.js';

/** The platform's Claude Code version (an agent's harnessVersion pins another). */
export const CLAUDE_CODE_VERSION = '2.1.330';

/**
 * Our reasoningEffort scale onto Claude Code's `--effort` (low, medium, high, xhigh, max — the
 * values the spec allows for claude_code; src/catalog/reasoning-effort.ts); none/off turn
 * thinking off, null keeps its default.
 */
export function claudeEffort(effort: string | null): { effort: string | null; thinkingOff: boolean } {
  const value = effortFor('claude_code', effort);
  return value === OFF ? { effort: null, thinkingOff: true } : { effort: value, thinkingOff: false };
}

/** The relay as an HTTP MCP server of Claude Code; `${VAR}` is expanded by Claude Code itself. */
export function claudeMcpConfig(relay: McpRelay): string {
  return JSON.stringify(
    { mcpServers: { [MCP_RELAY_SERVER]: { type: 'http', url: relay.url, headers: { Authorization: `Bearer \${${relay.tokenEnv}}` } } } },
    null,
    2,
  );
}

export const claudeCodeAdapter: EngineAdapter = {
  agentType: 'claude_code',
  // The native binary is copied into place by the package's postinstall (scripts must run).
  cli: {
    npm: '@anthropic-ai/claude-code',
    version: CLAUDE_CODE_VERSION,
    bin: 'claude',
    nodeMajor: null,
    installScripts: { '@anthropic-ai/claude-code': true },
  },
  invocation(turn, { binPath, home, gatewayBaseUrl }) {
    const configDir = `${home}/.claude`;
    const promptFile = `${configDir}/agent-service-system-prompt.md`;
    const mcpFile = `${configDir}/agent-service-mcp.json`;
    const { effort, thinkingOff } = claudeEffort(turn.reasoningEffort);
    const relay = turn.mcpRelay ?? null;
    const files: Record<string, string> = {
      // User settings: the key comes from the variable at each start, never from a file.
      [`${configDir}/settings.json`]: JSON.stringify({ apiKeyHelper: 'printenv AGENT_SERVICE_TOKEN' }, null, 2),
      [promptFile]: turn.systemPrompt,
    };
    if (relay) files[mcpFile] = claudeMcpConfig(relay);
    return {
      argv: [
        binPath,
        '-p',
        '--input-format',
        'stream-json',
        '--output-format',
        'stream-json',
        '--verbose',
        '--include-partial-messages',
        '--dangerously-skip-permissions',
        '--model',
        turn.model,
        ...(effort ? ['--effort', effort] : []),
        '--append-system-prompt-file',
        promptFile,
        ...(relay ? ['--mcp-config', mcpFile, '--strict-mcp-config'] : []),
        ...(turn.resumeId ? ['--resume', turn.resumeId] : []),
      ],
      env: {
        CLAUDE_CONFIG_DIR: configDir, // its settings and conversation store, kept with the session
        ANTHROPIC_BASE_URL: gatewayUrls(gatewayBaseUrl).anthropic,
        IS_SANDBOX: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', // no telemetry, update checks or connectivity probes
        DISABLE_AUTOUPDATER: '1',
        ...(thinkingOff ? { MAX_THINKING_TOKENS: '0' } : {}),
      },
      stdin: `${JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'text', text: turn.prompt }] } })}\n`,
      files,
    };
  },
  mapper: () => claudeCodeMapper(),
  // User skills of Claude Code: $CLAUDE_CONFIG_DIR/skills (checked with 2.1.330: listed for its Skill tool).
  skillsDir: (home) => `${home}/.claude/skills`,
};

/** Claude Code names MCP tools `mcp__<server>__<tool>`; the relay's tools keep hermes' names. */
function toolName(name: string): string {
  const m = /^mcp__(.+?)__(.+)$/.exec(name);
  return m && m[1] === MCP_RELAY_SERVER ? cliMcpToolName(m[1], m[2]!) : name;
}

/** What a Claude Code tool is, for its result's shape: its MCP tools are `mcp__<server>__<tool>`. */
const kindOf = (name: string): ToolKind => (name.startsWith('mcp__') ? 'mcp' : name === 'Bash' ? 'shell' : 'other');

/** Claude Code's words for a command that exited non-zero: `Exit code <n>` first. */
const exitCodeIn = (text: string) => {
  const m = /^\s*Exit code (\d+)/.exec(text);
  return m ? Number(m[1]) : null;
};

export function claudeCodeMapper(): CliOutputMapper {
  let resumeId: string | null = null;
  const tools = new ToolCalls();
  const kinds = new Map<string, ToolKind>(); // call id → what the tool is
  // Streams of the API message being received, by content block index; the complete block
  // (in an `assistant` line) closes the oldest open stream of its kind.
  let blocks = new Map<number, TextStream>();
  const open: { message: TextStream[]; reasoning: TextStream[] } = { message: [], reasoning: [] };
  let result: Record<string, any> | null = null;
  let apiError: string | null = null;

  const streamEvent = (ev: Record<string, any>): EngineEvent[] => {
    switch (ev.type) {
      case 'message_start':
        blocks = new Map();
        return [];
      case 'content_block_start': {
        const kind = ev.content_block?.type === 'text' ? 'message' : ev.content_block?.type === 'thinking' ? 'reasoning' : null;
        if (!kind) return [];
        const s = new TextStream(kind);
        blocks.set(ev.index, s);
        open[kind].push(s);
        return [];
      }
      case 'content_block_delta': {
        const s = blocks.get(ev.index);
        if (!s) return [];
        if (ev.delta?.type === 'text_delta') return s.chunk(String(ev.delta.text ?? ''));
        if (ev.delta?.type === 'thinking_delta') return s.chunk(String(ev.delta.thinking ?? ''));
        return [];
      }
      default:
        return [];
    }
  };

  const assistant = (msg: Record<string, any>): EngineEvent[] => {
    const out: EngineEvent[] = [];
    for (const block of Array.isArray(msg.content) ? msg.content : []) {
      if (block?.type === 'text') {
        out.push(...(open.message.shift() ?? new TextStream('message')).final(String(block.text ?? '')));
      } else if (block?.type === 'thinking') {
        out.push(...(open.reasoning.shift() ?? new TextStream('reasoning')).final(String(block.thinking ?? ''), { signature: block.signature || null }));
      } else if (block?.type === 'redacted_thinking') {
        out.push(...new TextStream('reasoning').final('', { redacted: true }));
      } else if (block?.type === 'tool_use' || block?.type === 'server_tool_use' || block?.type === 'mcp_tool_use') {
        kinds.set(String(block.id), kindOf(String(block.name ?? '')));
        out.push(...tools.use(String(block.id), toolName(String(block.name ?? '')), block.input));
      }
    }
    return out;
  };

  const user = (line: Record<string, any>): EngineEvent[] => {
    const out: EngineEvent[] = [];
    const content = line.message?.content;
    for (const block of Array.isArray(content) ? content : []) {
      if (block?.type !== 'tool_result') continue;
      const id = String(block.tool_use_id);
      const { status, result } = toolResult(kinds.get(id) ?? 'other', contentText(block.content), block.is_error === true, {
        content: block.content,
        exitCodeIn,
      });
      out.push(...tools.result(id, status, result));
    }
    return out;
  };

  return jsonLinesMapper('claude_code', {
    resumeId: () => resumeId,
    event(ev) {
      if (typeof ev.session_id === 'string' && (ev.type === 'system' || ev.type === 'result')) resumeId = ev.session_id;
      // A sub-agent's own work (Task tool) stays inside its call: its result is the call's result.
      if (ev.parent_tool_use_id) return [];
      switch (ev.type) {
        case 'stream_event':
          return ev.event ? streamEvent(ev.event) : [];
        case 'assistant':
          if (ev.message?.model === '<synthetic>' || ev.is_api_error_message) {
            // Claude Code's own words about a failed call ("API Error: 401 …"): the turn's error, not a reply.
            apiError = contentText(ev.message?.content) || apiError;
            return [];
          }
          return ev.message ? assistant(ev.message) : [];
        case 'user':
          return user(ev);
        case 'system':
          if (ev.subtype === 'api_retry') {
            const what = ev.error_status ? `status ${ev.error_status}` : String(ev.error ?? 'error');
            return [
              {
                type: 'session.error',
                fields: {
                  error: {
                    type: 'engine_error',
                    message: `claude_code: the model call failed (${what}); retrying (${ev.attempt}/${ev.max_retries})`,
                    retry_status: 'retrying',
                    ...(Number.isInteger(ev.attempt) && ev.attempt > 0 ? { attempt: ev.attempt } : {}),
                  },
                },
              },
            ];
          }
          return [];
        case 'result':
          result = ev;
          return [];
        default:
          return [];
      }
    },
    outcome() {
      const succeeded = !!result && !result.is_error && result.subtype === 'success';
      // What went wrong, in Claude Code's words: the result's text (`API Error: …`), its
      // `errors` (error_during_execution, error_max_turns), or a failed call it reported.
      const said =
        result && !succeeded
          ? [typeof result.result === 'string' ? result.result : '', ...(Array.isArray(result.errors) ? result.errors.map(String) : [])]
              .filter(Boolean)
              .join('; ') || `the turn ended with ${String(result.subtype)}`
          : null;
      return { finished: succeeded, failure: said ?? apiError, budgetHints: [apiError] };
    },
  });
}
