// MCP tool call overhead (`npm run bench` includes it): a remote tool server (the SDK's server
// on loopback, answering at once) called by the service in real turns, against the same call
// made by a bare SDK client. The service's span is agent.tool_use → agent.tool_result (their
// `at` stamps: storing the call's event, the call itself through the outbound guard, the
// result's conversion); the bare span is the client's own round trip to the same server.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestServer } from '../test/helpers/server.js';
import type { FakeProvider } from '../test/fake-provider/server.js';
import { startFakeMcpServer } from '../test/fake-vendors/mcp-server.js';
import { prisma } from '../src/db/client.js';
import { followSession } from '../src/events/hub.js';

const CALLS = Number(process.env.BENCH_MCP_CALLS || 100);
const WARMUP = 10;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (n: number) => n.toFixed(2);

/** Resolves at each session.status_idle of the session (read from the live feed, no polling). */
async function idleSignals(sessionId: string) {
  const seq = (await prisma.session.findUniqueOrThrow({ where: { id: sessionId } })).eventSeq;
  const feed = followSession(sessionId, seq);
  let seen = 0;
  const pending: { waiter: { count: number; resolve: () => void } | null } = { waiter: null };
  void (async () => {
    for (;;) {
      const next = await feed.next();
      if (next.done) return;
      if (next.value.event.type !== 'session.status_idle') continue;
      seen++;
      if (pending.waiter && seen >= pending.waiter.count) pending.waiter.resolve();
    }
  })();
  return {
    wait: (count: number) => new Promise<void>((resolve) => (seen >= count ? resolve() : void (pending.waiter = { count, resolve }))),
    stop: () => void feed.return?.(),
  };
}

export async function mcpBench(s: TestServer, fake: FakeProvider): Promise<[string, string][]> {
  process.env.OUTBOUND_ALLOW = [process.env.OUTBOUND_ALLOW, '127.0.0.0/8'].filter(Boolean).join(',');
  const mcp = await startFakeMcpServer();
  try {
    // The server's own answer, seen by a bare SDK client (same transport, no service), and the
    // same call made by the service inside a turn, alternated so both meet the same machine load.
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcp.url)));
    const agent = (await s.api('POST', '/agents', { body: { mcpServers: [{ name: 'bench', url: mcp.url, tools: { include: ['add'] } }] } })).body.agent;
    const session = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body.session;
    while ((await s.api('GET', `/sessions/${session.id}`)).body.session.status !== 'idle') await new Promise((r) => setTimeout(r, 20));
    const idle = await idleSignals(session.id);
    const bare: number[] = [];
    for (let i = 0; i < CALLS + WARMUP; i++) {
      const t0 = performance.now();
      await client.callTool({ name: 'add', arguments: { a: i, b: 1 } });
      if (i >= WARMUP) bare.push(performance.now() - t0);
      fake.enqueue({ kind: 'tool_call', name: 'mcp__bench__add', input: { a: i, b: 1 } }, { kind: 'text', text: 'ok' });
      await s.api('POST', `/sessions/${session.id}/events`, { body: { events: [{ type: 'user.message', content: [{ type: 'text', text: 'add' }] }] } });
      await idle.wait(i + 1);
    }
    idle.stop();
    await client.close();
    const rows = await prisma.sessionEvent.findMany({
      where: { sessionId: session.id, type: { in: ['agent.tool_use', 'agent.tool_result'] } },
      orderBy: { seq: 'asc' },
      select: { payload: true },
    });
    const at = (p: unknown) => Date.parse((p as { at: string }).at);
    const spans: number[] = [];
    for (let i = 0; i + 1 < rows.length; i += 2) spans.push(at(rows[i + 1]!.payload) - at(rows[i]!.payload));
    const service = spans.slice(WARMUP);
    const added = pct(service, 50) - pct(bare, 50);
    return [
      [
        "MCP tool call, bare SDK client → server (the server's own latency)",
        `p50 ${ms(pct(bare, 50))} ms, p99 ${ms(pct(bare, 99))} ms (${CALLS} calls after ${WARMUP} warm-up)`,
      ],
      [
        'MCP tool call through the service (agent.tool_use → agent.tool_result)',
        `p50 ${ms(pct(service, 50))} ms, p99 ${ms(pct(service, 99))} ms (${service.length} calls; event stamps have 1 ms resolution)`,
      ],
      ['MCP overhead added by the service at p50 (target < 5 ms)', `${ms(added)} ms — ${added < 5 ? 'met' : 'not met'}`],
    ];
  } finally {
    await mcp.close();
  }
}
