// pi (`@mariozechner/pi-coding-agent`, a Node CLI that runs on the service's Node 20):
// `pi -p --mode json` runs one turn on the prompt read from stdin and prints its session events
// as JSON lines (the session header with its id, message_update events carrying text, thinking
// and tool-call deltas, tool_execution_start/end, message_end with the stop reason, agent_end);
// `--session <id>` continues a conversation. Its built-in `anthropic` and `openai` providers are
// pointed at the gateway in `$PI_CODING_AGENT_DIR/models.json`, whose `apiKey` names the
// variable AGENT_SERVICE_TOKEN (pi reads the key from it; the value is never written).
// claude-* models go to the Anthropic Messages route, gpt-* to OpenAI Responses.
import type { CliOutputMapper, EngineAdapter, EngineEvent } from '../core/adapter.js';
import { jsonLinesMapper } from '../core/json-lines-mapper.js';
import { contentText, gatewayUrls, providerOf, TextStream, ToolCalls, xhighScaleEffort } from '../core/cli-events.js';
import { toolResult } from '../core/tool-results.js';

/** The platform's pi version (an agent's harnessVersion pins another). */
export const PI_VERSION = '0.73.1';

/** Our reasoningEffort scale onto pi's `--thinking` levels (off, minimal, low, medium, high, xhigh). */
export function piThinking(effort: string | null): string | null {
  return xhighScaleEffort(effort, 'off');
}

/** pi's models.json: its built-in providers' requests go to the gateway, keyed by the variable. */
export function piModelsConfig(gatewayBaseUrl: string): string {
  const urls = gatewayUrls(gatewayBaseUrl);
  return JSON.stringify(
    {
      providers: {
        anthropic: { baseUrl: urls.anthropic, apiKey: 'AGENT_SERVICE_TOKEN' },
        openai: { baseUrl: urls.openai, apiKey: 'AGENT_SERVICE_TOKEN' },
      },
    },
    null,
    2,
  );
}

export const piAdapter: EngineAdapter = {
  agentType: 'pi',
  cli: { npm: '@mariozechner/pi-coding-agent', version: PI_VERSION, bin: 'pi', nodeMajor: null },
  invocation(turn, { binPath, home, gatewayBaseUrl }) {
    const agentDir = `${home}/.pi/agent`;
    const promptFile = `${agentDir}/agent-service-system-prompt.md`;
    const thinking = piThinking(turn.reasoningEffort);
    return {
      argv: [
        binPath,
        '-p',
        '--mode',
        'json',
        '--provider',
        providerOf(turn.model),
        '--model',
        turn.model,
        ...(thinking ? ['--thinking', thinking] : []),
        '--append-system-prompt',
        promptFile, // a path: pi appends the file's contents
        ...(turn.resumeId ? ['--session', turn.resumeId] : []),
      ],
      env: {
        PI_CODING_AGENT_DIR: agentDir, // settings, models.json and its sessions, kept with the session
        PI_OFFLINE: '1', // no update checks or other startup network calls
      },
      stdin: turn.prompt, // pi reads the prompt from piped stdin
      files: {
        [`${agentDir}/models.json`]: piModelsConfig(gatewayBaseUrl),
        [promptFile]: turn.systemPrompt,
      },
    };
  },
  mapper: () => piMapper(),
  // Global skills of pi: $PI_CODING_AGENT_DIR/skills (checked with 0.73.1: listed in its system prompt).
  skillsDir: (home) => `${home}/.pi/agent/skills`,
};

/** pi's words for a command that exited non-zero: `Command exited with code <n>` at the end. */
const exitCodeIn = (text: string) => {
  const m = /Command exited with code (\d+)\s*$/.exec(text);
  return m ? Number(m[1]) : null;
};

export function piMapper(): CliOutputMapper {
  let resumeId: string | null = null;
  const tools = new ToolCalls();
  let blocks = new Map<number, TextStream>(); // the current assistant message's text and thinking, by content index
  let lastStop: string | null = null;
  let lastError: string | null = null;
  let ended = false;

  const assistantEvent = (ev: Record<string, any>): EngineEvent[] => {
    const i = Number(ev.contentIndex);
    switch (ev.type) {
      case 'text_start':
      case 'thinking_start': {
        blocks.set(i, new TextStream(ev.type === 'text_start' ? 'message' : 'reasoning'));
        return [];
      }
      case 'text_delta':
      case 'thinking_delta':
        return blocks.get(i)?.chunk(String(ev.delta ?? '')) ?? [];
      case 'text_end':
      case 'thinking_end': {
        const s = blocks.get(i) ?? new TextStream(ev.type === 'text_end' ? 'message' : 'reasoning');
        blocks.delete(i);
        const text = typeof ev.content === 'string' ? ev.content : s.text;
        const block = ev.partial?.content?.[i];
        return s.final(text, { signature: block?.thinkingSignature || null, redacted: !!block?.redacted && !text });
      }
      case 'toolcall_end':
        return ev.toolCall ? tools.use(String(ev.toolCall.id), String(ev.toolCall.name ?? ''), ev.toolCall.arguments) : [];
      default:
        return [];
    }
  };

  return jsonLinesMapper('pi', {
    resumeId: () => resumeId,
    event(ev) {
      switch (ev.type) {
        case 'session':
          if (typeof ev.id === 'string') resumeId = ev.id;
          return [];
        case 'message_start':
          if (ev.message?.role === 'assistant') blocks = new Map();
          return [];
        case 'message_update':
          return ev.assistantMessageEvent ? assistantEvent(ev.assistantMessageEvent) : [];
        case 'message_end':
          if (ev.message?.role === 'assistant') {
            lastStop = String(ev.message.stopReason ?? '');
            lastError = lastStop === 'error' ? String(ev.message.errorMessage ?? 'the model call failed') : null;
          }
          return [];
        case 'tool_execution_start':
          return tools.use(String(ev.toolCallId), String(ev.toolName ?? ''), ev.args);
        case 'tool_execution_end': {
          // pi has no MCP client: its tools are its own (bash, read, write, edit, …).
          const { status, result } = toolResult(ev.toolName === 'bash' ? 'shell' : 'other', contentText(ev.result?.content), ev.isError === true, {
            exitCodeIn,
          });
          return tools.result(String(ev.toolCallId), status, result, String(ev.toolName ?? ''));
        }
        case 'auto_retry_start':
          return [
            {
              type: 'session.error',
              fields: {
                error: {
                  type: 'engine_error',
                  message: `pi: ${String(ev.errorMessage ?? 'the model call failed')}; retrying (${ev.attempt}/${ev.maxAttempts})`,
                  retry_status: 'retrying',
                  ...(Number.isInteger(ev.attempt) && ev.attempt > 0 ? { attempt: ev.attempt } : {}),
                },
              },
            },
          ];
        case 'auto_retry_end':
          if (!ev.success && ev.finalError) lastError = String(ev.finalError);
          return [];
        case 'agent_end':
          ended = true;
          return [];
        default:
          return [];
      }
    },
    outcome: () => ({ finished: ended && lastStop !== 'error' && lastStop !== 'aborted', failure: lastError }),
  });
}
