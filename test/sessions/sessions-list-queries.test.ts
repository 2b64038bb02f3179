// GET /v1/sessions costs a constant number of SQL statements however many sessions and
// resources there are (the spec's list carries every session's resources).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createAgent, countQueries } from '../helpers/agents.js';
import { prisma } from '../../src/db/client.js';
import { sessionViews } from '../../src/sessions/view.js';
import { newId } from '../../src/ids.js';

// The recovery pass also reads sessions: keep it out of the measured windows.
vi.hoisted(() => {
  process.env.RECOVERY_INTERVAL_MS = '3600000';
});

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
    id: newId('sess'),
    universeId,
    agentId,
    status: 'idle',
    agentType: 'hermes',
    llm: 'claude-sonnet-4-5',
    metadata: { n: 1 },
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
  it('loads 100 sessions with their resources in at most 3 SQL statements, as many as for 3', async () => {
    // Only statements naming the session tables are counted: the process's pollers run meanwhile.
    const sessionTables = /FROM\s+"?(\w+"?\.)?"?Session(Resource)?"?\s/i;
    await seed(3);
    const few = await countQueries(() => sessionViews({ universeId }), sessionTables);
    await seed(97);
    let views: Awaited<ReturnType<typeof sessionViews>> = [];
    const many = await countQueries(async () => {
      views = await sessionViews({ universeId });
    }, sessionTables);
    expect(views).toHaveLength(100);
    expect(views.every((v) => v.resources.length === 2)).toBe(true);
    expect(many).toBeLessThanOrEqual(3);
    expect(many).toBe(few);
  });

  it('over HTTP, 100 or 200 sessions: one statement reads the sessions, one all their resources', async () => {
    // Only statements naming the session tables are counted: the process's pollers run meanwhile.
    const sessionsRead = /FROM\s+"?(\w+"?\.)?"?Session"?\s/i;
    const resourcesRead = /FROM\s+"?(\w+"?\.)?"?SessionResource"?\s/i;
    for (const expected of [100, 200]) {
      if (expected === 200) await seed(100);
      let body: { sessions: { resources: unknown[] }[] } = { sessions: [] };
      let resources = 0;
      const sessions = await countQueries(async () => {
        resources = await countQueries(async () => {
          body = (await s.api('GET', '/sessions')).body;
        }, resourcesRead);
      }, sessionsRead);
      expect(body.sessions).toHaveLength(expected);
      expect(body.sessions.every((x) => x.resources.length === 2)).toBe(true);
      expect(resources).toBe(1);
      expect(sessions).toBe(1);
    }
  });
});
