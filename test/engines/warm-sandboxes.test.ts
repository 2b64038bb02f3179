// Sandboxes made ahead (src/runtime/warm-sandboxes.ts), over HTTP with the real opencode from npm
// in the jail and the fake provider behind the gateway: after an agent's first session, a spare
// sandbox with opencode's server running and warmed waits under a reserved session id; the
// agent's next session takes that id, its per-session instructions reach the already-running
// server, its turn is answered and metered as its own, the warm-up never reached the provider,
// the next spare is made; an agent with skills (listed by opencode once, at its server's first
// answer) does not take it; the service's stop removes the spares.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEngineServer } from '../helpers/cli-engines.js';
import type { TestServer } from '../helpers/server.js';
import type { FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitFor, waitForEvents } from '../helpers/sessions.js';
import { warmSandboxes } from '../../src/runtime/warm-sandboxes.js';
import { prisma } from '../../src/db/client.js';
import { sessionPolicy } from '../../src/egress/session-policy.js';
import { config } from '../../src/config.js';

const SKILL_MD = '---\nname: heron-facts\ndescription: Knows the herons of the lake (HDESC-3317).\n---\n\n# Herons\n\nThere are 7 herons.\n';

/** A test server with `agentType`'s CLI and the fake provider, for one describe block. */
function engineServerFor(agentType: 'opencode' | 'openclaw') {
  const ctx = {} as { s: TestServer; fake: FakeProvider };
  beforeAll(async () => {
    Object.assign(ctx, await startCliEngineServer(agentType));
  }, 900_000);
  afterAll(async () => {
    await ctx.s?.stop();
    await ctx.fake?.close();
  });
  return ctx;
}

/** An agent's first session answers once; then its spare is ready, with no session row, and the warm-up reached no provider. */
async function firstSessionThenSpare(
  ctx: { s: TestServer; fake: FakeProvider },
  agentType: string,
  timeoutMs: number,
): Promise<{ agent: { id: string }; spare: string }> {
  const { agent, session: first } = await readySession(ctx.s, { agentType, llm: 'claude-sonnet-4-5' });
  ctx.fake.enqueue({ kind: 'text', text: 'first answer' });
  await sendText(ctx.s, first.id, 'hello');
  await waitForEvents(ctx.s, first.id, 'session.status_idle', 1, timeoutMs);
  await waitFor(async () => warmSandboxes().spares().length === 1, timeoutMs, 'a ready spare');
  const [spare] = warmSandboxes().spares();
  expect(await prisma.session.findUnique({ where: { id: spare! } })).toBeNull();
  expect(ctx.fake.requests).toHaveLength(1); // the warm-up turns were refused by the gateway, not sent on
  return { agent, spare: spare! };
}

/** The agent's next session (with instructions naming `mark`) takes the spare's id; its first turn ends end_turn with the answer. */
async function takeSpareAndAnswer(ctx: { s: TestServer; fake: FakeProvider }, agentId: string, spare: string, mark: string): Promise<string> {
  const { s, fake } = ctx;
  const created = await s.api('POST', '/sessions', { body: { agent: agentId, instructions: [{ name: 'MOOD.md', content: `Speak like a heron (${mark}).` }] } });
  expect(created.status).toBe(201);
  const id = created.body.session.id as string;
  expect(id).toBe(spare);
  await waitFor(async () => (await s.api('GET', `/sessions/${id}`)).body.session.status === 'idle', 30_000, 'provisioned');
  fake.enqueue({ kind: 'text', text: 'warm answer' });
  await sendText(s, id, 'how many herons?');
  const events = await waitForEvents(s, id, 'session.status_idle', 1, 60_000);
  expect(events.at(-1), JSON.stringify(events.filter((e) => e.type === 'session.error'))).toMatchObject({ stop_reason: { type: 'end_turn' } });
  expect(events.filter((e) => e.type === 'agent.message' && e.final).map((e) => e.text)).toEqual(['warm answer']);
  return id;
}

