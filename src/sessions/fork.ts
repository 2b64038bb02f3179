// Forking a session at one of its events: a new idle session of the same agent (model, effort,
// billing, instructions, environment, vaults, machine shape, prompt version and resources as the
// source has them) whose history is the source's events up to that event, under new ids in the
// new session's sequence, and whose /workspace is a copy of the source's workspace as it is now
// (files are not rewound to the event). The budget is not carried over (a new cap may be given).
//
// The history is copied by ONE INSERT … SELECT (ids made here, joined by sequence number): a
// fork of 10,000 events is one statement, not 10,000, run while the files are copied. References
// between copied events (a tool confirmation's `tool_use_id`, a requires_action stop's
// `event_ids`) are rewritten to the new ids. A cut inside a turn gets an idle event of the fork's
// own, so the copied turn ends as the fork's status says. Rules and limits: docs/api.md.
// hermes rebuilds its conversation from the events, so it forks anywhere; a CLI engine resumes
// its own state (copied with the workspace), so only its last completed turn can be forked.
import { prisma } from '../db/client.js';
import { sqlRows } from '../db/raw-query.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { Prisma, type Session } from '../generated/prisma/client.js';
import type { Viewer } from '../auth/viewer.js';
import type { ForkSessionBody } from './contract.js';
import { assertAllowed } from '../runtime/session-state-machine.js';
import { budgetCents, resolveSession, statusOf } from './sessions.js';
import { provisionSession, teardownSandbox } from './provisioning.js';
import { sandboxDriver } from '../sandbox/current-driver.js';
import { announceEvents, commitEvent, storeEvents, type StoredBatch } from '../events/store.js';
import { claimDefaultIfVacant } from './default-session.js';

/** hermes rebuilds its conversation from the events (engines/hermes/history.ts); a CLI resumes its own state in the sandbox. */
const HERMES = 'hermes';

/** Where the copied history ends: the event's sequence number in the source (0: nothing copied). */
interface Cut {
  seq: number;
  eventId: string | null;
}

/** The first event of the running turn (its inputs come first), or null when no turn runs. */
async function runningTurnStart(source: Session): Promise<number | null> {
  if (statusOf(source) !== 'running') return null;
  const first = await prisma.sessionEvent.findFirst({
    where: { sessionId: source.id, turn: source.turnCount },
    orderBy: { seq: 'asc' },
    select: { seq: true },
  });
  return first?.seq ?? null;
}

/** The end of the last completed turn (before the running one): its session.status_idle. */
async function lastCompletedTurn(sessionId: string, before: number | null): Promise<Cut> {
  const idle = await prisma.sessionEvent.findFirst({
    where: { sessionId, type: 'session.status_idle', ...(before !== null ? { seq: { lt: before } } : {}) },
    orderBy: { seq: 'desc' },
    select: { seq: true, id: true },
  });
  return idle ? { seq: idle.seq, eventId: idle.id } : { seq: 0, eventId: null };
}

async function cutOf(source: Session, atEventId: string | undefined): Promise<Cut> {
  const running = await runningTurnStart(source);
  const last = await lastCompletedTurn(source.id, running);
  if (source.agentType !== HERMES && statusOf(source) === 'running')
    throw new AppError(
      'session_running',
      `a ${source.agentType} session keeps its conversation in its sandbox, which the running turn is changing: fork it when it is idle`,
    );
  if (atEventId === undefined) return last;
  const at = await prisma.sessionEvent.findFirst({ where: { sessionId: source.id, id: atEventId }, select: { seq: true, id: true } });
  if (!at) throw new AppError('not_found', `event ${atEventId} not found in session ${source.id}`);
  if (running !== null && at.seq >= running)
    throw new AppError('session_running', 'the event is part of the running turn: fork at an earlier event, or after the turn ends');
  // A CLI engine resumes its own conversation, kept in the sandbox (copied with the workspace):
  // only the end of the last completed turn matches it.
  if (source.agentType !== HERMES && at.seq < last.seq)
    throw new AppError(
      'invalid_request',
      `a ${source.agentType} session can be forked only at the end of its last completed turn (${last.eventId}): its CLI keeps its own conversation in the sandbox, which cannot be rewound`,
    );
  return { seq: at.seq, eventId: at.id };
}

