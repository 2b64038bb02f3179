// Forking a session at an event (POST /v1/sessions/{id}/fork, GraphQL forkSession): the fork's
// history is the source's prefix under new ids, its /workspace a copy of the source's current
// files (not rewound), its budget its own; its next turn continues from the copied history (the
// request the provider receives is asserted); a running source forks at its last completed turn.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import type { FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents, waitFor, history, withServerOnFakeProvider } from '../helpers/sessions.js';
import { config } from '../../src/config.js';
import { prisma } from '../../src/db/client.js';
import { storeEvents, type NewEvent } from '../../src/events/store.js';

let s: TestServer;
let fake: FakeProvider;
withServerOnFakeProvider((started) => ({ s, fake } = started));

const budget = (cents: number) => ({ type: 'limit', max_list_cost: { amount: String(cents), currency: 'USD' } });
const workspaceFile = (sessionId: string, rel: string) => path.join(config().dataDir, 'sandboxes', sessionId, 'workspace', rel);
/** An event without what a fork changes (its id and session). */
const sameEvent = ({ id: _id, sessionId: _s, ...rest }: any) => rest;
const wordsOf = (body: any) => JSON.stringify(body.messages);

/** A session with two completed turns: turn 1 writes notes.txt = "one", turn 2 rewrites it to "two". */
async function twoTurnSession(sessionBody: Record<string, unknown> = {}) {
  const { agent, session } = await readySession(s, {}, sessionBody);
  fake.enqueue({ kind: 'tool_call', name: 'write_file', input: { path: 'notes.txt', content: 'one' } }, { kind: 'text', text: 'wrote one' });
  await sendText(s, session.id, 'first question');
  await waitForEvents(s, session.id, 'session.status_idle', 1);
  fake.enqueue({ kind: 'tool_call', name: 'write_file', input: { path: 'notes.txt', content: 'two' } }, { kind: 'text', text: 'wrote two' });
  await sendText(s, session.id, 'second question');
  const events = await waitForEvents(s, session.id, 'session.status_idle', 2);
  await waitFor(async () => (await s.api('GET', `/sessions/${session.id}`)).body.session.status === 'idle');
  return { agent, session, events };
}

