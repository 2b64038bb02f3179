// The agent's default session (src/sessions/default-session.ts): the session verbs given an
// agent id act on it. It is the first session until the user chooses another live one (PATCH
// /agents/{id} defaultSessionId, also through GraphQL); archived or deleted, the agent's newest
// live session takes over (null when none is left, and the next session created takes it);
// a default left on an archived session by older data is repaired when next resolved.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type ApiResponse } from '../helpers/server.js';
import { prisma } from '../../src/db/client.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

const expectError = (res: ApiResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
};
async function newAgent() {
  return (await s.api('POST', '/agents', { body: {} })).body.agent;
}
async function newSession(agentId: string): Promise<string> {
  const res = await s.api('POST', '/sessions', { body: { agent: agentId } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const id = res.body.session.id;
  // Archive and delete need it out of provisioning.
  for (let i = 0; i < 400 && (await s.api('GET', `/sessions/${id}`)).body.session.status === 'provisioning'; i++) await new Promise((r) => setTimeout(r, 25));
  return id;
}
const defaultOf = async (agentId: string) => (await s.api('GET', `/agents/${agentId}`)).body.agent.defaultSessionId;
const byAgent = async (agentId: string) => s.api('GET', `/sessions/${agentId}`);
async function flags(agentId: string): Promise<Record<string, boolean>> {
  const list = (await s.api('GET', `/sessions?agent=${agentId}`)).body.sessions as { id: string; default: boolean }[];
  return Object.fromEntries(list.map((x) => [x.id, x.default]));
}

describe('the default session', () => {
  it('is the first session; a later one does not take over while it is live', async () => {
    const agent = await newAgent();
    expect(agent.defaultSessionId).toBeNull();
    expectError(await byAgent(agent.id), 404, 'not_found');
    const first = await newSession(agent.id);
    const second = await newSession(agent.id);
    expect(await defaultOf(agent.id)).toBe(first);
    expect((await byAgent(agent.id)).body.session.id).toBe(first);
    expect(await flags(agent.id)).toEqual({ [first]: true, [second]: false });
  });

  it('the user chooses it with PATCH /agents/{id} (a live session of this agent only); version bumps', async () => {
    const agent = await newAgent();
    const other = await newAgent();
    const first = await newSession(agent.id);
    const second = await newSession(agent.id);
    const foreign = await newSession(other.id);
    const version = (await s.api('GET', `/agents/${agent.id}`)).body.agent.version;
    const chosen = await s.api('PATCH', `/agents/${agent.id}`, { body: { defaultSessionId: second } });
    expect(chosen.status, JSON.stringify(chosen.body)).toBe(200);
    expect(chosen.body.agent).toMatchObject({ defaultSessionId: second, version: version + 1 });
    expect((await byAgent(agent.id)).body.session.id).toBe(second);
    expect((await s.api('PATCH', `/sessions/${agent.id}`, { body: { title: 'the chosen one' } })).body.session).toMatchObject({
      id: second,
      title: 'the chosen one',
    });
    expect(await flags(agent.id)).toEqual({ [first]: false, [second]: true });

    expectError(await s.api('PATCH', `/agents/${agent.id}`, { body: { defaultSessionId: foreign } }), 400, 'invalid_request');
    expectError(await s.api('PATCH', `/agents/${agent.id}`, { body: { defaultSessionId: 'sess_unknown' } }), 400, 'invalid_request');
    expectError(await s.api('PATCH', `/agents/${agent.id}`, { body: { defaultSessionId: '' } }), 400, 'invalid_request');
    expectError(await s.api('PATCH', `/agents/${agent.id}`, { body: { defaultSessionId: null } }), 400, 'invalid_request');
    await s.api('POST', `/sessions/${first}/archive`);
    const archived = await s.api('PATCH', `/agents/${agent.id}`, { body: { defaultSessionId: first } });
    expectError(archived, 400, 'invalid_request');
    expect(archived.body.error.message).toMatch(/archived/);
    expect(await defaultOf(agent.id)).toBe(second);
  });

  it('archived or deleted, the newest live session takes over; with none left it is null and the next session takes it', async () => {
    const agent = await newAgent();
    const oldest = await newSession(agent.id);
    const middle = await newSession(agent.id);
    const newest = await newSession(agent.id);
    expect(await defaultOf(agent.id)).toBe(oldest);
    // Archived: not session_archived by agent id, but the newest live session.
    expect((await s.api('POST', `/sessions/${agent.id}/archive`)).body.session.id).toBe(oldest);
    expect(await defaultOf(agent.id)).toBe(newest);
    expect((await byAgent(agent.id)).body.session.id).toBe(newest);
    expect(await flags(agent.id)).toEqual({ [oldest]: false, [middle]: false, [newest]: true });
    // Deleted: not 404, but the newest live one left.
    expect((await s.api('DELETE', `/sessions/${agent.id}`)).status).toBe(200);
    expect(await defaultOf(agent.id)).toBe(middle);
    expect((await byAgent(agent.id)).body.session.id).toBe(middle);
    // An archived session other than the default changes nothing.
    const spare = await newSession(agent.id);
    await s.api('POST', `/sessions/${spare}/archive`);
    expect(await defaultOf(agent.id)).toBe(middle);
    // The last live one archived: no default, agent-id verbs are 404 until a session is created.
    await s.api('POST', `/sessions/${middle}/archive`);
    expect(await defaultOf(agent.id)).toBeNull();
    const none = await byAgent(agent.id);
    expectError(none, 404, 'not_found');
    expect(none.body.error.message).toMatch(/no live session/);
    const fresh = await newSession(agent.id);
    expect(await defaultOf(agent.id)).toBe(fresh);
  });

  it('a default left on an archived session (older data) is repaired when the agent id is next used', async () => {
    const agent = await newAgent();
    const first = await newSession(agent.id);
    const second = await newSession(agent.id);
    await s.api('POST', `/sessions/${second}/archive`);
    // As an earlier version left it: the default on a session archived after it.
    await s.api('POST', `/sessions/${first}/archive`);
    const third = await newSession(agent.id);
    await prisma.agent.update({ where: { id: agent.id }, data: { defaultSessionId: first } });
    expect((await byAgent(agent.id)).body.session.id).toBe(third);
    expect(await defaultOf(agent.id)).toBe(third);
  });

  it('GraphQL: updateAgent takes defaultSessionId; agent and session show the same default', async () => {
    const agent = await newAgent();
    await newSession(agent.id);
    const second = await newSession(agent.id);
    const res = await s.gql<any>(`mutation($id: String!, $sid: String!) { updateAgent(id: $id, input: { defaultSessionId: $sid }) { defaultSessionId } }`, {
      id: agent.id,
      sid: second,
    });
    expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
    expect(res.body.data.updateAgent.defaultSessionId).toBe(second);
    const bad = await s.gql<any>(`mutation($id: String!) { updateAgent(id: $id, input: { defaultSessionId: "sess_nope" }) { defaultSessionId } }`, {
      id: agent.id,
    });
    expect(bad.body.errors?.[0]?.extensions.code).toBe('invalid_request');
    expect((await s.api('GET', `/sessions/${second}`)).body.session.default).toBe(true);
  });
});
