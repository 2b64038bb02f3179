// One MCP client connection to a remote tool server, made by the service (never the sandbox):
// Streamable HTTP first, the older HTTP+SSE transport when the server does not speak it. Every
// request goes through the outbound guard (the pinned lookup refuses internal addresses unless
// OUTBOUND_ALLOW permits them) and carries the server's runtime authentication headers; answers
// to POSTs are capped in size so one server cannot exhaust the service's memory.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { guardedFetch } from '../../net/outbound-guard.js';

export type McpTransportKind = 'streamable_http' | 'sse';

export interface McpConnection {
  client: Client;
  transport: McpTransportKind;
  close(): Promise<void>;
}

export class ResponseTooLargeError extends Error {
  constructor(limit: number) {
    super(`the tool server's answer exceeded ${limit} bytes`);
    this.name = 'ResponseTooLargeError';
  }
}

/** A body that errors once more than `limit` bytes went through. */
function capped(body: ReadableStream<Uint8Array>, limit: number): ReadableStream<Uint8Array> {
  let seen = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > limit) controller.error(new ResponseTooLargeError(limit));
        else controller.enqueue(chunk);
      },
    }),
  );
}

/**
 * fetch through the outbound guard; answers to POSTs (the tool results) capped at `maxBytes`.
 * `listen: false` answers the Streamable HTTP client's optional GET stream (server-initiated
 * messages, which the service does not use) with 405 at once, as a server without one would,
 * so an idle session holds no open request to the server.
 */
export function guardedMcpFetch(maxBytes: number, opts: { listen: boolean }): FetchLike {
  return async (url, init) => {
    if (!opts.listen && (init?.method ?? 'GET').toUpperCase() === 'GET') return new Response(null, { status: 405, statusText: 'Method Not Allowed' });
    const res = (await guardedFetch(url, init as Parameters<typeof guardedFetch>[1])) as unknown as Response;
    if ((init?.method ?? 'GET').toUpperCase() !== 'POST' || !res.body) return res;
    return new Response(capped(res.body, maxBytes), { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

export interface ConnectOptions {
  headers: Record<string, string>;
  timeoutMs: number;
  maxResponseBytes: number;
  signal?: AbortSignal;
}

const CLIENT_INFO = { name: 'agent-service', version: '1.0.0' };

async function tryConnect(transport: Transport, opts: ConnectOptions): Promise<Client> {
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  try {
    await client.connect(transport, { timeout: opts.timeoutMs, signal: opts.signal });
    return client;
  } catch (err) {
    await client.close().catch(() => undefined);
    throw err;
  }
}

/**
 * Connects and initializes. A server that refuses the Streamable HTTP handshake (an HTTP 4xx
 * such as 404 or 405, as servers of the 2024-11-05 protocol answer a POST) is retried with the
 * HTTP+SSE transport; any other failure is the server's answer.
 */
export async function connectMcp(url: string, opts: ConnectOptions): Promise<McpConnection> {
  const requestInit = { headers: opts.headers };
  try {
    const fetch = guardedMcpFetch(opts.maxResponseBytes, { listen: false });
    const client = await tryConnect(new StreamableHTTPClientTransport(new URL(url), { fetch, requestInit }), opts);
    return { client, transport: 'streamable_http', close: () => client.close() };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (!(typeof code === 'number' && code >= 400 && code < 500 && code !== 401 && code !== 403)) throw err;
  }
  const fetch = guardedMcpFetch(opts.maxResponseBytes, { listen: true });
  const client = await tryConnect(new SSEClientTransport(new URL(url), { fetch, requestInit }), opts);
  return { client, transport: 'sse', close: () => client.close() };
}
