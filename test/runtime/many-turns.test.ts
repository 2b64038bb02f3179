// Many sessions at once (issue #29), kept small for CI: 50 hermes sessions with one SSE stream
// each, 50 sends at once, the fake provider streaming each answer in chunks. Correctness only
// (timings live in bench/concurrency.ts): every turn ends end_turn, every stream is gap-free,
// has no duplicate and equals the session's history. Runs on the embedded defaults and, with
// TEST_DATABASE_URL / TEST_REDIS_URL, on PostgreSQL + Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { history, sendText, waitFor } from '../helpers/sessions.js';
import { streamedIds, watchStream } from '../helpers/streams.js';
import { prisma } from '../../src/db/client.js';

const C = 50;

let s: TestServer;
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
  // Enough credits for every turn's hold at once.
  s = await startTestServer({ anthropicApiKey: 'sk-ant-test', anthropicBaseUrl: fake.anthropicBaseUrl, startingCreditsCents: 1_000_000 });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});

describe(`${C} turns at once`, () => {
  it('every turn ends end_turn; every stream is gap- and duplicate-free and equals its history', async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const sessions: string[] = [];
    for (let i = 0; i < C; i += 10) {
      const batch = await Promise.all(Array.from({ length: Math.min(10, C - i) }, () => s.api('POST', '/sessions', { body: { agent: agent.id } })));
      for (const r of batch) {
        expect(r.status).toBe(201);
        sessions.push(r.body.session.id);
      }
    }
    for (const id of sessions) await waitFor(async () => (await s.api('GET', `/sessions/${id}`)).body.session.status === 'idle', 20_000);
    const streams = await Promise.all(sessions.map((id) => watchStream(s.base, s.adminToken, id)));
    const replayedIdles = await Promise.all(sessions.map(async (id) => (await history(s, id)).filter((e) => e.type === 'session.status_idle').length));
    await Promise.all(streams.map((w, i) => w.idles(replayedIdles[i]!)));
    for (let i = 0; i < C; i++) fake.enqueue({ kind: 'text', text: `answer number ${i} in several words`, chunks: 6, delayMs: 10 });

    fake.requests.length = 0;
    const universeId = (await prisma.session.findUniqueOrThrow({ where: { id: sessions[0]! } })).universeId;
    const balanceBefore = (await prisma.universe.findUniqueOrThrow({ where: { id: universeId } })).balanceNanoUsd;
    const sent = await Promise.all(sessions.map((id, i) => sendText(s, id, `go ${i}`)));
    expect(sent.map((r) => r.status)).toEqual(sessions.map(() => 202));
    await Promise.all(streams.map((w, i) => w.idles(replayedIdles[i]! + 1)));

    const answers = new Set<string>();
    for (let i = 0; i < C; i++) {
      const w = streams[i]!;
      const events = await history(s, sessions[i]!);
      const ids = w.frames.map((f) => f.id);
      expect(new Set(ids).size, 'no duplicate').toBe(ids.length);
      expect([...ids].sort(), 'ids in order').toEqual(ids);
      expect(ids, 'stream equals history').toEqual(streamedIds(events));
      const last = w.frames.at(-1)!;
      expect(last.type).toBe('session.status_idle');
      expect(last.data.stop_reason, JSON.stringify(w.frames.filter((f) => f.type === 'session.error'))).toEqual({ type: 'end_turn' });
      expect(w.frames.some((f) => f.type === 'session.error')).toBe(false);
      // The turn's usage (read with the other turns ending at the same moment: src/db/batched.ts) is its own.
      expect(last.data.usage).toMatchObject({ model_calls: 1, tool_calls: 0 });
      const final = w.frames.filter((f) => f.type === 'agent.message' && f.data.final);
      expect(final).toHaveLength(1);
      // The chunks of this turn's stream make up its own final message (no chunk of another session).
      const chunks = w.frames.filter((f) => f.type === 'agent.message' && !f.data.final && f.data.messageId === final[0]!.data.messageId);
      expect(chunks.map((f) => f.data.text).join('')).toBe(final[0]!.data.text);
      answers.add(final[0]!.data.text);
    }
    expect(answers.size, 'each session got one of the answers, none twice').toBe(C);

    // A second turn each, at once: every model request carries its own session's conversation
    // (turns starting together read their conversations in one statement).
    for (let i = 0; i < C; i++) fake.enqueue({ kind: 'text', text: `second answer ${i}`, chunks: 2, delayMs: 10 });
    fake.requests.length = 0;
    await Promise.all(sessions.map((id, i) => sendText(s, id, `again ${i}`)));
    await Promise.all(streams.map((w, i) => w.idles(replayedIdles[i]! + 2)));
    expect(fake.requests).toHaveLength(C);
    const userTexts = (body: any): string[] =>
      body.messages
        .filter((m: any) => m.role === 'user')
        .flatMap((m: any) => (typeof m.content === 'string' ? [m.content] : m.content.map((b: any) => b.text)));
    const seen = new Set<string>();
    for (const r of fake.requests) {
      const texts = userTexts(r.body);
      const n = /^go (\d+)$/.exec(texts[0] ?? '')?.[1];
      expect(texts, 'its own inputs, in order').toEqual([`go ${n}`, `again ${n}`]);
      expect(r.body.messages.filter((m: any) => m.role === 'assistant')).toHaveLength(1);
      seen.add(n!);
    }
    expect(seen.size).toBe(C);

    // The calls' usage, written in statements shared by calls ending together (usage-writes.ts):
    // one usage row and one charge line per call, every hold released, the wallet charged exactly
    // what the sessions consumed.
    const rows = await prisma.session.findMany({ where: { id: { in: sessions } }, select: { consumedNanoUsd: true, universeId: true } });
    const consumed = rows.reduce((n, r) => n + r.consumedNanoUsd, 0n);
    expect(consumed).toBeGreaterThan(0n);
    expect(await prisma.modelUsage.count({ where: { sessionId: { in: sessions } } })).toBe(2 * C);
    const charges = await prisma.walletEntry.findMany({ where: { sessionId: { in: sessions }, kind: 'charge' } });
    expect(charges).toHaveLength(2 * C);
    expect(charges.reduce((n, e) => n - e.amountNanoUsd, 0n)).toBe(consumed);
    const universe = await prisma.universe.findUniqueOrThrow({ where: { id: rows[0]!.universeId } });
    expect(universe.heldNanoUsd).toBe(0n);
    expect(balanceBefore - universe.balanceNanoUsd).toBe(consumed);
    for (const w of streams) w.close();
  }, 120_000);
});
