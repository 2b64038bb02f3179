// Session rules: create (with the agent's defaults and up-front provisioning), read, patch,
// archive, delete; each keeps the agent's default session (default-session.ts) live.
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { Viewer } from '../auth/viewer.js';
import type { CreateSessionBody, PatchSessionBody, SessionView } from './contract.js';
import { storeEvents, announceEvents, commitEvent, type NewEvent } from '../events/store.js';
import { sessionViews } from './view.js';
import { assertAllowed, movableFrom, transition, type SessionStatus } from '../runtime/session-state-machine.js';
import { checkModelForEngine, checkEffortForEngine } from './engine-rules.js';
import { scheduleProvisioning, teardownSandbox } from './provisioning.js';
import { enqueueSessionRun } from '../runtime/queue.js';
import type { Agent, Session } from '../generated/prisma/client.js';
import { centsToNano, nanoToCents } from '../money.js';
import { materializeContent } from './attachments.js';
import { planResources } from '../resources/resources.js';
import { vaultsForNewSession } from '../vaults/session-vaults.js';
import { autoBilling } from '../billing/subscriptions.js';
import { assertAccountBillable } from '../billing/account-billing.js';
import { assertCanStartTurn } from '../billing/spend-gate.js';
import { modelProvider } from '../gateway/models.js';
import { environmentForNewSession } from '../environments/environments.js';
import { warmSandboxes, type WarmRequest } from '../runtime/warm-sandboxes.js';
import { mcpRelayFor } from '../engines/cli/core/mcp-relay.js';
import { currentHarness } from '../catalog/catalog.js';
import { rosterForNewSession, type RosterMember } from '../agents/roster.js';
import { interruptThreads } from '../runtime/threads.js';
import { claimDefaultIfVacant, defaultSessionOf, moveDefaultFrom } from './default-session.js';

const notFound = () => new AppError('not_found', 'session not found');

/** Resolves `sess_…` or `agent_…` (the agent's default session, default-session.ts) within the viewer's universe. */
export async function resolveSession(viewer: Viewer, idOrAgent: string): Promise<Session> {
  if (idOrAgent.startsWith('agent_')) idOrAgent = await defaultSessionOf(viewer.universe.id, idOrAgent);
  // A thread (`sthr_`, a hidden child session) is reached through its session's /threads only.
  const session = await prisma.session.findFirst({ where: { id: idOrAgent, universeId: viewer.universe.id, parentSessionId: null } });
  if (!session) throw notFound();
  return session;
}

export const statusOf = (session: Pick<Session, 'status'>) => session.status as SessionStatus;

export function budgetCents(amount: string): bigint {
  return BigInt(amount);
}

export async function createSession(viewer: Viewer, body: CreateSessionBody): Promise<Session> {
  const agent = await prisma.agent.findFirst({
    where: { id: body.agent, universeId: viewer.universe.id },
    include: { promptVersions: { where: { active: true }, select: { version: true } } },
  });
  if (!agent) throw new AppError('not_found', 'agent not found');
  if (agent.archived) throw new AppError('conflict', 'the agent is archived; new sessions are rejected');

  const llm = body.llm ?? agent.llm;
  checkModelForEngine(agent.agentType, llm);
  if (body.reasoningEffort) checkEffortForEngine(agent.agentType, body.reasoningEffort);
  const budgetMax = body.budget ? budgetCents(body.budget.max_list_cost.amount) : null;
  // The model is resolved first; then billing: explicit, or a subscription set for new agents.
  const modelBilling = body.modelBilling ?? (await autoBilling(viewer.universe.id, modelProvider(llm)));
  if (body.modelBilling === 'account') await assertAccountBillable(viewer.universe.id, llm);
  if (budgetMax !== null && budgetMax <= 0n) throw new AppError('invalid_request', 'budget amount must be above zero');
  // initial_events are all-or-nothing with the create: refused by the spend gate, no session is made.
  if (body.initial_events?.length) await assertCanStartTurn(viewer.universe.id, modelBilling);
  // A coordinator's roster, each agent's version snapshotted (an archived one refuses the start).
  const roster = await rosterForNewSession(agent, llm);

  // A sandbox made ahead for this engine (its CLI's server already warm) gives the session its id.
  const warmRequest: WarmRequest = {
    agentType: agent.agentType,
    version: agent.harnessVersion ?? currentHarness(agent.agentType),
    plain: !body.vcpus && !body.memoryMb && !body.environment_id && !body.resources?.length && !(agent.skills as unknown[]).length && !mcpRelayFor(agent),
  };
  const warmId = warmSandboxes().take(warmRequest);
  try {
    return await createSessionRow(viewer, body, agent, warmId ?? newId('sess'), { llm, modelBilling, budgetMax, roster });
  } catch (err) {
    if (warmId) warmSandboxes().giveBack(warmRequest, warmId);
    throw err;
  }
}