describe("a spare opencode sandbox for the agent's next session", () => {
  const ctx = engineServerFor('opencode');

  it('is taken by the next session: its id, its files, its own metered turn; the warm-up never reached the provider', async () => {
    const { s, fake } = ctx;
    // The agent's first session started the spare; it is ready once its server is warm.
    const { agent, spare } = await firstSessionThenSpare(ctx, 'opencode', 180_000);
    // Written down as this process's spare (removed at a later start should the process be killed).
    const ledger = path.join(config().dataDir, 'spares', `${os.hostname()}-${process.pid}`);
    expect(fs.readdirSync(ledger)).toEqual([spare]);
    // What the egress remembers of the id from before its session existed (no rules) must not
    // outlive the take: the agent's egress secret applies to the session at once.
    expect((await sessionPolicy(spare)).headersFor('api.heron.test')).toEqual([]);
    expect(
      (await s.api('PUT', `/agents/${agent.id}/secrets/HERON`, { body: { value: 'heron-key', description: 'egress: api.heron.test' } })).status,
    ).toBeLessThan(300);

    const id = await takeSpareAndAnswer(ctx, agent.id, spare, 'HMOOD-4410');
    expect(fs.readdirSync(ledger)).not.toContain(id); // a session's now, no longer a spare

    // The server started before the session existed, yet its first request carries the
    // session's instructions (written at the turn, read by opencode at each prompt).
    expect(fake.requests).toHaveLength(2);
    expect(JSON.stringify(fake.requests[1]!.body)).toContain('HMOOD-4410');
    expect(JSON.stringify((await sessionPolicy(id)).headersFor('api.heron.test'))).toContain('Bearer heron-key');
    // Metered as this session's own turn.
    const usage = await prisma.modelUsage.findMany({ where: { sessionId: id } });
    expect(usage.length).toBe(1);

    // Taking it made the next spare.
    await waitFor(async () => warmSandboxes().spares().length === 1 && warmSandboxes().spares()[0] !== id, 120_000, 'the next spare');
  }, 600_000);

  it('an agent with skills does not take a spare: its server starts in its own sandbox and lists the skill', async () => {
    const { s, fake } = ctx;
    const [spare] = warmSandboxes().spares();
    expect(spare).toBeDefined();
    const skill = await s.api('POST', '/skills', { body: { files: [{ path: 'SKILL.md', content: SKILL_MD }] } });
    expect(skill.status, JSON.stringify(skill.body)).toBe(201);
    const { session } = await readySession(s, { agentType: 'opencode', llm: 'claude-sonnet-4-5', skills: [{ type: 'skill', skillId: skill.body.skill.id }] });
    expect(session.id).not.toBe(spare);
    expect(warmSandboxes().spares()).toEqual([spare]);
    fake.reset();
    fake.enqueue({ kind: 'text', text: 'seven' });
    await sendText(s, session.id, 'how many herons?');
    await waitForEvents(s, session.id, 'session.status_idle', 1, 180_000);
    expect(JSON.stringify(fake.requests[0]!.body)).toContain('HDESC-3317');
  }, 600_000);

  it("the service's stop removes the spares: no sandbox is left without its session", async () => {
    const spares = warmSandboxes().spares();
    expect(spares.length).toBe(1);
    await warmSandboxes().close();
    const dir = path.join(config().dataDir, 'sandboxes');
    for (const id of spares) expect(fs.existsSync(path.join(dir, id))).toBe(false);
    expect(warmSandboxes().spares()).toEqual([]);
  }, 60_000);
});

// OpenClaw's spare runs its Gateway (src/engines/cli/openclaw/gateway.ts). Its warm-up turns go
// to providers of their own with a key that is no credential: OpenClaw sets a refused provider's
// key aside for a minute, which must never be the one the session's turns use.
describe("a spare OpenClaw sandbox for the agent's next session", () => {
  const ctx = engineServerFor('openclaw');

  it("is taken by the next session, whose first turn is answered at once by the running Gateway with the session's instructions; the warm-up never reached the provider", async () => {
    const { s, fake } = ctx;
    // Its warm-up turns (one per provider) were refused by the gateway; no utility-model call either.
    const { agent, spare } = await firstSessionThenSpare(ctx, 'openclaw', 300_000);

    const id = await takeSpareAndAnswer(ctx, agent.id, spare, 'HMOOD-5521');
    expect(fake.requests).toHaveLength(2);
    expect(JSON.stringify(fake.requests[1]!.body)).toContain('HMOOD-5521');
    expect(await prisma.modelUsage.count({ where: { sessionId: id } })).toBe(1);

    // The next turn continues the same conversation on the same Gateway.
    fake.enqueue({ kind: 'text', text: 'still seven' });
    await sendText(s, id, 'and now?');
    const after = await waitForEvents(s, id, 'session.status_idle', 2, 60_000);
    expect(after.at(-1)).toMatchObject({ stop_reason: { type: 'end_turn' } });
    expect(JSON.stringify(fake.requests[2]!.body)).toContain('how many herons?');
    expect(fake.requests).toHaveLength(3);
  }, 900_000);

  it("a GPT agent's session on the next spare: the Gateway's turn goes over the OpenAI Responses route, runs exec in /workspace, and streams the same events", async () => {
    const { s, fake } = ctx;
    // After the test above the next spare is on its way; run alone, a first session asks for one.
    fake.reset();
    if (!(await prisma.session.count())) await firstSessionThenSpare(ctx, 'openclaw', 300_000);
    await waitFor(async () => warmSandboxes().spares().length === 1, 300_000, 'the next spare');
    const [spare] = warmSandboxes().spares();
    const { session } = await readySession(s, { agentType: 'openclaw', llm: 'gpt-5' });
    expect(session.id).toBe(spare); // a spare serves either provider's models: both were warmed
    fake.reset();
    fake.enqueue(
      { kind: 'tool_call', reasoning: 'A file, then.', name: 'exec', input: { command: 'echo from-gpt > by-gpt.txt' }, id: 'call_gpt_1', text: 'Writing it.' },
      { kind: 'text', text: 'by-gpt.txt is written.' },
    );
    await sendText(s, session.id, 'write by-gpt.txt');
    const events = await waitForEvents(s, session.id, 'session.status_idle', 1, 120_000);
    expect(events.at(-1), JSON.stringify(events.filter((e) => e.type === 'session.error'))).toMatchObject({ stop_reason: { type: 'end_turn' } });
    expect(fake.requests.map((r) => r.path)).toEqual(['/v1/responses', '/v1/responses']);
    expect(fake.requests[0]!.body.model).toBe('gpt-5');
    const use = events.find((e) => e.type === 'agent.tool_use');
    expect(use?.part).toMatchObject({ tool_name: 'exec', args: { command: 'echo from-gpt > by-gpt.txt' } });
    expect(events.find((e) => e.type === 'agent.tool_result')?.part).toMatchObject({ call_id: use.part.call_id, status: 'ok', result: { exit_code: 0 } });
    expect(events.filter((e) => e.type === 'agent.message' && e.final).map((e) => e.text)).toContain('by-gpt.txt is written.');
    expect(fs.readFileSync(path.join(config().dataDir, 'sandboxes', session.id, 'workspace', 'by-gpt.txt'), 'utf8')).toBe('from-gpt\n');
    expect(await prisma.modelUsage.count({ where: { sessionId: session.id } })).toBe(2);
  }, 600_000);
});
