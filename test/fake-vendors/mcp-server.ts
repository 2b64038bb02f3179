// A real MCP server for the tests, built with the official SDK (McpServer + the Streamable HTTP
// transport, stateful sessions) on a real port; `/sse` serves the same tools over the older
// HTTP+SSE transport only (a POST there answers 405, as such servers do). Its tools: search, add, fail (a tool error),
// explode (a thrown error), picture (an image result), slow (waits), big (a large answer).
// It records the headers of every request so tests can check the runtime authentication.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';

// A 1×1 transparent PNG.
export const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

export interface FakeMcpServer {
  url: string;
  /** The same tools over the HTTP+SSE transport only. */
  sseUrl: string;
  /** Headers of every HTTP request received, in order. */
  requests: { method: string; headers: http.IncomingHttpHeaders }[];
  /** Tool calls received: name and arguments. */
  calls: { name: string; args: Record<string, unknown> }[];
  /** Added latency of every tool call (ms). */
  delayMs: number;
  /** Forget every MCP session (as a restarted server would). */
  forgetSessions(): void;
  close(): Promise<void>;
}

function buildServer(record: FakeMcpServer): McpServer {
  const server = new McpServer({ name: 'fake-docs', version: '1.0.0' });
  const called = async (name: string, args: Record<string, unknown>) => {
    record.calls.push({ name, args });
    if (record.delayMs) await new Promise((r) => setTimeout(r, record.delayMs));
  };
  server.registerTool('search', { description: 'Search the documentation', inputSchema: { query: z.string() } }, async ({ query }) => {
    await called('search', { query });
    return { content: [{ type: 'text', text: `3 pages match "${query}"` }], structuredContent: { hits: 3 } };
  });
  server.registerTool('add', { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => {
    await called('add', { a, b });
    return { content: [{ type: 'text', text: String(a + b) }] };
  });
  server.registerTool('fail', { description: 'Always reports an error', inputSchema: {} }, async () => {
    await called('fail', {});
    return { isError: true, content: [{ type: 'text', text: 'the index is being rebuilt' }] };
  });
  server.registerTool('explode', { description: 'Throws', inputSchema: {} }, async () => {
    await called('explode', {});
    throw new Error('kaboom');
  });
  server.registerTool('picture', { description: 'Returns an image', inputSchema: {} }, async () => {
    await called('picture', {});
    return {
      content: [
        { type: 'text', text: 'here it is' },
        { type: 'image', data: TINY_PNG.toString('base64'), mimeType: 'image/png' },
      ],
    };
  });
  server.registerTool('slow', { description: 'Waits a while', inputSchema: { ms: z.number() } }, async ({ ms }) => {
    await called('slow', { ms });
    await new Promise((r) => setTimeout(r, ms));
    return { content: [{ type: 'text', text: 'done' }] };
  });
  server.registerTool('big', { description: 'A large answer', inputSchema: { chars: z.number() } }, async ({ chars }) => {
    await called('big', { chars });
    return { content: [{ type: 'text', text: 'x'.repeat(chars) }] };
  });
  return server;
}

export async function startFakeMcpServer(): Promise<FakeMcpServer> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const sseTransports = new Map<string, SSEServerTransport>();
  const record = { requests: [], calls: [], delayMs: 0 } as unknown as FakeMcpServer;

  const httpServer = http.createServer(async (req, res) => {
    record.requests.push({ method: req.method ?? '', headers: req.headers });
    if (req.url === '/sse') {
      if (req.method !== 'GET') return void res.writeHead(405, { allow: 'GET' }).end();
      const sse = new SSEServerTransport('/messages', res);
      sseTransports.set(sse.sessionId, sse);
      res.on('close', () => sseTransports.delete(sse.sessionId));
      await buildServer(record).connect(sse);
      return;
    }
    if (req.url?.startsWith('/messages')) {
      const sse = sseTransports.get(new URL(req.url, 'http://x').searchParams.get('sessionId') ?? '');
      if (!sse) return void res.writeHead(404).end();
      await sse.handlePostMessage(req, res);
      return;
    }
    if (!req.url?.startsWith('/mcp')) return void res.writeHead(404).end();
    const sessionId = req.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (typeof sessionId === 'string') {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void transports.set(id, created),
      });
      created.onclose = () => {
        if (created.sessionId) transports.delete(created.sessionId);
      };
      await buildServer(record).connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;
  return Object.assign(record, {
    url: `http://127.0.0.1:${port}/mcp`,
    sseUrl: `http://127.0.0.1:${port}/sse`,
    forgetSessions: () => transports.clear(),
    async close() {
      for (const t of [...transports.values(), ...sseTransports.values()]) await t.close().catch(() => undefined);
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  });
}