/**
 * Copies the source's events with seq ≤ `cut` into `forkId` (seq 1…n, the same order, types,
 * turns and times; new ids, the new session's id) in one statement. Returns how many and the
 * last copied turn.
 */
async function copyHistory(tx: Prisma.TransactionClient, sourceId: string, forkId: string, cut: number): Promise<{ count: number; turn: number }> {
  if (cut === 0) return { count: 0, turn: 0 };
  // One new id per sequence number up to the cut (dense from 1); ids are made here (ULIDs).
  const ids = Array.from({ length: cut }, () => newId('evt'));
  const rows = await sqlRows<{ count: bigint | number; turn: number | null }>(
    tx,
    Prisma.sql`
    WITH ids AS (
      SELECT * FROM unnest(${ids}::text[]) WITH ORDINALITY AS t(id, ord)
    ), map AS MATERIALIZED (
      -- sequence numbers are dense from 1: the event of seq n gets the n-th new id
      SELECT e."id", e."seq", e."type", e."payload", e."turn", e."createdAt", ids."id" AS new_id
        FROM "SessionEvent" e JOIN ids ON ids.ord = e."seq"
       WHERE e."sessionId" = ${sourceId} AND e."seq" <= ${cut}
    ), ins AS (
      INSERT INTO "SessionEvent" ("id", "sessionId", "seq", "type", "payload", "turn", "createdAt")
      SELECT m.new_id, ${forkId}, m."seq", m."type",
             CASE
               WHEN m."type" = 'user.tool_confirmation' THEN
                 jsonb_set(m."payload", '{tool_use_id}', to_jsonb(COALESCE((SELECT x.new_id FROM map x WHERE x."id" = m."payload"->>'tool_use_id'), m."payload"->>'tool_use_id')))
               WHEN m."type" = 'session.status_idle' AND jsonb_typeof(m."payload"->'stop_reason'->'event_ids') = 'array' THEN
                 jsonb_set(m."payload", '{stop_reason,event_ids}', COALESCE((
                   SELECT jsonb_agg(COALESCE(x.new_id, a.old) ORDER BY a.n)
                     FROM jsonb_array_elements_text(m."payload"->'stop_reason'->'event_ids') WITH ORDINALITY AS a(old, n)
                     LEFT JOIN map x ON x."id" = a.old), '[]'::jsonb))
               ELSE m."payload"
             END || jsonb_build_object('id', m.new_id, 'sessionId', ${forkId}::text),
             m."turn", m."createdAt"
        FROM map m
      RETURNING "turn"
    )
    SELECT count(*) AS "count", max("turn") AS "turn" FROM ins`,
  );
  return { count: Number(rows[0]?.count ?? 0), turn: Number(rows[0]?.turn ?? 0) };
}

/** Whether the events up to `cut` leave a turn open (its status_running without an idle after it). */
async function endsInsideTurn(tx: Prisma.TransactionClient, sessionId: string, cut: number): Promise<boolean> {
  const last = await tx.sessionEvent.findFirst({
    where: { sessionId, seq: { lte: cut }, type: { in: ['session.status_running', 'session.status_idle'] } },
    orderBy: { seq: 'desc' },
    select: { type: true },
  });
  return last?.type === 'session.status_running';
}

