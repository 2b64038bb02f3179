// The MCP relay: the session's service-side tools (its agent's remote MCP tools and granted
// capabilities; never the sandbox tools) as one MCP server that CLI engines reach from inside the
// sandbox at `/gateway/mcp` (http://127.0.0.1:3128/gateway/mcp through the egress endpoint),
// authenticated by the session credential like the model gateway. Calls run through the same
// toolbox hermes uses (serviceToolbox), so a remote server's credentials stay in the service,
// and timeouts, size limits, result files, capability pricing and revocation work the same.
//
// Stateless Streamable HTTP: every POST gets a fresh SDK server bound to the credential's
// session, so any API process can answer any request (no MCP session to keep), and the agent's
// grants are read again at every call. There is no server→client stream: GET and DELETE answer
// 405, which the protocol allows.
//
// A tool the agent's tool policy says to ask about cannot wait for a person in the middle of a
// CLI's own tool call: it is refused with a tool error saying so.
import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { prisma } from '../../db/client.js';
import { commitEvents } from '../../events/store.js';
import { newId } from '../../ids.js';
import { logger } from '../../logger.js';
import type { Sandbox } from '../../sandbox/driver.js';
import { sandboxDriver } from '../../sandbox/current-driver.js';
import { serviceToolbox } from '../toolbox.js';
import type { Toolbox, ToolOutcome } from '../types.js';
import { service } from '../../services/registry.js';

/**
 * Multiagent (issue #32): a coordinator's delegation tools join the relay's (so a CLI coordinator
 * delegates as hermes does). They run in the runtime (src/runtime/delegation-tools.ts); the
 * composition installs the function that adds them to a session's relayed toolbox.
 */
export type RelayDelegation = (caller: RelayCaller, tools: Toolbox) => Promise<Toolbox>;

declare module '../../services/registry.js' {
  interface Services {
    relayDelegation: RelayDelegation;
  }
}

/** Who a relay request is for: the session whose running turn the credential belongs to. */
export interface RelayCaller {
  sessionId: string;
  universeId: string;
  turn: number;
}

const SERVER_INFO = { name: 'agent-service', version: '1.0.0' };
const INSTRUCTIONS =
  'Tools of this agent that run in the Agent Service (remote tool servers and platform capabilities). Files they produce are session files, named by file_id.';

/**
 * The sandbox of the session, looked up only when a capability reads a file from /workspace
 * (`path` media inputs): every method waits for the driver's lookup, then calls the real one.
 * The relay itself never runs anything in it.
 */
function lazySandbox(sessionId: string): Sandbox {
  let found: Promise<Sandbox | null> | undefined;
  const get = async () => {
    const sb = await (found ??= sandboxDriver().get(sessionId));
    if (!sb) throw new Error('the session has no sandbox right now');
    return sb;
  };
  const known: Record<string, unknown> = { sessionId, hostWorkspace: null };
  return new Proxy(known, {
    get(target, prop) {
      if (typeof prop !== 'string' || prop in target) return target[prop as string];
      if (prop === 'then') return undefined; // not a promise
      return async (...args: unknown[]) => {
        const sb = (await get()) as unknown as Record<string, (...a: unknown[]) => unknown>;
        return sb[prop]!(...args);
      };
    },
  }) as unknown as Sandbox;
}

async function relayToolbox(caller: RelayCaller): Promise<Toolbox> {
  return service('relayDelegation')(caller, await ownRelayToolbox(caller));
}

async function ownRelayToolbox(caller: RelayCaller): Promise<Toolbox> {
  const session = await prisma.session.findUnique({ where: { id: caller.sessionId }, select: { agentId: true } });
  const emit = (fields: Parameters<typeof commitEvents>[1][number]) => commitEvents(caller.sessionId, [fields]);
  return serviceToolbox({
    sessionId: caller.sessionId,
    universeId: caller.universeId,
    agentId: session?.agentId ?? null,
    turn: caller.turn,
    sandbox: lazySandbox(caller.sessionId),
    onServerUnavailable: async (server, message) => {
      await emit({
        type: 'session.error',
        turn: caller.turn,
        fields: {
          error: {
            type: 'tool_server_unavailable',
            message: `the tool server ${server} could not be reached; its tools are missing from this turn: ${message}`,
            retry_status: 'retrying',
          },
        },
      });
    },
  });
}

