// OpenClaw's turns through its own Gateway (`openclaw gateway run`, kept running in the sandbox by
// engine-server.ts) instead of one `openclaw agent --local` process per turn, which spends most of
// its ~15 s booting. A turn is one streamed request to the Gateway's OpenAI-compatible
// `POST /v1/chat/completions` (model `openclaw`: the configured agent), routed to the session's
// conversation by `x-openclaw-session-key` and to the session's model by `x-openclaw-model`. Its
// work reaches the session as with the CLI: our events plugin prints the run's agent events on the
// Gateway's stdout (plugin.ts), and these lines are handed to the same mapper
// (openclaw.ts). The completion stream ends the turn: it is turned into the one-line summary
// the mapper ends a CLI turn with (the conversation's key, the reply when nothing streamed, or
// the run's error). Interrupt: closing the request (OpenClaw cancels the run when its client goes).
import type { CliProcess } from '../core/adapter.js';
import type { EngineServer, EventStream } from '../core/engine-server.js';
import { openclawEventOf } from './events.js';

export interface OpenclawGatewayTurn {
  prompt: string;
  /** `provider/model` as OpenClaw names it. */
  model: string;
  /** The conversation's session key (the previous turn's, or a new one). */
  sessionKey: string;
}

/** After the completion stream ends, how long to wait for the run's last plugin lines on stdout. */
const LAST_LINES_GRACE_MS = 1000;

type Chunk = { id?: string; choices?: { delta?: { content?: string | null }; finish_reason?: string | null }[]; error?: { message?: string; type?: string } };

/** Runs one turn on the Gateway; the returned process ends (code 0, or 1 on a failed run) with the completion. */
export async function openclawGatewayTurn(server: EngineServer, turn: OpenclawGatewayTurn, signal: AbortSignal): Promise<CliProcess> {
  // The plugin's lines of this turn: only one turn runs on a session's Gateway at a time, so
  // every event line printed while it runs is the turn's (its sub-agents' included, as with the CLI).
  const queue: string[] = [];
  let wake: (() => void) | null = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  let runId: string | null = null;
  let runEnded = false;
  const unsubscribe = server.output((line) => {
    const ev = openclawEventOf(line);
    if (!ev) return;
    if (ev.stream === 'lifecycle') {
      if (ev.runId === runId && (ev.data.phase === 'end' || ev.data.phase === 'error')) runEnded = true;
      return notify();
    }
    queue.push(line);
    notify();
  });

  let stream: EventStream;
  try {
    stream = await server.events('/v1/chat/completions', {
      method: 'POST',
      headers: { 'x-openclaw-session-key': turn.sessionKey, 'x-openclaw-model': turn.model },
      body: { model: 'openclaw', stream: true, messages: [{ role: 'user', content: turn.prompt }] },
    });
  } catch (err) {
    unsubscribe();
    if (signal.aborted) throw err;
    // The Gateway refused the request: the turn ends with its words, as a failed CLI run would.
    return endedWith({ ok: false, error: { message: (err as Error).message } });
  }

  let finish!: (code: number | null) => void;
  const exited = new Promise<number | null>((resolve) => (finish = resolve));
  let closed = false;
  const close = () => {
    closed = true;
    stream.close();
    notify();
  };
  const unwatch = server.onExit(close);

  let reply = '';
  let failure: string | null = null;
  let finishReason: string | null = null;
  let streamDone = false;
  void (async () => {
    try {
      for await (const raw of stream.events) {
        const chunk = raw as Chunk;
        if (chunk.error) failure = chunk.error.message ?? chunk.error.type ?? 'error';
        if (typeof chunk.id === 'string' && !runId) runId = chunk.id;
        const choice = chunk.choices?.[0];
        if (typeof choice?.delta?.content === 'string') reply += choice.delta.content;
        if (choice?.finish_reason) finishReason = choice.finish_reason;
      }
    } catch {
      /* closed (an interrupt, the Gateway gone): the turn ends below */
    }
    streamDone = true;
    notify();
  })();

  async function* lines(): AsyncIterable<string> {
    let graceUntil = 0;
    let sawEvents = false;
    try {
      for (;;) {
        while (queue.length) {
          sawEvents = true;
          yield queue.shift()!;
        }
        if (closed) break;
        if (streamDone) {
          if (runEnded || !runId) break;
          graceUntil ||= Date.now() + LAST_LINES_GRACE_MS;
          if (Date.now() >= graceUntil) break;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (streamDone) setTimeout(resolve, Math.max(0, graceUntil - Date.now())).unref();
        });
      }
    } finally {
      unsubscribe();
      unwatch();
      stream.close();
    }
    // Closed by an interrupt or the server's exit, or a completion cut off without its finish
    // chunk or an error (the Gateway always writes one of them; it was killed, or the
    // connection broke): no summary, the turn did not finish.
    if ((closed && !streamDone) || (finishReason === null && failure === null)) {
      finish(server.alive ? 1 : null);
      return;
    }
    // The mapper's end of turn, as `openclaw agent --json` prints it (one line).
    const summary =
      failure !== null
        ? { ok: false, error: { message: failure } }
        : { payloads: sawEvents || !reply ? [] : [{ text: reply }], meta: { agentMeta: { sessionId: turn.sessionKey }, stopReason: finishReason ?? 'stop' } };
    yield JSON.stringify(summary);
    finish(failure === null ? 0 : 1);
  }
  return {
    lines: lines(),
    exited,
    kill() {
      // OpenClaw cancels the run once its client has gone.
      close();
      unwatch();
      finish(null);
    },
  };
}

/** A turn that ended before it started: the summary line alone. */
function endedWith(summary: Record<string, unknown>): CliProcess {
  return {
    lines: (async function* () {
      yield JSON.stringify(summary);
    })(),
    exited: Promise.resolve(1),
    kill() {},
  };
}
