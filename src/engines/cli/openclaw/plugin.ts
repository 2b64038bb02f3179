// The small OpenClaw plugin the openclaw adapter ships into the CLI's home for every turn: it
// subscribes to OpenClaw's agent events (`api.runtime.events.onAgentEvent`, the plugin SDK's
// event bus: streamed assistant text, thinking, and tool starts and results with their
// arguments and output) and to its transcript (`onSessionTranscriptUpdate`: each complete
// assistant message as it is stored, with its thinking and text, which the event bus leaves out
// when the message also calls a tool) and prints each as one line on stdout, after a marker,
// while the run goes. `openclaw agent --local --json` itself prints only a summary when the run ends; these
// lines are how a turn's work reaches the session as it happens (events.ts reads them).

/** The plugin's id (its directory, its manifest, its `plugins.entries` key). */
export const OPENCLAW_EVENTS_PLUGIN = 'agent-service-events';

/** What starts each event line on stdout (never the start of the CLI's own JSON summary). */
export const OPENCLAW_EVENT_MARK = 'AGENT_SERVICE_EVENT ';

// Plain JavaScript, no import: OpenClaw loads it as an ES module from the plugin directory.
// OpenClaw registers a plugin in more than one registry of the same process, while the event bus
// is one per process: a process-wide flag keeps it to one subscription (else each event would be
// printed once per registry). Tool `update` events (partial output) are left out: the result
// carries the whole output. Console output goes to stderr in --json mode, so the lines are
// written to process.stdout directly, in order with the summary OpenClaw writes there last.
const PLUGIN_SOURCE = `// Agent Service: prints this OpenClaw process's agent events on stdout, one line each.
const MARK = ${JSON.stringify(OPENCLAW_EVENT_MARK)};
const STREAMS = new Set(['assistant', 'thinking', 'tool', 'lifecycle']);
const SUBSCRIBED = Symbol.for('agent-service.openclaw-events.subscribed');

function print(event) {
  let line;
  try {
    line = MARK + JSON.stringify(event) + '\\n';
  } catch {
    return; // not serializable: left out rather than breaking the run
  }
  process.stdout.write(line);
}

export default {
  id: ${JSON.stringify(OPENCLAW_EVENTS_PLUGIN)},
  name: 'Agent Service events',
  description: 'Streams agent events (text, thinking, tool calls and results) to the Agent Service.',
  register(api) {
    const events = api && api.runtime && api.runtime.events;
    if (globalThis[SUBSCRIBED] || !events || typeof events.onAgentEvent !== 'function') return;
    globalThis[SUBSCRIBED] = true;
    events.onAgentEvent((evt) => {
      if (!evt || !STREAMS.has(evt.stream)) return;
      if (evt.stream === 'tool' && evt.data && evt.data.phase === 'update') return;
      print({ runId: evt.runId, seq: evt.seq, stream: evt.stream, data: evt.data });
    });
    if (typeof events.onSessionTranscriptUpdate !== 'function') return;
    events.onSessionTranscriptUpdate((u) => {
      const m = u && u.message;
      if (!m || m.role !== 'assistant') return;
      print({ runId: String(u.sessionId || ''), seq: Number(u.messageSeq || 0), stream: 'transcript', data: { role: m.role, content: m.content } });
    });
  },
};
`;

/** The plugin's files, by absolute path under `dir`. */
export function openclawEventsPluginFiles(dir: string): Record<string, string> {
  return {
    [`${dir}/package.json`]: JSON.stringify(
      { name: OPENCLAW_EVENTS_PLUGIN, version: '1.0.0', private: true, type: 'module', openclaw: { extensions: ['./index.mjs'] } },
      null,
      2,
    ),
    [`${dir}/openclaw.plugin.json`]: JSON.stringify(
      {
        id: OPENCLAW_EVENTS_PLUGIN,
        name: 'Agent Service events',
        activation: { onStartup: true },
        configSchema: { type: 'object', additionalProperties: false },
      },
      null,
      2,
    ),
    [`${dir}/index.mjs`]: PLUGIN_SOURCE,
  };
}

/** The `plugins` block of OpenClaw's config that loads the plugin from `dir`. */
export function openclawEventsPluginConfig(dir: string): Record<string, unknown> {
  return {
    load: { paths: [dir] },
    entries: { [OPENCLAW_EVENTS_PLUGIN]: { enabled: true } },
  };
}