export async function forkSession(viewer: Viewer, idOrAgent: string, body: ForkSessionBody): Promise<Session> {
  const source = await resolveSession(viewer, idOrAgent);
  assertAllowed('fork', statusOf(source));
  const agent = source.agentId ? await prisma.agent.findUnique({ where: { id: source.agentId } }) : null;
  if (!agent) throw new AppError('conflict', 'the agent of this session no longer exists');
  if (agent.archived) throw new AppError('conflict', 'the agent is archived; new sessions are rejected');
  const budgetMax = body.budget ? budgetCents(body.budget.max_list_cost.amount) : null;
  if (budgetMax !== null && budgetMax <= 0n) throw new AppError('invalid_request', 'budget amount must be above zero');
  const cut = await cutOf(source, body.at_event_id);
  const id = newId('sess');

  // The files are copied while the history is: both are most of a fork's time.
  const copying = sandboxDriver()
    .copyWorkspace(source.id, id)
    .then(
      (copied) => ({ copied, error: null }),
      (err: Error) => ({ copied: false, error: err }),
    );
  let closing: StoredBatch | null = null;
  const fork = await prisma
    .$transaction(
      async (tx) => {
        const fork = await tx.session.create({
          data: {
            id,
            universeId: source.universeId,
            agentId: agent.id,
            title: body.title !== undefined ? body.title : source.title,
            status: 'provisioning',
            agentType: source.agentType,
            llm: source.llm,
            reasoningEffort: source.reasoningEffort,
            modelBilling: source.modelBilling,
            metadata: source.metadata as object,
            instructions: source.instructions as object,
            vcpus: source.vcpus,
            memoryMb: source.memoryMb,
            budgetMaxCents: budgetMax,
            promptVersion: source.promptVersion,
            vaultIds: source.vaultIds,
            environmentId: source.environmentId,
            // A CLI resumes the conversation its copied state holds (only at the last completed turn).
            cliConversationId: source.cliConversationId,
            forkedFromSessionId: source.id,
            forkedFromEventId: cut.eventId,
          },
        });
        const copied = await copyHistory(tx, source.id, id, cut.seq);
        await tx.session.update({ where: { id }, data: { eventSeq: cut.seq, turnCount: copied.turn } });
        // Cut inside a turn: the fork's copy of that turn ends here, as its own idle event says
        // (whoever follows the status by the events sees the fork idle, as it is).
        if (await endsInsideTurn(tx, source.id, cut.seq))
          closing = await storeEvents(tx, id, [{ type: 'session.status_idle', fields: { stop_reason: { type: 'end_turn' } }, turn: copied.turn }]);
        await claimDefaultIfVacant(tx, agent.id, id);
        // Resources as the source has them: their files are in the copied workspace already.
        const resources = await tx.sessionResource.findMany({ where: { sessionId: source.id }, orderBy: { id: 'asc' } });
        if (resources.length)
          await tx.sessionResource.createMany({
            data: resources.map(({ id: _old, sessionId: _from, ...r }) => ({
              ...r,
              id: newId('sesrsc'),
              sessionId: fork.id,
              checkout: r.checkout ?? Prisma.DbNull,
              memorySnapshot: r.memorySnapshot ?? Prisma.DbNull,
            })),
          });
        return fork;
      },
      // 10,000 events on a busy PGlite take seconds: Prisma's default 5 s would cut the copy.
      { timeout: 60_000 },
    )
    .catch(async (err) => {
      await copying;
      await teardownSandbox(id);
      throw err;
    });
  if (closing) announceEvents(closing);
  const { copied, error } = await copying;
  // No source sandbox (or a copy that failed): resources are materialised afresh instead.
  if (!copied) await prisma.sessionResource.updateMany({ where: { sessionId: fork.id }, data: { syncedAt: null } });
  if (error)
    await commitEvent(fork.id, {
      type: 'session.error',
      fields: {
        error: { type: 'workspace_copy_failed', message: `the workspace of ${source.id} could not be copied: ${error.message}`, retry_status: 'exhausted' },
      },
    });
  // The sandbox is made now (keeping the copied files), so the fork answers idle and ready.
  await provisionSession(fork);
  return prisma.session.findUniqueOrThrow({ where: { id: fork.id } });
}
