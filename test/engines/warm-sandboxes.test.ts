// Sandboxes made ahead (src/runtime/warm-sandboxes.ts), over HTTP with the real opencode from npm
// in the jail and the fake provider behind the gateway: after an agent's first session, a spare
// sandbox with opencode's server running and warmed waits under a reserved session id; the
// agent's next session takes that id, its per-session instructions reach the already-running
// server, its turn is answered and metered as its own, the warm-up never reached the provider,
// the next spare is made; an agent with skills (listed by opencode once, at its server's first
// answer) does not take it; the service's stop removes the spares.
import fs from 'node:fs';
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

describe('a spare opencode sandbox for the agent\'s next session', () => {
  let s: TestServer;
  let fake: FakeProvider;
  beforeAll(async () => {
    ({ s, fake } = await startCliEngineServer('opencode'));
  }, 900_000);
  afterAll(async () => {
    await s?.stop();
    await fake?.close();
  });

  it('is taken by the next session: its id, its files, its own metered turn; the warm-up never reached the provider', async () => {
    const { agent, session: first } = await readySession(s, { agentType: 'opencode', llm: 'claude-sonnet-4-5' });
    fake.enqueue({ kind: 'text', text: 'first answer' });
    await sendText(s, first.id, 'hello');
    await waitForEvents(s, first.id, 'session.status_idle', 1, 180_000);

    // The agent's first session started the spare; it is ready once its server is warm.
    await waitFor(async () => warmSandboxes().spares().length === 1, 120_000, 'a ready spare');
    const [spare] = warmSandboxes().spares();
    expect(await prisma.session.findUnique({ where: { id: spare! } })).toBeNull();
    expect(fake.requests).toHaveLength(1); // the warm-up turns were refused by the gateway, not sent on
    // What the egress remembers of the id from before its session existed (no rules) must not
    // outlive the take: the agent's egress secret applies to the session at once.
    expect((await sessionPolicy(spare!)).headersFor('api.heron.test')).toEqual([]);
    expect((await s.api('PUT', `/agents/${agent.id}/secrets/HERON`, { body: { value: 'heron-key', description: 'egress: api.heron.test' } })).status).toBeLessThan(300);

    const created = await s.api('POST', '/sessions', { body: { agent: agent.id, instructions: [{ name: 'MOOD.md', content: 'Speak like a heron (HMOOD-4410).' }] } });
    expect(created.status).toBe(201);
    const id = created.body.session.id as string;
    expect(id).toBe(spare);
    await waitFor(async () => (await s.api('GET', `/sessions/${id}`)).body.session.status === 'idle', 30_000, 'provisioned');
    fake.enqueue({ kind: 'text', text: 'warm answer' });
    await sendText(s, id, 'how many herons?');
    const events = await waitForEvents(s, id, 'session.status_idle', 1, 60_000);
    expect(events.at(-1), JSON.stringify(events.filter((e) => e.type === 'session.error'))).toMatchObject({ stop_reason: { type: 'end_turn' } });
    expect(events.filter((e) => e.type === 'agent.message' && e.final).map((e) => e.text)).toEqual(['warm answer']);

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

  it('the service\'s stop removes the spares: no sandbox is left without its session', async () => {
    const spares = warmSandboxes().spares();
    expect(spares.length).toBe(1);
    await warmSandboxes().close();
    const dir = path.join(config().dataDir, 'sandboxes');
    for (const id of spares) expect(fs.existsSync(path.join(dir, id))).toBe(false);
    expect(warmSandboxes().spares()).toEqual([]);
  }, 60_000);
});
