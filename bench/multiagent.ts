// Multiagent (issue #32): the delegation overhead and the parallelism of threads, on hermes with
// the fake provider. Measured side by side in the same run:
//  - coordinator's `delegate` tool call (its agent.tool_use stored) → the specialist's first model
//    request at the provider, p50/p99 (target < 50 ms), beside an ordinary session's user.message
//    stored → its first model request (what a turn's start costs anyway);
//  - two specialists answering in 1 s each, started together: delegate → wait_threads' result,
//    wall (target < 1.3 s, not 2 s), beside one such specialist alone.
import type { TestServer } from '../test/helpers/server.js';
import type { FakeProvider, FakeStep } from '../test/fake-provider/server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const fmt = (n: number) => n.toFixed(n >= 100 ? 0 : 1);

async function historyOf(s: TestServer, path: string): Promise<any[]> {
  return (await s.api('GET', `${path}?limit=1000`)).body.events;
}

async function idleCount(s: TestServer, sessionId: string, n: number): Promise<any[]> {
  for (let i = 0; i < 2000; i++) {
    const events = await historyOf(s, `/sessions/${sessionId}/events`);
    if (events.filter((e) => e.type === 'session.status_idle').length >= n) return events;
    await sleep(10);
  }
  throw new Error('bench: the turn never ended');
}

/** The arrival of the first request at the provider after `from` whose system prompt holds `marker`. */
function arrivalAfter(fake: FakeProvider, marker: string, from: number): number {
  for (let i = 0; i < fake.requests.length; i++)
    if (fake.arrivals[i]! >= from && JSON.stringify(fake.requests[i]!.body?.system ?? '').includes(marker)) return fake.arrivals[i]!;
  return Number.NaN;
}

export async function multiagentBench(s: TestServer, fake: FakeProvider): Promise<[string, string][]> {
  const api = async (method: string, path: string, body?: unknown) => (await s.api(method, path, body === undefined ? {} : { body })).body;
  const specialist = (await api('POST', '/agents', { prompt: 'BENCH-SPECIALIST-A' })).agent;
  const second = (await api('POST', '/agents', { prompt: 'BENCH-SPECIALIST-B' })).agent;
  const coordinator = (
    await api('POST', '/agents', {
      prompt: 'BENCH-COORDINATOR',
      multiagent: {
        type: 'coordinator',
        agents: [
          { type: 'agent', id: specialist.id, name: 'a' },
          { type: 'agent', id: second.id, name: 'b' },
        ],
      },
    })
  ).agent;
  const plain = (await api('POST', '/agents', { prompt: 'BENCH-PLAIN' })).agent;
  const ready = async (agentId: string) => {
    const session = (await api('POST', '/sessions', { agent: agentId })).session;
    while ((await api('GET', `/sessions/${session.id}`)).session.status !== 'idle') await sleep(20);
    return session.id as string;
  };
  const say = (id: string, text: string) => api('POST', `/sessions/${id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });

  // 1. delegation overhead vs a turn's start
  const N = Number(process.env.BENCH_MULTIAGENT_RUNS || 20);
  const delegation: number[] = [];
  const turnStart: number[] = [];
  const coord = await ready(coordinator.id);
  const single = await ready(plain.id);
  for (let i = 0; i < N; i++) {
    fake.enqueueFor(
      'BENCH-COORDINATOR',
      { kind: 'tool_call', name: 'delegate', id: `toolu_d${i}`, input: { agent: 'a', message: `task ${i}` } },
      { kind: 'tool_call', name: 'wait_threads', id: `toolu_w${i}`, input: {} },
      { kind: 'text', text: 'done' },
    );
    fake.enqueueFor('BENCH-SPECIALIST-A', { kind: 'text', text: 'ok' });
    await say(coord, `go ${i}`);
    const events = await idleCount(s, coord, i + 1);
    const call = events.find((e) => e.type === 'agent.tool_use' && e.part.call_id === `toolu_d${i}`);
    delegation.push(arrivalAfter(fake, 'BENCH-SPECIALIST-A', Date.parse(call.at)) - Date.parse(call.at));

    fake.enqueueFor('BENCH-PLAIN', { kind: 'text', text: 'ok' });
    await say(single, `plain ${i}`);
    const plainEvents = await idleCount(s, single, i + 1);
    const input = plainEvents.filter((e) => e.type === 'user.message').at(-1);
    turnStart.push(arrivalAfter(fake, 'BENCH-PLAIN', Date.parse(input.at)) - Date.parse(input.at));
  }

  // 2. two 1 s specialists in parallel vs one alone
  const oneSecond: FakeStep = { kind: 'text', text: '0123456789', chunks: 10, delayMs: 100 };
  const wall = async (agents: string[], round: number): Promise<number> => {
    const [first, ...rest] = agents.map((a, k) => ({ name: 'delegate', id: `toolu_p${round}_${k}`, input: { agent: a, message: 'one second of work' } }));
    fake.enqueueFor(
      'BENCH-COORDINATOR',
      { kind: 'tool_call', ...first!, more: rest },
      { kind: 'tool_call', name: 'wait_threads', id: `toolu_pw${round}`, input: {} },
      { kind: 'text', text: 'done' },
    );
    for (const a of agents) fake.enqueueFor(a === 'a' ? 'BENCH-SPECIALIST-A' : 'BENCH-SPECIALIST-B', oneSecond);
    const before = (await historyOf(s, `/sessions/${coord}/events`)).filter((e) => e.type === 'session.status_idle').length;
    await say(coord, `parallel ${round}`);
    const events = await idleCount(s, coord, before + 1);
    const start = Date.parse(events.find((e) => e.type === 'agent.tool_use' && e.part.call_id === `toolu_p${round}_0`).at);
    const end = Date.parse(events.find((e) => e.type === 'agent.tool_result' && e.part.call_id === `toolu_pw${round}`).at);
    return end - start;
  };
  const alone: number[] = [];
  const both: number[] = [];
  for (let r = 0; r < 3; r++) {
    alone.push(await wall(['a'], r * 2));
    both.push(await wall(['a', 'b'], r * 2 + 1));
  }
  return [
    [
      'multiagent: delegate tool call → specialist first model request (hermes)',
      `p50 ${fmt(pct(delegation, 50))} ms, p99 ${fmt(pct(delegation, 99))} ms (n=${N}); baseline user.message → first model request p50 ${fmt(pct(turnStart, 50))} ms`,
    ],
    [
      'multiagent: two parallel 1 s specialists, delegate → wait_threads result',
      `median ${fmt(pct(both, 50))} ms wall; one 1 s specialist alone ${fmt(pct(alone, 50))} ms`,
    ],
  ];
}