describe('fork at an event', () => {
  it('copies the history prefix under new ids, the current workspace, not the budget; the next turn continues from the prefix', async () => {
    const { agent, session, events } = await twoTurnSession({ budget: budget(500), title: 'source' });
    const firstIdle = events.find((e) => e.type === 'session.status_idle')!;
    const prefix = events.slice(0, events.indexOf(firstIdle) + 1);
    expect(prefix.length).toBeLessThan(events.length);
    const source = (await s.api('GET', `/sessions/${session.id}`)).body.session;
    expect(Number(source.budget.consumed_cost.amount)).toBeGreaterThanOrEqual(0);

    const res = await s.api('POST', `/sessions/${session.id}/fork`, { body: { at_event_id: firstIdle.id } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const fork = res.body.session;
    expect(fork.id).not.toBe(session.id);
    expect(fork).toMatchObject({
      agentId: agent.id,
      status: 'idle',
      llm: source.llm,
      agentType: source.agentType,
      title: 'source',
      budget: null,
      default: false,
      forked_from: { session_id: session.id, event_id: firstIdle.id },
    });
    // The detail and the list show where it came from; the source has no forked_from.
    expect((await s.api('GET', `/sessions/${fork.id}`)).body.session.forked_from).toEqual({ session_id: session.id, event_id: firstIdle.id });
    const listed = (await s.api('GET', `/sessions?agent=${agent.id}`)).body.sessions;
    expect(listed.find((x: any) => x.id === fork.id).forked_from.session_id).toBe(session.id);
    expect(listed.find((x: any) => x.id === session.id).forked_from).toBeNull();

    // History: the same events in the same order, new ids, the fork's session id.
    const copied = await history(s, fork.id);
    expect(copied.map(sameEvent)).toEqual(prefix.map(sameEvent));
    expect(copied.every((e) => e.sessionId === fork.id)).toBe(true);
    const sourceIds = new Set(events.map((e) => e.id));
    expect(copied.filter((e) => sourceIds.has(e.id))).toEqual([]);
    expect(new Set(copied.map((e) => e.id)).size).toBe(copied.length);
    // The source is untouched.
    expect((await history(s, session.id)).map((e) => e.id)).toEqual(events.map((e) => e.id));

    // The workspace is the source's as it is now: turn 2's "two", not rewound to turn 1's "one".
    expect(fs.readFileSync(workspaceFile(fork.id, 'notes.txt'), 'utf8')).toBe('two');
    fs.writeFileSync(workspaceFile(fork.id, 'notes.txt'), 'changed in the fork');
    expect(fs.readFileSync(workspaceFile(session.id, 'notes.txt'), 'utf8')).toBe('two');

    // The fork's next turn: the model gets turn 1 (question, tool call, answer) but not turn 2.
    fake.reset();
    fake.enqueue({ kind: 'tool_call', name: 'read_file', input: { path: 'notes.txt' } }, { kind: 'text', text: 'the fork answers' });
    expect((await sendText(s, fork.id, 'third question, in the fork')).status).toBe(202);
    const after = await waitForEvents(s, fork.id, 'session.status_idle', 2);
    const words = wordsOf(fake.requests[0]!.body);
    expect(words).toContain('first question');
    expect(words).toContain('wrote one');
    expect(words).toContain('third question, in the fork');
    expect(words).not.toContain('second question');
    expect(words).not.toContain('wrote two');
    const read = after.filter((e) => e.type === 'agent.tool_result').at(-1);
    expect(JSON.stringify(read.part.result)).toContain('changed in the fork');
    // The fork's own turn numbering continues after the copied turn; the source is not billed.
    expect((await s.api('GET', `/sessions/${fork.id}`)).body.session.budget).toBeNull();
    expect((await s.api('GET', `/sessions/${session.id}`)).body.session.budget.consumed_cost).toEqual(source.budget.consumed_cost);
  });

  it('defaults to the last completed turn; a new budget, title and GraphQL forkSession', async () => {
    const { session, events } = await twoTurnSession({ budget: budget(300) });
    const gql = await s.gql(
      `mutation F($id: String!, $input: ForkSessionInput!) { forkSession(id: $id, input: $input) { id status title budget { maxListCost { amount } consumedCost { amount } } forkedFrom { sessionId eventId } } }`,
      { id: session.id, input: { title: 'the other path', budget: { maxListCost: { amount: '42' } } } },
    );
    expect(gql.body.errors).toBeUndefined();
    const fork = gql.body.data!.forkSession;
    expect(fork).toMatchObject({
      status: 'idle',
      title: 'the other path',
      budget: { maxListCost: { amount: '42' }, consumedCost: { amount: '0' } },
      forkedFrom: { sessionId: session.id, eventId: events.at(-1).id },
    });
    expect((await history(s, fork.id)).map(sameEvent)).toEqual(events.map(sameEvent));
  });

  it('cut inside a turn: the copy of that turn ends with an idle of the fork; the next turn answers the open tool call as interrupted', async () => {
    const { session, events } = await twoTurnSession();
    const toolUse = events.find((e) => e.type === 'agent.tool_use')!;
    const res = await s.api('POST', `/sessions/${session.id}/fork`, { body: { at_event_id: toolUse.id } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const fork = res.body.session;
    expect(fork).toMatchObject({ status: 'idle', forked_from: { session_id: session.id, event_id: toolUse.id } });
    const copied = await history(s, fork.id);
    const prefix = events.slice(0, events.indexOf(toolUse) + 1);
    expect(copied.slice(0, -1).map(sameEvent)).toEqual(prefix.map(sameEvent));
    expect(copied.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' }, sessionId: fork.id });

    fake.reset();
    fake.enqueue({ kind: 'text', text: 'starting over' });
    await sendText(s, fork.id, 'try another way');
    await waitForEvents(s, fork.id, 'session.status_idle', 2);
    const messages = fake.requests[0]!.body.messages;
    expect(JSON.stringify(messages)).toContain('first question');
    expect(JSON.stringify(messages)).not.toContain('wrote one');
    // The copied call without its result is answered as interrupted (the provider requires one).
    const results = messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).filter((b: any) => b.type === 'tool_result');
    expect(results).toEqual([expect.objectContaining({ tool_use_id: toolUse.part.call_id, is_error: true })]);
  });

  it('a turn paused for a tool confirmation forks with its references renamed: the fork confirms its own copy of the call', async () => {
    const { agent, session } = await readySession(s);
    const put = await s.api('PUT', `/agents/${agent.id}/tool-policy`, {
      body: { default: 'always_allow', rules: [{ target: 'tool', name: 'bash', policy: 'always_ask' }] },
    });
    expect(put.status).toBe(200);
    fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: 'echo confirmed-in-fork' }, id: 'toolu_ask' });
    await sendText(s, session.id, 'run it');
    const events = await waitForEvents(s, session.id, 'session.status_idle', 1);
    const use = events.find((e) => e.type === 'agent.tool_use')!;
    expect(events.at(-1).stop_reason).toEqual({ type: 'requires_action', event_ids: [use.id] });

    const fork = (await s.api('POST', `/sessions/${session.id}/fork`, { body: {} })).body.session;
    const copied = await history(s, fork.id);
    const forkUse = copied.find((e) => e.type === 'agent.tool_use')!;
    expect(forkUse.id).not.toBe(use.id);
    expect(copied.at(-1).stop_reason).toEqual({ type: 'requires_action', event_ids: [forkUse.id] });
    // The source's call id is not the fork's: confirming it there is refused, its own copy runs.
    expect(
      (await s.api('POST', `/sessions/${fork.id}/events`, { body: { events: [{ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'allow' }] } }))
        .status,
    ).toBe(400);
    fake.enqueue({ kind: 'text', text: 'ran it in the fork' });
    const ok = await s.api('POST', `/sessions/${fork.id}/events`, {
      body: { events: [{ type: 'user.tool_confirmation', tool_use_id: forkUse.id, result: 'allow' }] },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(202);
    const after = await waitForEvents(s, fork.id, 'session.status_idle', 2);
    expect(JSON.stringify(after.find((e) => e.type === 'agent.tool_result').part.result)).toContain('confirmed-in-fork');
    // The source still waits on its own call.
    expect((await history(s, session.id)).at(-1).stop_reason.type).toBe('requires_action');
  });

  it('a running source forks at its last completed turn; an event of the running turn is refused', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'text', text: 'done with turn one' });
    await sendText(s, session.id, 'turn one');
    const turnOne = await waitForEvents(s, session.id, 'session.status_idle', 1);
    fake.enqueue({ kind: 'hang', text: 'still thinking' });
    await sendText(s, session.id, 'turn two');
    await waitFor(async () => fake.requests.length === 2);
    expect((await s.api('GET', `/sessions/${session.id}`)).body.session.status).toBe('running');

    const res = await s.api('POST', `/sessions/${session.id}/fork`, { body: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.session).toMatchObject({ status: 'idle', forked_from: { session_id: session.id, event_id: turnOne.at(-1).id } });
    expect((await history(s, res.body.session.id)).map(sameEvent)).toEqual(turnOne.map(sameEvent));

    const running = (await history(s, session.id)).find((e) => e.type === 'user.message' && JSON.stringify(e.content).includes('turn two'));
    const refused = await s.api('POST', `/sessions/${session.id}/fork`, { body: { at_event_id: running.id } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('session_running');

    await s.api('POST', `/sessions/${session.id}/interrupt`);
    await waitFor(async () => (await s.api('GET', `/sessions/${session.id}`)).body.session.status === 'idle');
  });

  it('a CLI engine session forks only at the end of its last completed turn, and only while idle (its CLI resumes its copied state)', async () => {
    const { session } = await readySession(s, { agentType: 'claude_code' });
    // Two turns as the CLI engine stores them (the CLI itself is not needed to judge a fork).
    const turn = (n: number): NewEvent[] => [
      { type: 'user.message', turn: n, fields: { content: [{ type: 'text', text: `cli question ${n}` }] } },
      { type: 'session.status_running', turn: n, fields: {} },
      { type: 'agent.message', turn: n, fields: { messageId: `m${n}`, parts: [], text: `cli answer ${n}`, final: true } },
      { type: 'session.status_idle', turn: n, fields: { stop_reason: { type: 'end_turn' } } },
    ];
    await storeEvents(prisma, session.id, [...turn(1), ...turn(2)]);
    await prisma.session.update({ where: { id: session.id }, data: { turnCount: 2, cliConversationId: 'cli-conversation-1' } });
    const events = await history(s, session.id);

    const early = await s.api('POST', `/sessions/${session.id}/fork`, { body: { at_event_id: events[3].id } });
    expect(early.status).toBe(400);
    expect(early.body.error.code).toBe('invalid_request');
    expect(early.body.error.message).toContain('last completed turn');

    const res = await s.api('POST', `/sessions/${session.id}/fork`, { body: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.session).toMatchObject({ agentType: 'claude_code', forked_from: { session_id: session.id, event_id: events.at(-1).id } });
    expect((await prisma.session.findUniqueOrThrow({ where: { id: res.body.session.id } })).cliConversationId).toBe('cli-conversation-1');

    await prisma.session.update({ where: { id: session.id }, data: { status: 'running' } });
    const running = await s.api('POST', `/sessions/${session.id}/fork`, { body: {} });
    expect(running.status).toBe(400);
    expect(running.body.error.code).toBe('session_running');
    await prisma.session.update({ where: { id: session.id }, data: { status: 'idle' } });
  });

  it('another universe → 404; an event not in the session → 404; archived → 400 session_archived; read scope → 403', async () => {
    const { session } = await readySession(s);
    const { session: other } = await readySession(s);
    fake.enqueue({ kind: 'text', text: 'hello' });
    await sendText(s, other.id, 'hi');
    const otherEvents = await waitForEvents(s, other.id, 'session.status_idle', 1);

    await s.api('POST', '/universes', { body: { slug: 'fork-other' } });
    const stranger = await s.mintToken('admin', { universe: 'fork-other' });
    const foreign = await s.api('POST', `/sessions/${session.id}/fork`, { token: stranger, body: {} });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');

    const wrongEvent = await s.api('POST', `/sessions/${session.id}/fork`, { body: { at_event_id: otherEvents[0].id } });
    expect(wrongEvent.status).toBe(404);
    expect(wrongEvent.body.error).toMatchObject({ code: 'not_found' });

    const reader = await s.mintToken('read');
    expect((await s.api('POST', `/sessions/${session.id}/fork`, { token: reader, body: {} })).status).toBe(403);

    expect((await s.api('POST', `/sessions/${session.id}/archive`)).status).toBe(200);
    const archived = await s.api('POST', `/sessions/${session.id}/fork`, { body: {} });
    expect(archived.status).toBe(400);
    expect(archived.body.error.code).toBe('session_archived');
    // Nothing was made by the refusals: the universe's sessions are the two made here and before.
    const all = (await s.api('GET', '/sessions')).body.sessions;
    expect(all.filter((x: any) => x.forked_from?.session_id === session.id)).toEqual([]);
  });
});