async function createSessionRow(
  viewer: Viewer,
  body: CreateSessionBody,
  agent: Agent & { promptVersions: { version: number }[] },
  id: string,
  resolved: { llm: string; modelBilling: string; budgetMax: bigint | null; roster: RosterMember[] | null },
): Promise<Session> {
  const { llm, modelBilling, budgetMax, roster } = resolved;
  const initial: NewEvent[] = [];
  let outcomeId: string | null = null;
  for (const e of body.initial_events ?? []) {
    if (e.type === 'user.define_outcome') {
      outcomeId = newId('outc');
      initial.push({
        type: e.type,
        fields: { outcome_id: outcomeId, description: e.description, rubric: e.rubric, max_iterations: e.max_iterations, grader_llm: e.grader_llm ?? null },
      });
    } else initial.push({ type: 'user.message', fields: { content: await materializeContent(viewer.universe.id, id, e.content) } });
  }
  const environment = body.environment_id ? await environmentForNewSession(viewer.universe.id, body.environment_id) : null;
  const vaultIds = await vaultsForNewSession(viewer.universe.id, body.vault_ids ?? [], agent.id, body.resources ?? []);
  const planned = await planResources(viewer.universe.id, id, body.resources ?? [], [], { agentId: agent.id });
  const { session, batch } = await prisma.$transaction(async (tx) => {
    const session = await tx.session.create({
      data: {
        id,
        universeId: viewer.universe.id,
        agentId: agent.id,
        title: body.title ?? null,
        status: 'provisioning',
        agentType: agent.agentType,
        llm,
        reasoningEffort: body.reasoningEffort ?? null,
        modelBilling,
        metadata: (body.metadata ?? {}) as object,
        instructions: (body.instructions ?? []) as object,
        vcpus: body.vcpus ?? null,
        memoryMb: body.memoryMb ?? null,
        budgetMaxCents: budgetMax,
        promptVersion: agent.promptVersions[0]?.version ?? null,
        vaultIds,
        environmentId: environment?.id ?? null,
        ...(roster ? { roster: roster as unknown as object } : {}),
      },
    });
    await claimDefaultIfVacant(tx, agent.id, id);
    const batch = await storeEvents(tx, id, initial);
    const defined = batch.stored.find((s) => s.event.type === 'user.define_outcome')?.event;
    if (outcomeId && defined?.type === 'user.define_outcome')
      await tx.outcome.create({
        data: {
          id: outcomeId,
          sessionId: id,
          eventId: defined.id,
          description: defined.description,
          rubric: defined.rubric,
          maxIterations: defined.max_iterations,
          graderLlm: defined.grader_llm,
        },
      });
    for (const p of planned) await tx.sessionResource.create({ data: { ...p.row, checkout: p.row.checkout ?? undefined } as never });
    return { session, batch };
  });
  announceEvents(batch);
  scheduleProvisioning(session);
  return session;
}

/** The universe's sessions (of one agent when given), newest first, in a constant number of queries. */
export async function listSessions(viewer: Viewer, agentId: string | null | undefined): Promise<SessionView[]> {
  return sessionViews({ universeId: viewer.universe.id, parentSessionId: null, ...(agentId ? { agentId } : {}) });
}

