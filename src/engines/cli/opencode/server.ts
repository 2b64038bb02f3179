// opencode's turns through its own server (`opencode serve`, kept running in the sandbox by
// engine-server.ts) instead of one `opencode run` process per turn: the booted server answers a
// turn in a fraction of a second where a new process spends seconds starting. A turn creates (or,
// for the next turn, continues) an opencode session, sends the prompt (`prompt_async`), and reads
// the server's event stream until that session is idle. The events become the very lines
// `opencode run --format json` prints (a part once it is complete: text, reasoning, a tool call
// done, a step's finish; an error), so one mapper (opencode.ts) reads both.
import type { CliProcess } from '../core/adapter.js';
import type { EngineServer } from '../core/engine-server.js';
import { providerOf } from '../core/cli-events.js';

export interface OpencodeServerTurn {
  prompt: string;
  model: string;
  variant: string | null;
  /** The opencode session to continue (the previous turn's), or null for a new one. */
  resumeId: string | null;
}

type Part = { id?: string; type?: string; messageID?: string; time?: { end?: number }; state?: { status?: string } };
type ServerEvent = {
  type?: string;
  properties?: { sessionID?: string; part?: Part; info?: { id?: string; role?: string }; error?: unknown; status?: { type?: string } };
};

/** One server event → the `opencode run --format json` line it means, if any. */
export function runLineOf(ev: ServerEvent, sessionID: string, seen: Set<string>, userMessages: Set<string>): string | null {
  const props = ev.properties ?? {};
  if (ev.type === 'message.updated' && props.info?.role === 'user' && props.info.id) userMessages.add(props.info.id);
  if (ev.type === 'session.error') return JSON.stringify({ type: 'error', sessionID, error: props.error ?? {} });
  if (ev.type !== 'message.part.updated' || !props.part) return null;
  const part = props.part;
  if (part.messageID && userMessages.has(part.messageID)) return null;
  const done = (type: string) => {
    const key = `${type}:${part.id}`;
    if (seen.has(key)) return null;
    seen.add(key);
    return JSON.stringify({ type, sessionID, part });
  };
  switch (part.type) {
    case 'text':
      return part.time?.end ? done('text') : null;
    case 'reasoning':
      return part.time?.end ? done('reasoning') : null;
    case 'tool':
      return part.state?.status === 'completed' || part.state?.status === 'error' ? done('tool_use') : null;
    case 'step-finish':
      return done('step_finish');
    default:
      return null;
  }
}

const isIdle = (ev: ServerEvent, sessionID: string) =>
  ev.properties?.sessionID === sessionID && (ev.type === 'session.idle' || (ev.type === 'session.status' && ev.properties.status?.type === 'idle'));

/** Runs one turn on the server; the returned process ends (code 0) when the opencode session is idle again. */
export async function opencodeServerTurn(server: EngineServer, turn: OpencodeServerTurn, signal: AbortSignal): Promise<CliProcess> {
  const sessionID = turn.resumeId ?? (await server.request<{ id: string }>('POST', '/session', { title: 'agent-service' }, signal)).id;
  // Subscribed before the prompt is sent, so no event of the turn is missed.
  const stream = await server.events('/event');
  try {
    await server.request(
      'POST',
      `/session/${encodeURIComponent(sessionID)}/prompt_async`,
      {
        parts: [{ type: 'text', text: turn.prompt }],
        model: { providerID: providerOf(turn.model), modelID: turn.model },
        ...(turn.variant ? { variant: turn.variant } : {}),
      },
      signal,
    );
  } catch (err) {
    stream.close();
    throw err;
  }
  let finish!: (code: number | null) => void;
  const exited = new Promise<number | null>((resolve) => (finish = resolve));
  // The server itself stopping ends the turn as a CLI's exit would.
  const unwatch = server.onExit((code) => {
    stream.close();
    finish(code === 0 ? 1 : code);
  });
  void exited.then(unwatch);
  async function* lines(): AsyncIterable<string> {
    const seen = new Set<string>();
    const userMessages = new Set<string>();
    try {
      for await (const raw of stream.events) {
        const ev = raw as ServerEvent;
        if (ev.properties?.sessionID !== sessionID) continue;
        const line = runLineOf(ev, sessionID, seen, userMessages);
        if (line) yield line;
        if (isIdle(ev, sessionID)) {
          finish(0);
          return;
        }
      }
    } catch {
      /* the stream was closed (a forced stop, the server gone): the turn ends below */
    } finally {
      stream.close();
    }
    finish(server.alive ? 1 : null);
  }
  return {
    lines: lines(),
    exited,
    kill(sig) {
      // Interrupt: opencode stops the turn and goes idle; a forced stop also lets go of the stream.
      void server.request('POST', `/session/${encodeURIComponent(sessionID)}/abort`).catch(() => undefined);
      if (sig === 'SIGKILL') {
        stream.close();
        finish(null);
      }
    },
  };
}
