// Outcomes (issue #33): a session's defined outcome and the loop the runner runs after each agent
// turn that carries one. The turn ends, the session stays running, the grader (grader.ts, the
// service's own, in its own context) checks the agent's final reply and the sandbox against the
// rubric; needs_revision starts a revision turn with the grader's feedback as its input (a
// system.message, which every engine reads), a terminal result ends the run idle with
// stop_reason {type: "outcome", outcome_id, result}.
import { prisma } from '../db/client.js';
import { newId } from '../ids.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { Outcome } from '../generated/prisma/client.js';
import { commitEvent, type NewEvent } from '../events/store.js';
import type { SessionEvent, StopReason } from '../events/types.js';
import type { UserDefineOutcomeInput } from '../events/content.js';
import { AppError } from '../errors.js';
import { logger } from '../logger.js';
import { sandboxDriver } from '../sandbox/current-driver.js';
import { BudgetReachedError } from '../gateway/types.js';
import { emitResourceEvent } from '../webhooks/outbox.js';
import { GraderError, runGrader, type Verdict } from './grader.js';

export type OutcomeStatus = 'active' | 'satisfied' | 'failed' | 'max_iterations_reached' | 'interrupted';

/** One finished evaluation as stored on the outcome (and returned by the API). */
export interface StoredEvaluation extends Verdict {
  iteration: number;
  turn: number;
  started_at: string;
  ended_at: string;
}

/**
 * A new active outcome of the session, unless one is active already (409 conflict): the check
 * and the insert are one statement. The caller stores its user.define_outcome event and names
 * it with `attachEvent`; a failed store removes the outcome again (`forget`).
 */
export async function createOutcome(sessionId: string, input: UserDefineOutcomeInput): Promise<string> {
  const id = newId('outc');
  const inserted = await prisma.$executeRaw`
    INSERT INTO "Outcome" ("id", "sessionId", "eventId", "description", "rubric", "maxIterations", "graderLlm", "status", "updatedAt")
    SELECT ${id}, ${sessionId}, '', ${input.description}, ${input.rubric}, ${input.max_iterations}, ${input.grader_llm ?? null}, 'active', now()
    WHERE NOT EXISTS (SELECT 1 FROM "Outcome" WHERE "sessionId" = ${sessionId} AND "status" = 'active')`;
  if (!inserted) throw new AppError('conflict', 'the session already has an active outcome; it must end (or be interrupted) before another is defined');
  return id;
}

export const attachEvent = (outcomeId: string, eventId: string) => prisma.outcome.update({ where: { id: outcomeId }, data: { eventId } });
export const forgetOutcome = (outcomeId: string) => prisma.outcome.deleteMany({ where: { id: outcomeId } });

/** The session's active outcome whose user.define_outcome a turn up to `turn` took (null: none). */
async function activeOutcomeFor(sessionId: string, turn: number): Promise<Outcome | null> {
  const rows = await prisma.$queryRaw<Outcome[]>`
    SELECT o.* FROM "Outcome" o JOIN "SessionEvent" e ON e."id" = o."eventId"
    WHERE o."sessionId" = ${sessionId} AND o."status" = 'active' AND e."turn" IS NOT NULL AND e."turn" <= ${turn}
    LIMIT 1`;
  return rows[0] ?? null;
}

async function finish(outcome: Outcome, status: Exclude<OutcomeStatus, 'active'>, evaluation?: StoredEvaluation): Promise<void> {
  const { count } = await prisma.outcome.updateMany({
    where: { id: outcome.id, status: 'active' },
    data: {
      status,
      endedAt: new Date(),
      ...(evaluation
        ? {
            iterations: { increment: 1 },
            evaluations: [...(outcome.evaluations as unknown as StoredEvaluation[]), evaluation] as unknown as Prisma.InputJsonValue,
          }
        : {}),
    },
  });
  if (count) await outcomeEnded(outcome.sessionId, outcome.id);
}

/** What comes after a turn: the stop reason to go idle with, or the revision turn's input. */
export type AfterTurn = { stop: StopReason; revision?: undefined } | { revision: NewEvent; stop?: undefined };

/** The agent's final reply of the turn: its last complete agent.message. */
async function finalReplyOf(sessionId: string, turn: number): Promise<string> {
  const rows = await prisma.sessionEvent.findMany({
    where: { sessionId, turn, type: 'agent.message' },
    orderBy: { seq: 'desc' },
    select: { payload: true },
    take: 50,
  });
  for (const { payload } of rows) {
    const e = payload as SessionEvent;
    if (e.type === 'agent.message' && e.final) return e.text;
  }
  return '';
}

const outcomeStop = (outcomeId: string, result: string): StopReason => ({ type: 'outcome', outcome_id: outcomeId, result });

/**
 * After an agent turn ended with `stop`: when the session has an active outcome the turn
 * carried, evaluates it (or ends it when the turn did not end on its own). `signal` is the
 * run's interrupt: an interrupt while grading ends the outcome `interrupted` and the run idle
 * with end_turn.
 */
