// Outcome evaluation overhead (issue #33), the fake provider answering at once: from the agent's
// turn end (its final agent.message) to outcome.evaluation_started, and from the grader's verdict
// (outcome.evaluation_ended) to the revision turn's first frame (its session.status_running);
// beside the same machinery without an outcome: a plain turn's final agent.message → its
// session.status_idle. Times are the stored events' own `at` (millisecond precision). Targets:
// p50 < 50 ms each.
import type { TestServer } from '../test/helpers/server.js';
import type { FakeProvider } from '../test/fake-provider/server.js';

const SAMPLES = Number(process.env.BENCH_OUTCOME_SAMPLES || 30);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const t = (e: { at: string }) => Date.parse(e.at);
const lastIndex = (xs: any[], f: (e: any) => boolean) => {
  for (let i = xs.length - 1; i >= 0; i--) if (f(xs[i])) return i;
  return -1;
};
const last = (xs: any[], f: (e: any) => boolean) => xs[lastIndex(xs, f)];

async function events(s: TestServer, sessionId: string): Promise<any[]> {
  return (await s.api('GET', `/sessions/${sessionId}/events?limit=1000`)).body.events;
}

async function untilIdle(s: TestServer, sessionId: string, idles: number): Promise<any[]> {
  for (;;) {
    const ev = await events(s, sessionId);
    if (ev.filter((e) => e.type === 'session.status_idle').length >= idles) return ev;
    await sleep(10);
  }
}

export async function outcomeBench(s: TestServer, fake: FakeProvider): Promise<[string, string][]> {
  fake.reset();
  const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
  const make = async () => {
    const session = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body.session;
    while ((await s.api('GET', `/sessions/${session.id}`)).body.session.status !== 'idle') await sleep(20);
    return session.id as string;
  };
  const graded = await make();
  const plain = await make();
  const toStart: number[] = [];
  const toRevision: number[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    // With an outcome: needs_revision then satisfied (two agent turns, two evaluations).
    await s.api('POST', `/sessions/${graded}/events`, {
      body: { events: [{ type: 'user.define_outcome', description: 'bench', rubric: `- sample ${i}\ngrader-script: fail pass`, max_iterations: 2 }] },
    });
    const ev = (await untilIdle(s, graded, i + 1)).slice(-30);
    const started = lastIndex(ev, (e) => e.type === 'outcome.evaluation_started' && e.iteration === 1);
    const lastReply = last(ev.slice(0, started), (e) => e.type === 'agent.message' && e.final);
    toStart.push(t(ev[started]) - t(lastReply));
    const ended = lastIndex(ev, (e) => e.type === 'outcome.evaluation_ended' && e.iteration === 1);
    const running = ev.slice(ended).find((e) => e.type === 'session.status_running');
    toRevision.push(t(running) - t(ev[ended]));
    // Without: a plain turn's end to its idle event.
    await s.api('POST', `/sessions/${plain}/events`, { body: { events: [{ type: 'user.message', content: [{ type: 'text', text: `plain ${i}` }] }] } });
    const pv = (await untilIdle(s, plain, i + 1)).slice(-10);
    const idle = last(pv, (e) => e.type === 'session.status_idle');
    const reply = last(pv, (e) => e.type === 'agent.message' && e.final);
    baseline.push(t(idle) - t(reply));
  }
  const row = (xs: number[]) => `p50 ${pct(xs, 50)} ms, p99 ${pct(xs, 99)} ms (${xs.length} samples)`;
  return [
    ['outcome: agent turn end → outcome.evaluation_started (target p50 < 50 ms)', row(toStart)],
    ['outcome: grader verdict → revision turn first frame (target p50 < 50 ms)', row(toRevision)],
    ['baseline: plain turn end → session.status_idle', row(baseline)],
  ];
}
