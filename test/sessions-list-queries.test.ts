// GET /v1/sessions costs a constant number of SQL statements however many sessions and
// resources there are (the spec's list carries every session's resources).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers/server.js';
import { createAgent, countQueries } from './helpers/agents.js';
import { prisma } from '../src/db/client.js';
import { sessionViews } from '../src/sessions/view.js';
import { newId } from '../src/ids.js';

let s: TestServer;
let universeId: string;
let agentId: string;

beforeAll(async () => {
  s = await startTestServer();
  const agent = await createAgent(s);
  agentId = agent.id;
  universeId = (await prisma.agent.findUniqueOrThrow({ where: { id: agentId } })).universeId;
});
afterAll(async () => s?.stop());

/** Sessions written straight to the store, each with two resources (creating is not under test). */
async function seed(count: number): Promise<void> {
  const sessions = Array.from({ length: count }, () => ({
    id: newId('sess'), universeId, agentId, status: 'idle', agentType: 'hermes', llm: 'claude-sonnet-4-5', metadata: { n: 1 },
  }));
  await prisma.session.createMany({ data: sessions });
  await prisma.sessionResource.createMany({
    data: sessions.flatMap((x) => [
      { id: newId('sesrsc'), sessionId: x.id, type: 'file', fileId: newId('file'), mountPath: '/workspace/a.csv' },
      { id: newId('sesrsc'), sessionId: x.id, type: 'github_repository', url: 'https://github.com/o/r', mountPath: '/workspace/r' },
    ]),
  });
}

describe('sessions list', () => {
  it('loads 100 sessions with their resources in at most 3 SQL statements', async () => {
    await seed(3);
    const few = await countQueries(() => sessionViews({ universeId }));
    await seed(97);
    let views: Awaited<ReturnType<typeof sessionViews>> = [];
    const many = await countQueries(async () => { views = await sessionViews({ universeId }); });
    expect(views).toHaveLength(100);
    expect(views.every((v) => v.resources.length === 2)).toBe(true);
    expect(many).toBeLessThanOrEqual(3);
    expect(many).toBe(few);
  });

  it('over HTTP the same answer costs the same statements for 100 sessions as for 100 more', async () => {
    await s.api('GET', '/sessions'); // token lookup cached, warm
    let first: { sessions: unknown[] } = { sessions: [] };
    const a = await countQueries(async () => { first = (await s.api('GET', '/sessions')).body; });
    await seed(100);
    await s.api('GET', '/sessions'); // the token lookup is cached for 5 s: warm it again after seeding
    let second: { sessions: unknown[] } = { sessions: [] };
    const b = await countQueries(async () => { second = (await s.api('GET', '/sessions')).body; });
    expect(first.sessions).toHaveLength(100);
    expect(second.sessions).toHaveLength(200);
    expect(b).toBe(a);
  });
});
