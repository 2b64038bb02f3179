// The built-in demo model (`demo-echo`): listed and labelled as a demo, free, never a default,
// and a whole hermes turn on it streams a reply on a service with no provider key at all,
// recording zero cost and touching no wallet (src/gateway/demo.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { readySession, sendText, waitForEvents } from '../helpers/sessions.js';
import { prisma } from '../../src/db/client.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ anthropicApiKey: undefined, openaiApiKey: undefined });
});
afterAll(async () => {
  await s?.stop();
});

interface CatalogModel {
  id: string;
  provider: string;
  description: string | null;
  inputPerMillion: number;
  outputPerMillion: number;
  cacheReadPerMillion: number;
  cacheWritePerMillion: number;
}

describe('the demo model', () => {
  it("is a hermes model labelled as a demo with no cost, and no engine's default", async () => {
    const res = await s.gql<{ engines: { agentType: string; defaultModel: string; models: CatalogModel[] }[] }>(
      '{ engines { agentType defaultModel models { id provider description inputPerMillion outputPerMillion cacheReadPerMillion cacheWritePerMillion } } }',
    );
    const engines = res.body.data!.engines;
    const demo = engines.find((e) => e.agentType === 'hermes')!.models.find((m) => m.id === 'demo-echo');
    expect(demo).toMatchObject({ provider: 'demo', inputPerMillion: 0, outputPerMillion: 0, cacheReadPerMillion: 0, cacheWritePerMillion: 0 });
    expect(demo!.description).toMatch(/demo model/i);
    expect(demo!.description).toMatch(/costs nothing/);
    for (const e of engines) {
      expect(e.models.find((m) => m.id === e.defaultModel)?.provider).not.toBe('demo');
      if (e.agentType !== 'hermes') expect(e.models.map((m) => m.id)).not.toContain('demo-echo');
    }
  });

  it('is refused for an engine that does not list it (422 invalid_spec)', async () => {
    const res = await s.api('POST', '/agents', { body: { agentType: 'claude_code', llm: 'demo-echo' } });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.error.code).toBe('invalid_spec');
  });

  it.each(['platform', 'account'])('answers a turn with no provider key, streamed, at zero cost (%s billing)', async (modelBilling) => {
    const { session } = await readySession(s, { llm: 'demo-echo' }, { modelBilling });
    const universeId = (await prisma.session.findUniqueOrThrow({ where: { id: session.id } })).universeId;
    const before = await prisma.universe.findUniqueOrThrow({ where: { id: universeId } });

    expect((await sendText(s, session.id, 'hello demo')).status).toBe(202);
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(events.find((e) => e.type === 'session.error')).toBeUndefined();
    const messages = events.filter((e) => e.type === 'agent.message');
    const complete = messages.find((e) => e.final);
    expect(messages.filter((e) => !e.final).length).toBeGreaterThan(0);
    expect(complete.text).toBe('[demo model: no provider was called, nothing was charged] You said: hello demo');
    expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });

    const usage = await prisma.modelUsage.findMany({ where: { sessionId: session.id } });
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ provider: 'demo', model: 'demo-echo', costNanoUsd: 0n });
    const after = await prisma.universe.findUniqueOrThrow({ where: { id: universeId } });
    expect(after.balanceNanoUsd).toBe(before.balanceNanoUsd);
    expect(after.heldNanoUsd).toBe(before.heldNanoUsd);
    expect(await prisma.walletEntry.count({ where: { sessionId: session.id } })).toBe(0);
  });
});
