// A session's remote tool servers: connected by the service, their tools listed once per
// provision (kept for the session until its sandbox is provisioned again or torn down, so a
// PATCH of the agent's mcpServers applies from the next provision), filtered by the server's
// include/exclude lists, offered under unambiguous names and called with a timeout and size
// limits. A server that could not be listed is tried again at the next turn.
import { settings } from '../../config.js';
import type { ToolSpec } from '../../gateway/types.js';
import { logger } from '../../logger.js';
import { outboundErrorMessage } from '../../net/outbound-guard.js';
import { openAuthHeaders, type StoredMcpServer } from './auth.js';
import { connectMcp, ResponseTooLargeError, type McpConnection } from './connection.js';
import { mcpToolName } from './names.js';
import { convertResult } from './results.js';
import { storeToolFiles, type ProducedFile } from '../result-files.js';
import type { ToolOutcome } from '../types.js';

/** Limits (documented in docs/tools.md): connect + list, one call, bytes of one answer, text kept for the model. */
export const mcpLimits = () => ({
  connectTimeoutMs: settings.mcpConnectTimeoutMs(),
  callTimeoutMs: settings.mcpCallTimeoutMs(),
  maxResponseBytes: settings.mcpMaxResponseBytes(),
  maxResultChars: settings.mcpMaxResultChars(),
  idleCloseMs: settings.mcpIdleCloseMs(),
  maxTools: 500,
});

export interface McpTool {
  modelName: string;
  server: string;
  tool: string;
  spec: ToolSpec;
}

interface ServerState {
  config: StoredMcpServer;
  conn: McpConnection | null;
  connecting: Promise<McpConnection> | null;
  idleTimer: NodeJS.Timeout | null;
  tools: McpTool[] | null;
}

interface SessionServers {
  servers: Map<string, ServerState>;
  /** Names stay the same for the session's life (the history refers to them). */
  names: Map<string, string>;
  byName: Map<string, McpTool>;
}

const sessions = new Map<string, SessionServers>();

function passesFilter(name: string, tools: StoredMcpServer['tools']): boolean {
  if (tools.include.length && !tools.include.includes(name)) return false;
  return !tools.exclude.includes(name);
}

async function connection(state: ServerState): Promise<McpConnection> {
  if (state.conn) return state.conn;
  state.connecting ??= connectMcp(state.config.url, {
    headers: openAuthHeaders(state.config),
    timeoutMs: mcpLimits().connectTimeoutMs,
    maxResponseBytes: mcpLimits().maxResponseBytes,
  }).then(
    (conn) => {
      state.conn = conn;
      state.connecting = null;
      conn.client.onclose = () => {
        if (state.conn === conn) state.conn = null;
      };
      return conn;
    },
    (err) => {
      state.connecting = null;
      throw err;
    },
  );
  return state.connecting;
}

/** Closes a connection that stayed unused (the tool list is kept; the next call reconnects). */
function touch(state: ServerState): void {
  if (state.idleTimer) clearTimeout(state.idleTimer);
  state.idleTimer = setTimeout(() => void drop(state), mcpLimits().idleCloseMs);
  state.idleTimer.unref();
}

async function drop(state: ServerState): Promise<void> {
  if (state.idleTimer) clearTimeout(state.idleTimer);
  state.idleTimer = null;
  const conn = state.conn;
  state.conn = null;
  await conn?.close().catch(() => undefined);
}

export function describeMcpError(err: unknown): string {
  if (err instanceof ResponseTooLargeError) return err.message;
  const e = err as { code?: unknown; message?: string; name?: string };
  if (e?.name === 'McpError' && e.code === -32001) return 'no answer in time';
  const msg = outboundErrorMessage(err);
  return msg.replace(/^MCP error -?\d+: /, '');
}

async function listServer(state: ServerState, taken: SessionServers): Promise<void> {
  const conn = await connection(state);
  const found: McpTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await conn.client.listTools(cursor ? { cursor } : {}, { timeout: mcpLimits().connectTimeoutMs });
    for (const t of page.tools) {
      if (!passesFilter(t.name, state.config.tools)) continue;
      const key = `${state.config.name}\0${t.name}`;
      let modelName = taken.names.get(key);
      if (!modelName) {
        modelName = mcpToolName(state.config.name, t.name, new Set(taken.names.values()));
        taken.names.set(key, modelName);
      }
      const about = t.description || t.title || t.name;
      found.push({
        modelName,
        server: state.config.name,
        tool: t.name,
        spec: {
          name: modelName,
          description: `${about}\n(tool ${t.name} of the remote tool server ${state.config.name})`,
          inputSchema: t.inputSchema as Record<string, unknown>,
        },
      });
      if (found.length >= mcpLimits().maxTools) break;
    }
    cursor = page.nextCursor;
  } while (cursor && found.length < mcpLimits().maxTools);
  state.tools = found;
  touch(state);
}

