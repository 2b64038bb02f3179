// Writes and reads that turns starting or ending together share (issue #29, src/db/batched.ts),
// checked on the database itself: calls of one moment go out as ONE statement, and each caller's
// rows come out as if it had been alone — usage rows, a thread's cost on its coordinator too,
// the wallet's holds and settles per universe, the last stop reason and the turn's usage per
// session. Runs on the embedded defaults and, with TEST_DATABASE_URL, on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { countQueries } from '../helpers/agents.js';
import { prisma } from '../../src/db/client.js';
import { newId } from '../../src/ids.js';
import { writeUsage } from '../../src/gateway/usage-writes.js';
import { hold } from '../../src/billing/wallet.js';
import { turnUsageAndOutcome } from '../../src/billing/usage.js';
import { pendingCalls } from '../../src/tools/confirmations.js';
import { commitEvents, type NewEvent } from '../../src/events/store.js';
import { storeEventsOfSessions } from '../../src/events/store-many.js';
import { canStartTurnSql } from '../../src/billing/spend-gate.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ startingCreditsCents: 100 });
});
afterAll(async () => {
  await s?.stop();
});

async function sessionRow(universeId: string, parentSessionId: string | null = null) {
  return prisma.session.create({
    data: { id: newId(parentSessionId ? 'sthr' : 'sess'), universeId, agentType: 'hermes', llm: 'claude-sonnet-4-5', status: 'idle', parentSessionId },
  });
}

const usage = (input: number, output: number) => ({ inputTokens: input, outputTokens: output, cacheReadTokens: 0, cacheWriteTokens: 0 });
const call = (sessionId: string, universeId: string, cost: bigint, held: bigint, u: ReturnType<typeof usage> | null) => ({
  sessionId,
  universeId,
  turn: 1,
  provider: 'anthropic',
  model: 'claude-sonnet-4-5',
  billing: 'platform',
  usage: u,
  cost,
  held,
  settle: true,
});