/** A tool outcome as an MCP tool result: text blocks the CLI's model reads, errors flagged `isError`. */
export function relayResult(outcome: ToolOutcome): CallToolResult {
  const { result } = outcome;
  const isError = outcome.status === 'error';
  const content: CallToolResult['content'] = [];
  if (Array.isArray(result.content)) {
    // A remote MCP tool's result (src/tools/mcp/results.ts): text as text; files, links and
    // resources as their JSON (a file is a session file the model can name by file_id).
    for (const block of result.content as Record<string, unknown>[]) {
      content.push({ type: 'text', text: block.type === 'text' ? String(block.text ?? '') : JSON.stringify(block) });
    }
    if (result.truncated) content.push({ type: 'text', text: "[the result was cut at the service's size limit]" });
    if (isError && !content.length) content.push({ type: 'text', text: String(result.error ?? 'the tool failed') });
  } else if (isError) {
    const { error, ...rest } = result;
    content.push({ type: 'text', text: Object.keys(rest).length ? `${String(error)}\n${JSON.stringify(rest)}` : String(error) });
  } else {
    content.push({ type: 'text', text: JSON.stringify(result) });
  }
  // Structured content goes as a text block of its JSON, not as `structuredContent`: codex shows
  // a model only the structured part when there is one, and the text beside it would be lost.
  const structured = result.structured_content;
  if (structured && typeof structured === 'object') content.push({ type: 'text', text: JSON.stringify(structured) });
  return { content, isError };
}

const refused = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

async function callTool(caller: RelayCaller, name: string, input: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
  const tools = await relayToolbox(caller);
  if ((await tools.decide(name)) === 'ask') {
    return refused(
      `${name} needs a person's confirmation before it runs (the agent's tool policy says always_ask), and this engine cannot wait for one in the middle of a call: the tool is unavailable here. Tell the user; they can allow it in the agent's tool policy.`,
    );
  }
  const outcome = await tools.run({ id: `relay_${randomUUID()}`, name, input }, signal);
  if (outcome.attachments?.length) {
    // The files it produced, shown to clients as message parts (as hermes shows them).
    await commitEvents(caller.sessionId, [
      { type: 'agent.message', turn: caller.turn, fields: { messageId: newId('msg'), final: true, parts: outcome.attachments, text: '' } },
    ]);
  }
  return relayResult(outcome);
}

function relayServer(caller: RelayCaller): Server {
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the low-level server: tools come with JSON Schemas, not zod shapes
  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const specs = await (await relayToolbox(caller)).specs();
    const tools: Tool[] = specs.map((s) => ({
      name: s.name,
      description: s.description,
      inputSchema: { ...s.inputSchema, type: 'object' } as Tool['inputSchema'],
    }));
    return { tools };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const input = request.params.arguments && typeof request.params.arguments === 'object' ? request.params.arguments : {};
    try {
      return await callTool(caller, request.params.name, input, extra.signal);
    } catch (err) {
      logger.error({ err, sessionId: caller.sessionId, tool: request.params.name }, 'relayed tool call failed');
      return refused(`${request.params.name} failed in the service: ${(err as Error).message}`);
    }
  });
  return server;
}

function methodNotAllowed(res: http.ServerResponse): void {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    error: { code: -32000, message: 'Method not allowed: the relay is stateless (POST only, no server-initiated stream)' },
    id: null,
  });
  res.writeHead(405, { allow: 'POST', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

/** One HTTP request to `/gateway/mcp`, already authenticated as `caller`. */
export async function handleMcpRelay(req: http.IncomingMessage, res: http.ServerResponse, caller: RelayCaller): Promise<void> {
  if (req.method !== 'POST') return methodNotAllowed(res);
  const server = relayServer(caller);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  // The CLI went away (interrupt, killed): close, which aborts the running call's signal.
  res.on('close', () => {
    void transport.close().catch(() => undefined);
    void server.close().catch(() => undefined);
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
}