export async function afterAgentTurn(sessionId: string, turn: number, stop: StopReason, signal: AbortSignal): Promise<AfterTurn> {
  if (stop.type === 'requires_action') return { stop }; // the turn resumes after the confirmation; graded then
  const outcome = await activeOutcomeFor(sessionId, turn);
  if (!outcome) return { stop };
  if (signal.aborted || stop.type !== 'end_turn') {
    // Interrupted, out of budget or failed before the grader could look: no verdict.
    await finish(outcome, 'interrupted');
    return { stop };
  }
  const iteration = outcome.iterations + 1;
  const startedAt = new Date().toISOString();
  await commitEvent(sessionId, { type: 'outcome.evaluation_started', fields: { outcome_id: outcome.id, iteration }, turn });
  const session = await prisma.session.findUniqueOrThrow({ where: { id: sessionId }, select: { universeId: true, llm: true } });
  let verdict: Verdict;
  try {
    verdict = await runGrader({
      scope: { sessionId, universeId: session.universeId, turn },
      model: outcome.graderLlm ?? session.llm,
      description: outcome.description,
      rubric: outcome.rubric,
      iteration,
      maxIterations: outcome.maxIterations,
      finalReply: await finalReplyOf(sessionId, turn),
      sandbox: () => sandboxDriver().get(sessionId),
      signal,
    });
  } catch (err) {
    if (signal.aborted) {
      await finish(outcome, 'interrupted');
      return { stop: { type: 'end_turn' } };
    }
    if (err instanceof BudgetReachedError) {
      await finish(outcome, 'interrupted');
      return { stop: { type: 'budget_reached' } };
    }
    const message = err instanceof GraderError ? err.message : `the grader's model call failed: ${err instanceof Error ? err.message : String(err)}`;
    if (!(err instanceof GraderError)) logger.warn({ err, sessionId, outcomeId: outcome.id }, 'grader failed');
    await commitEvent(sessionId, { type: 'session.error', fields: { error: { type: 'grader_error', message, retry_status: 'exhausted' } }, turn });
    const failed: Verdict = { result: 'failed', criteria: [], summary: `the evaluation failed: ${message}` };
    await commitEvent(sessionId, { type: 'outcome.evaluation_ended', fields: { outcome_id: outcome.id, iteration, ...failed }, turn });
    await finish(outcome, 'failed', { ...failed, iteration, turn, started_at: startedAt, ended_at: new Date().toISOString() });
    return { stop: outcomeStop(outcome.id, 'failed') };
  }
  await commitEvent(sessionId, { type: 'outcome.evaluation_ended', fields: { outcome_id: outcome.id, iteration, ...verdict }, turn });
  const evaluation: StoredEvaluation = { ...verdict, iteration, turn, started_at: startedAt, ended_at: new Date().toISOString() };
  if (verdict.result === 'satisfied' || verdict.result === 'failed') {
    await finish(outcome, verdict.result, evaluation);
    return { stop: outcomeStop(outcome.id, verdict.result) };
  }
  if (iteration >= outcome.maxIterations) {
    await finish(outcome, 'max_iterations_reached', evaluation);
    return { stop: outcomeStop(outcome.id, 'max_iterations_reached') };
  }
  await prisma.outcome.update({
    where: { id: outcome.id },
    data: {
      iterations: { increment: 1 },
      evaluations: [...(outcome.evaluations as unknown as StoredEvaluation[]), evaluation] as unknown as Prisma.InputJsonValue,
    },
  });
  return { revision: { type: 'system.message', fields: { content: [{ type: 'text', text: revisionText(verdict, iteration, outcome.maxIterations) }] } } };
}

function revisionText(v: Verdict, iteration: number, max: number): string {
  const failing = v.criteria.filter((c) => !c.passed);
  const lines = failing.map((c) => `- ${c.criterion}: ${c.explanation}`);
  return [
    `The grader checked your work against the outcome's rubric (evaluation ${iteration} of at most ${max}) and asks for a revision.`,
    v.summary,
    ...(lines.length ? ['Criteria not met:', ...lines] : []),
    'Revise the work, then end your turn; it will be graded again.',
  ].join('\n');
}

/** The outbound webhook `outcome.ended` (data: the outcome; its final status is read from GET …/outcomes/{id}). */
async function outcomeEnded(sessionId: string, outcomeId: string): Promise<void> {
  try {
    const session = await prisma.session.findUnique({ where: { id: sessionId }, select: { universeId: true } });
    if (session) await emitResourceEvent(session.universeId, 'outcome.ended', { type: 'outcome', id: outcomeId });
  } catch (err) {
    logger.warn({ err, sessionId, outcomeId }, 'could not queue the outcome.ended webhook event');
  }
}

/**
 * Recovery: a process that died while a turn (or its evaluation) ran leaves the outcome active;
 * the lost turn is over, so its outcome ends `interrupted` (the session goes idle, never stuck).
 */
export async function interruptActiveOutcome(sessionId: string): Promise<void> {
  const rows = await prisma.outcome.findMany({ where: { sessionId, status: 'active' } });
  for (const o of rows) {
    const taken = await prisma.sessionEvent.findFirst({ where: { id: o.eventId, turn: { not: null } }, select: { id: true } });
    if (taken) await finish(o, 'interrupted');
  }
}