export async function patchSession(viewer: Viewer, idOrAgent: string, body: PatchSessionBody): Promise<Session> {
  const session = await resolveSession(viewer, idOrAgent);
  if (body.llm !== undefined) checkModelForEngine(session.agentType, body.llm);
  if (body.reasoningEffort) checkEffortForEngine(session.agentType, body.reasoningEffort);
  // Account billing needs a connected subscription for the (new) model's provider.
  const llm = body.llm ?? session.llm;
  const billing = body.modelBilling ?? session.modelBilling;
  if (billing === 'account' && (body.modelBilling === 'account' || modelProvider(llm) !== modelProvider(session.llm)))
    await assertAccountBillable(session.universeId, llm);
  const data: Record<string, unknown> = {};
  if (body.title !== undefined) data.title = body.title;
  if (body.llm !== undefined) data.llm = body.llm;
  if (body.reasoningEffort !== undefined) data.reasoningEffort = body.reasoningEffort;
  if (body.modelBilling !== undefined) data.modelBilling = body.modelBilling;
  if (body.metadata !== undefined) {
    const merged: Record<string, unknown> = { ...(session.metadata as Record<string, unknown>) };
    for (const [k, v] of Object.entries(body.metadata)) {
      if (v === null) delete merged[k];
      else merged[k] = v;
    }
    data.metadata = merged;
  }
  if (body.budget !== undefined) {
    if (body.budget === null) {
      data.budgetMaxCents = null;
      data.budgetReachedAt = null;
    } else {
      const max = budgetCents(body.budget.max_list_cost.amount);
      if (session.budgetMaxCents === null) throw new AppError('invalid_request', 'a budget can only be attached at create');
      const consumedCents = nanoToCents(session.consumedNanoUsd);
      if (centsToNano(max) <= session.consumedNanoUsd) {
        throw new AppError('invalid_request', `the new cap must be strictly above the consumed cost (${consumedCents} cents)`);
      }
      data.budgetMaxCents = max;
      data.budgetReachedAt = null;
    }
  }
  if (!Object.keys(data).length) return session;
  const updated = await prisma.session.update({ where: { id: session.id }, data });
  // A raised or removed cap un-pauses the session: inputs that waited may run now.
  if (session.budgetReachedAt && !updated.budgetReachedAt) await enqueueSessionRun(session.id);
  return updated;
}

export async function archiveSession(viewer: Viewer, idOrAgent: string): Promise<Session> {
  const session = await resolveSession(viewer, idOrAgent);
  if (assertAllowed('archive', statusOf(session)).kind === 'stay') return session;
  if (!(await transition(session.id, 'archive'))) {
    // The status changed meanwhile (a turn started, or another archive won): judge again.
    const now = await prisma.session.findUniqueOrThrow({ where: { id: session.id } });
    assertAllowed('archive', statusOf(now));
    return now;
  }
  await commitEvent(session.id, { type: 'session.status_terminated', fields: {} });
  await archiveThreads(session.id);
  await moveDefaultFrom(prisma, session.id);
  await teardownSandbox(session.id);
  // A delete racing this archive may have removed the record meanwhile.
  const archived = await prisma.session.findFirst({ where: { id: session.id } });
  if (!archived) throw notFound();
  return archived;
}

export async function deleteSession(viewer: Viewer, idOrAgent: string): Promise<void> {
  const session = await resolveSession(viewer, idOrAgent);
  assertAllowed('delete', statusOf(session));
  // Announce before removal so live streams learn of it; then the row and its events go (its
  // threads' with it: their rows cascade).
  await commitEvent(session.id, { type: 'session.deleted', fields: {} });
  const threads = await prisma.session.findMany({ where: { parentSessionId: session.id }, select: { id: true } });
  if (threads.length) await interruptThreads(session.id, 'session deleted');
  for (const t of threads) await commitEvent(t.id, { type: 'session.deleted', fields: {} }).catch(() => undefined);
  await prisma.$transaction(async (tx) => {
    await moveDefaultFrom(tx, session.id);
    await tx.sessionResource.deleteMany({ where: { sessionId: session.id } });
    const removed = await tx.session.deleteMany({ where: { id: session.id, status: { in: movableFrom('delete') } } });
    if (removed.count !== 1) throw new AppError('session_running', 'the session started running; interrupt it first');
  });
  await teardownSandbox(session.id);
}

/** Multiagent: a session's archive ends its threads (running ones are interrupted first). */
async function archiveThreads(sessionId: string): Promise<void> {
  await interruptThreads(sessionId, 'session archived');
  const threads = await prisma.session.findMany({ where: { parentSessionId: sessionId, status: { not: 'terminated' } }, select: { id: true } });
  if (!threads.length) return;
  await prisma.session.updateMany({ where: { id: { in: threads.map((t) => t.id) } }, data: { status: 'terminated' } });
  for (const t of threads) await commitEvent(t.id, { type: 'session.status_terminated', fields: {} }).catch(() => undefined);
}

export { enqueueSessionRun };
