// Reading a session's outcomes (issue #33): the list (oldest first, page tokens like session
// resources) and one outcome, with every evaluation. Defining one is a send (send.ts); the loop
// that grades it is the runner's (src/runtime/outcomes.ts).
import type { Viewer } from '../auth/viewer.js';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import type { Outcome } from '../generated/prisma/client.js';
import { decodePageToken, encodePageToken } from '../pagination/page-token.js';
import type { OutcomeView } from './contract.js';
import { resolveSession } from './sessions.js';

export function outcomeView(o: Outcome): OutcomeView {
  return {
    id: o.id,
    session_id: o.sessionId,
    description: o.description,
    rubric: o.rubric,
    max_iterations: o.maxIterations,
    grader_llm: o.graderLlm,
    status: o.status as OutcomeView['status'],
    iterations: o.iterations,
    evaluations: o.evaluations as unknown as OutcomeView['evaluations'],
    created_at: o.createdAt.toISOString(),
    ended_at: o.endedAt?.toISOString() ?? null,
  };
}

export async function listOutcomes(
  viewer: Viewer,
  sessionRef: string,
  limit: number,
  page: string | null,
): Promise<{ data: OutcomeView[]; next_page: string | null }> {
  if (limit < 1 || limit > 100) throw new AppError('invalid_request', 'limit must be between 1 and 100');
  const after = page ? decodePageToken('outcomes', page) : null;
  const session = await resolveSession(viewer, sessionRef);
  const rows = await prisma.outcome.findMany({
    where: { sessionId: session.id, ...(after ? { id: { gt: after } } : {}) },
    orderBy: { id: 'asc' },
    take: limit + 1,
  });
  const slice = rows.slice(0, limit);
  return { data: slice.map(outcomeView), next_page: rows.length > limit ? encodePageToken('outcomes', slice[slice.length - 1]!.id) : null };
}

export async function getOutcome(viewer: Viewer, sessionRef: string, outcomeId: string): Promise<OutcomeView> {
  const session = await resolveSession(viewer, sessionRef);
  const o = await prisma.outcome.findFirst({ where: { id: outcomeId, sessionId: session.id } });
  if (!o) throw new AppError('not_found', 'outcome not found');
  return outcomeView(o);
}