/**
 * The session's remote tools: listed on first use after a provision, then kept. Servers that
 * fail are reported through `onUnavailable` and tried again at the next call of this function.
 */
export async function sessionMcpTools(
  sessionId: string,
  configured: StoredMcpServer[],
  onUnavailable: (server: string, message: string) => Promise<void>,
): Promise<McpTool[]> {
  let s = sessions.get(sessionId);
  if (!s) {
    s = {
      servers: new Map(configured.map((c) => [c.name, { config: c, conn: null, connecting: null, idleTimer: null, tools: null }])),
      names: new Map(),
      byName: new Map(),
    };
    sessions.set(sessionId, s);
  }
  const current = s;
  const unlisted = [...current.servers.values()].filter((st) => st.tools === null);
  await Promise.all(
    unlisted.map(async (st) => {
      try {
        await listServer(st, current);
      } catch (err) {
        await drop(st);
        const message = describeMcpError(err);
        logger.warn({ sessionId, server: st.config.name, message }, 'remote tool server unavailable');
        await onUnavailable(st.config.name, message);
      }
    }),
  );
  const tools = [...current.servers.values()].flatMap((st) => st.tools ?? []);
  current.byName = new Map(tools.map((t) => [t.modelName, t]));
  return tools;
}

/** The remote tool offered under `modelName` in this session, if any. */
export function mcpToolNamed(sessionId: string, modelName: string): McpTool | undefined {
  return sessions.get(sessionId)?.byName.get(modelName);
}

/** Calls a remote tool; every failure becomes an error outcome naming the server. */
export async function callMcpTool(
  scope: { sessionId: string; universeId: string },
  tool: McpTool,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<ToolOutcome> {
  const state = sessions.get(scope.sessionId)?.servers.get(tool.server);
  if (!state) return { status: 'error', result: { error: `the tool server ${tool.server} is no longer configured for this session` } };
  const limits = mcpLimits();
  // A signal of the call's own, so the turn's signal does not collect one listener per call.
  const call = new AbortController();
  const onAbort = () => call.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const attempt = async () => {
    const conn = await connection(state);
    touch(state);
    return conn.client.callTool({ name: tool.tool, arguments: args }, undefined, {
      timeout: limits.callTimeoutMs,
      maxTotalTimeout: limits.callTimeoutMs,
      signal: call.signal,
    });
  };
  let raw;
  try {
    try {
      raw = await attempt();
    } catch (err) {
      // The server forgot our MCP session (it restarted): connect again once. A 404 means the
      // call was never processed, so repeating it is safe.
      if ((err as { code?: unknown }).code !== 404) throw err;
      await drop(state);
      raw = await attempt();
    }
  } catch (err) {
    if (!(err instanceof ResponseTooLargeError) && (err as { code?: unknown }).code !== -32001) await drop(state);
    const message = signal.aborted ? 'interrupted' : describeMcpError(err);
    return { status: 'error', result: { error: `tool server ${tool.server}: ${message}` } };
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
  const converted = convertResult(
    raw as Parameters<typeof convertResult>[0],
    { maxTextChars: limits.maxResultChars },
    `${tool.server}-${tool.tool}`.replace(/[^A-Za-z0-9_.-]/g, '_'),
  );
  const stored = converted.files.length ? await storeToolFiles(scope, converted.files as ProducedFile[]) : null;
  const content = converted.content.map((c) =>
    c.type === 'file' && stored ? { type: 'file', ...stored.refs[c.file as number], ...(c.uri ? { uri: c.uri } : {}) } : c,
  );
  const result: Record<string, unknown> = { content };
  if (converted.structured) result.structured_content = converted.structured;
  if (converted.truncated) result.truncated = true;
  if (converted.isError) {
    result.error =
      content
        .filter((c) => c.type === 'text')
        .map((c) => c.text)
        .join('\n') || `tool ${tool.tool} of ${tool.server} failed`;
  }
  return { status: converted.isError ? 'error' : 'ok', result, ...(stored ? { attachments: stored.parts } : {}) };
}

/** Forgets a session's servers and tool lists (a new provision lists again). */
export async function forgetSessionMcp(sessionId: string): Promise<void> {
  const s = sessions.get(sessionId);
  sessions.delete(sessionId);
  if (s) await Promise.all([...s.servers.values()].map(drop));
}

/** Shutdown: closes every remote tool server connection of this process. */
export async function closeMcpConnections(): Promise<void> {
  await Promise.all([...sessions.keys()].map(forgetSessionMcp));
}