describe('statements shared by calls of one moment', () => {
  it("usage of three calls in one statement: each call's row, a thread's cost on its coordinator, one settle per universe", async () => {
    const slug = (await s.api('GET', '/whoami')).body.universe.slug as string;
    const universe = await prisma.universe.findUniqueOrThrow({ where: { slug } });
    const a = await sessionRow(universe.id);
    const thread = await sessionRow(universe.id, a.id);
    const b = await sessionRow(universe.id);
    await prisma.universe.update({ where: { id: universe.id }, data: { balanceNanoUsd: 1_000_000n, heldNanoUsd: 0n } });

    // Holds of one moment: one statement, the universe's row moved once by their sum.
    let held: boolean[] = [];
    const holdStatements = await countQueries(async () => {
      held = await Promise.all([hold(universe.id, 300_000n), hold(universe.id, 200_000n), hold(universe.id, 100_000n)]);
    }, /"heldNanoUsd"/);
    expect(held).toEqual([true, true, true]);
    expect(holdStatements).toBe(1);
    expect((await prisma.universe.findUniqueOrThrow({ where: { id: universe.id } })).heldNanoUsd).toBe(600_000n);

    const statements = await countQueries(
      () =>
        Promise.all([
          writeUsage(call(a.id, universe.id, 7_000n, 300_000n, usage(10, 20))),
          writeUsage(call(thread.id, universe.id, 5_000n, 200_000n, usage(3, 4))),
          writeUsage(call(b.id, universe.id, 0n, 100_000n, null)), // reported nothing: its hold is released all the same
        ]),
      /"ModelUsage"|"WalletEntry"/,
    );
    expect(statements).toBe(1);
    const rows = await prisma.modelUsage.findMany({ where: { sessionId: { in: [a.id, thread.id, b.id] } }, orderBy: { costNanoUsd: 'desc' } });
    expect(rows.map((r) => [r.sessionId, r.inputTokens, r.outputTokens, r.costNanoUsd])).toEqual([
      [a.id, 10, 20, 7_000n],
      [thread.id, 3, 4, 5_000n],
    ]);
    const consumed = async (id: string) => (await prisma.session.findUniqueOrThrow({ where: { id } })).consumedNanoUsd;
    expect(await consumed(a.id)).toBe(12_000n); // its own and its thread's
    expect(await consumed(thread.id)).toBe(5_000n);
    expect(await consumed(b.id)).toBe(0n);
    const after = await prisma.universe.findUniqueOrThrow({ where: { id: universe.id } });
    expect(after.heldNanoUsd).toBe(0n);
    expect(after.balanceNanoUsd).toBe(1_000_000n - 12_000n);
    const entries = await prisma.walletEntry.findMany({ where: { sessionId: { in: [a.id, thread.id, b.id] } } });
    expect(entries.map((e) => e.amountNanoUsd).sort()).toEqual([-7_000n, -5_000n, 0n].sort());
    expect(new Set(entries.map((e) => e.usageId))).toEqual(new Set([rows[0]!.id, rows[1]!.id, null]));
  });

  it('holds whose sum does not fit are taken one by one: those that fit still hold', async () => {
    await s.api('POST', '/universes', { body: { slug: 'shared-holds' } });
    const universe = await prisma.universe.findUniqueOrThrow({ where: { slug: 'shared-holds' } });
    await prisma.universe.update({ where: { id: universe.id }, data: { balanceNanoUsd: 500n, heldNanoUsd: 0n } });
    const held = await Promise.all([hold(universe.id, 300n), hold(universe.id, 300n), hold(universe.id, 100n)]);
    expect(held.filter(Boolean)).toHaveLength(2); // 300 + 100, or 300 + 100 the other way round; never 600
    const after = await prisma.universe.findUniqueOrThrow({ where: { id: universe.id } });
    expect(after.heldNanoUsd).toBe(400n);
  });

  it("reads of one moment: each session's last stop reason and turn usage, in one statement each", async () => {
    const slug = (await s.api('GET', '/whoami')).body.universe.slug as string;
    const universe = await prisma.universe.findUniqueOrThrow({ where: { slug } });
    const paused = await sessionRow(universe.id);
    const ended = await sessionRow(universe.id);
    const fresh = await sessionRow(universe.id);
    await commitEvents(paused.id, [{ type: 'session.status_idle', fields: { stop_reason: { type: 'end_turn' } }, turn: 1 }]);
    await commitEvents(paused.id, [{ type: 'session.status_idle', fields: { stop_reason: { type: 'requires_action', event_ids: [] } }, turn: 2 }]);
    await commitEvents(ended.id, [{ type: 'session.status_idle', fields: { stop_reason: { type: 'end_turn' } }, turn: 1 }]);
    await writeUsage(call(ended.id, universe.id, 9n, 0n, usage(1, 2)));

    let pending: unknown[] = [];
    const reads = await countQueries(async () => {
      pending = await Promise.all([paused, ended, fresh].map((x) => pendingCalls(x.id)));
    }, /status_idle/);
    expect(reads).toBe(1);
    // Only the paused one looks further (no call of it waits here): every answer is null.
    expect(pending).toEqual([null, null, null]);

    let sums: Awaited<ReturnType<typeof turnUsageAndOutcome>>[] = [];
    const sumReads = await countQueries(async () => {
      sums = await Promise.all([ended, fresh].map((x) => turnUsageAndOutcome(x.id, 1, Date.now())));
    }, /"ModelUsage"/);
    expect(sumReads).toBe(1);
    expect(sums.map((x) => [x.usage.model_calls, x.usage.input_tokens, x.usage.output_tokens, x.usage.cost_usd, x.outcomeActive])).toEqual([
      [1, 1, 2, '0.000000009', false],
      [0, 0, 0, '0.000000000', false],
    ]);
  });

  it('turn starts of one moment (sends to idle sessions): one statement claims each matching row; the others store nothing', async () => {
    const slug = (await s.api('GET', '/whoami')).body.universe.slug as string;
    const universe = await prisma.universe.findUniqueOrThrow({ where: { slug } });
    await prisma.universe.update({ where: { id: universe.id }, data: { balanceNanoUsd: 1_000_000n } });
    const idle = await sessionRow(universe.id);
    const waiting = await sessionRow(universe.id); // an input already waits: the new turn takes it too
    const busy = await sessionRow(universe.id);
    const elsewhere = await sessionRow(universe.id);
    await prisma.session.update({ where: { id: busy.id }, data: { status: 'running' } });
    await commitEvents(waiting.id, [{ type: 'user.message', fields: { content: [{ type: 'text', text: 'queued' }] } }]);
    const text = (t: string): NewEvent => ({ type: 'user.message', fields: { content: [{ type: 'text', text: t }] } });
    const running: NewEvent = { type: 'session.status_running', fields: {} };
    const claim = { kind: 'claim', owner: 'test-owner', from: ['idle'], to: 'running', turnFor: ['user.message'], gate: canStartTurnSql } as const;
    let batches = new Map<string, Awaited<ReturnType<typeof storeEventsOfSessions>> extends Map<string, infer B> ? B : never>();
    const statements = await countQueries(async () => {
      batches = await storeEventsOfSessions(
        [
          { sessionId: idle.id, events: [text('one'), running], universeId: universe.id },
          { sessionId: waiting.id, events: [text('two'), running], universeId: universe.id },
          { sessionId: busy.id, events: [text('three'), running], universeId: universe.id },
          { sessionId: elsewhere.id, events: [text('four'), running], universeId: 'univ_some_other_one' },
        ],
        claim,
      );
    }, /"SessionEvent"/);
    expect(statements).toBe(1);
    expect([...batches.keys()].sort()).toEqual([idle.id, waiting.id].sort());
    for (const id of [idle.id, waiting.id]) {
      const row = await prisma.session.findUniqueOrThrow({ where: { id } });
      expect([row.status, row.runnerId, row.turnCount]).toEqual(['running', 'test-owner', 1]);
      expect(batches.get(id)!.turnCount).toBe(1);
      const events = await prisma.sessionEvent.findMany({ where: { sessionId: id }, orderBy: { seq: 'asc' } });
      // The inputs (the one waiting and the new one) belong to the new turn.
      expect(events.filter((e) => e.type === 'user.message').map((e) => e.turn)).toEqual(id === waiting.id ? [1, 1] : [1]);
      expect(events.at(-1)!.type).toBe('session.status_running');
    }
    for (const id of [busy.id, elsewhere.id]) {
      expect(await prisma.sessionEvent.count({ where: { sessionId: id, type: 'session.status_running' } })).toBe(0);
      expect((await prisma.session.findUniqueOrThrow({ where: { id } })).turnCount).toBe(0);
    }
  });

  it("runs ending together: one statement releases each row still this process's with nothing waiting", async () => {
    const slug = (await s.api('GET', '/whoami')).body.universe.slug as string;
    const universe = await prisma.universe.findUniqueOrThrow({ where: { slug } });
    const done = await sessionRow(universe.id);
    const queued = await sessionRow(universe.id); // an input waits: not released (the runner starts the next turn)
    const taken = await sessionRow(universe.id); // another process runs it now
    for (const x of [done, queued]) await prisma.session.update({ where: { id: x.id }, data: { status: 'running', runnerId: 'test-owner' } });
    await prisma.session.update({ where: { id: taken.id }, data: { status: 'running', runnerId: 'another-owner' } });
    await commitEvents(queued.id, [{ type: 'user.message', fields: { content: [{ type: 'text', text: 'next' }] } }]);
    const idle: NewEvent = { type: 'session.status_idle', fields: { stop_reason: { type: 'end_turn' } } };
    const release = { kind: 'release', owner: 'test-owner', from: ['running'], to: 'idle', inputTypes: ['user.message'] } as const;
    let batches = new Map<string, unknown>();
    const statements = await countQueries(async () => {
      batches = await storeEventsOfSessions(
        [done, queued, taken].map((x) => ({ sessionId: x.id, events: [idle] })),
        release,
      );
    }, /"SessionEvent"/);
    expect(statements).toBe(1);
    expect([...batches.keys()]).toEqual([done.id]);
    const rowOf = (id: string) => prisma.session.findUniqueOrThrow({ where: { id } });
    expect(await rowOf(done.id)).toMatchObject({ status: 'idle', runnerId: null });
    expect(await rowOf(queued.id)).toMatchObject({ status: 'running', runnerId: 'test-owner' });
    expect(await rowOf(taken.id)).toMatchObject({ status: 'running', runnerId: 'another-owner' });
    for (const x of [queued, taken]) expect(await prisma.sessionEvent.count({ where: { sessionId: x.id, type: 'session.status_idle' } })).toBe(0);
  });
});
