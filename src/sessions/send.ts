// Sending events to a session (202): validates the whole batch, stores every event (inputs wait
// for a turn), then wakes the runner; text sent to an idle session is stored with its turn's
// start in one statement instead (sendAndStartAtOnce). user.interrupt stops a running turn; a
// user.tool_confirmation answers a tool call waiting for one and resumes the paused turn.
import { AppError } from '../errors.js';
import type { Viewer } from '../auth/viewer.js';
import type { SendEventsBody, LegacySendBody } from '../events/content.js';
import { commitEvents, commitEvent, type SessionEvent, type NewEvent } from '../events/store.js';
import { resolveSession, statusOf } from './sessions.js';
import { assertAllowed } from '../runtime/session-state-machine.js';
import { enqueueSessionRun } from '../runtime/queue.js';
import { publishInterrupt, storeInputsAndStartTurn } from '../runtime/runner.js';
import { service } from '../services/registry.js';
import { Prisma } from '../generated/prisma/client.js';
import type { Session } from '../generated/prisma/client.js';
import { assertCanStartTurn } from '../billing/spend-gate.js';
import { materializeContent } from './attachments.js';
import { legacyPartsToContent } from './legacy-parts.js';
import { checkConfirmations } from '../tools/confirmations.js';
import { attachEvent, createOutcome, forgetOutcome } from '../runtime/outcomes.js';
import { interruptThreads } from '../runtime/threads.js';

function who(viewer: Viewer): string {
  return viewer.auth === 'token' ? `token:${viewer.tokenId}` : `user:${viewer.user.id}`;
}

function assertAcceptsWork(session: Session): void {
  assertAllowed('send', statusOf(session), { budgetReached: session.budgetReachedAt !== null });
}

/** The spend gate: platform billing needs a positive balance before work is accepted. */
const assertCredits = (session: Session) => assertCanStartTurn(session.universeId, session.modelBilling);

/**
 * Text inputs to an idle session of this universe, with credits, in a process that runs turns:
 * stored and their turn started in one statement (the first frame follows one round trip).
 * Null when that does not apply or the session's row did not match; nothing is stored then.
 */
async function sendAndStartAtOnce(viewer: Viewer, idOrAgent: string, body: SendEventsBody): Promise<SessionEvent[] | null> {
  if (idOrAgent.startsWith('agent_') || !service('turnQueue').runsTurnsHere) return null;
  const inputs: NewEvent[] = [];
  for (const e of body.events) {
    if ((e.type !== 'user.message' && e.type !== 'system.message') || e.content.some((b) => b.type !== 'text')) return null;
    inputs.push(e.type === 'user.message' ? { type: e.type, fields: { content: e.content } } : { type: e.type, fields: { content: e.content } });
  }
  const universeId = viewer.universe.id;
  const stored = await storeInputsAndStartTurn(idOrAgent, inputs, { universeId });
  return stored && stored.map((s) => s.event);
}

export async function sendEvents(viewer: Viewer, idOrAgent: string, body: SendEventsBody): Promise<SessionEvent[]> {
  const atOnce = await sendAndStartAtOnce(viewer, idOrAgent, body);
  if (atOnce) return atOnce;
  const session = await resolveSession(viewer, idOrAgent);
  const hasInputs = body.events.some((e) => e.type !== 'user.interrupt');
  if (hasInputs) {
    assertAcceptsWork(session);
    await assertCredits(session);
  } else assertAllowed('send', statusOf(session));

  // user.compact (issue #31): only hermes compacts a conversation; CLI engines keep their own.
  if (body.events.some((e) => e.type === 'user.compact') && session.agentType !== 'hermes')
    throw new AppError('invalid_request', `user.compact: the ${session.agentType} engine manages its own context; only hermes sessions compact`);
  const by = who(viewer);
  const confirmations = await checkConfirmations(
    session.id,
    body.events.filter((e) => e.type === 'user.tool_confirmation'),
  );
  // Attachments become per-session copies before anything is stored (all or nothing).
  const prepared: NewEvent[] = [];
  for (const e of body.events) {
    if (e.type === 'user.message') prepared.push({ type: e.type, fields: { content: await materializeContent(session.universeId, session.id, e.content) } });
    else if (e.type === 'user.interrupt' || e.type === 'user.compact') prepared.push({ type: e.type, fields: { by } });
    else if (e.type === 'user.tool_confirmation') {
      const c = confirmations.shift()!;
      prepared.push({ type: e.type, fields: { tool_use_id: c.tool_use_id, result: c.result, deny_message: c.deny_message ?? null, by } });
    } else if (e.type === 'system.message') prepared.push({ type: e.type, fields: { content: e.content } });
  }
  // An outcome (issue #33): at most one active per session (409 conflict); its row is made first,
  // its user.define_outcome event names it.
  const outcomes: string[] = [];
  try {
    for (const e of body.events) {
      if (e.type !== 'user.define_outcome') continue;
      const id = await createOutcome(session.id, e);
      outcomes.push(id);
      prepared.push({
        type: e.type,
        fields: { outcome_id: id, description: e.description, rubric: e.rubric, max_iterations: e.max_iterations, grader_llm: e.grader_llm ?? null },
      });
    }
  } catch (err) {
    for (const id of outcomes) await forgetOutcome(id);
    throw err;
  }
  let stored: Awaited<ReturnType<typeof commitEvents>>;
  try {
    stored = await commitEvents(session.id, prepared);
  } catch (err) {
    for (const id of outcomes) await forgetOutcome(id);
    throw err;
  }
  for (const { event } of stored) if (event.type === 'user.define_outcome') await attachEvent(event.outcome_id, event.id);
  if (body.events.some((e) => e.type === 'user.interrupt')) {
    await publishInterrupt(session.id, by);
    await interruptThreads(session.id, by); // multiagent: every running thread too
  }
  if (hasInputs) await enqueueSessionRun(session.id);
  return stored.map((s) => s.event);
}

/** POST /sessions/{id}/interrupt: `interrupting` when a turn runs, else `no_turn`. */
export async function interruptSession(viewer: Viewer, idOrAgent: string): Promise<'interrupting' | 'no_turn'> {
  const session = await resolveSession(viewer, idOrAgent);
  const by = who(viewer);
  // Multiagent: an interrupt of the session interrupts every running thread.
  const threads = await interruptThreads(session.id, by);
  if (session.status !== 'running') return threads ? 'interrupting' : 'no_turn';
  await commitEvent(session.id, { type: 'user.interrupt', fields: { by } });
  await publishInterrupt(session.id, by);
  return 'interrupting';
}

/** Deprecated `{parts}` send: translated into one user.message; the caller answers 410. */
export async function legacySend(viewer: Viewer, idOrAgent: string, body: LegacySendBody): Promise<SessionEvent> {
  const content = legacyPartsToContent(body.parts);
  const [event] = await sendEvents(viewer, idOrAgent, { events: [{ type: 'user.message', content }] });
  return event!;
}
