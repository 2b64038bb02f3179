// The session state table of the spec, as data, and the one guarded way to act on it: every
// status change (archive, delete, provisioning done, a runner's claim/release, recovery) and
// every gate (sending work) asks `decide`, and moves happen with `transition`, a conditional
// UPDATE that only succeeds from the statuses the table allows (safe across processes).
import { prisma } from '../db/client.js';
import { AppError, type ErrorCode } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';

export const SESSION_STATUSES = ['provisioning', 'idle', 'running', 'terminated'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];
export type SessionAction = 'archive' | 'delete' | 'send' | 'fork' | 'provisioned' | 'claim' | 'release' | 'recover';

type Outcome =
  | { kind: 'move'; to: SessionStatus }
  /** Allowed, status unchanged (idempotent archive, sending to a live session). */
  | { kind: 'stay' }
  /** Allowed: the record goes. */
  | { kind: 'remove' }
  | { kind: 'refuse'; code: ErrorCode; message: string };

interface Row {
  from: readonly SessionStatus[];
  outcome: Outcome;
}

const RUNNING_REFUSAL: Outcome = { kind: 'refuse', code: 'session_running', message: 'the session is running; interrupt it and wait for idle first' };
const ARCHIVED_REFUSAL: Outcome = { kind: 'refuse', code: 'session_archived', message: 'the session is archived; it accepts no new messages' };

/** The spec's table (and the moves it leaves "not shown", decided here). */
export const SESSION_TABLE: Record<SessionAction, readonly Row[]> = {
  archive: [
    { from: ['idle', 'provisioning'], outcome: { kind: 'move', to: 'terminated' } },
    { from: ['terminated'], outcome: { kind: 'stay' } },
    { from: ['running'], outcome: RUNNING_REFUSAL },
  ],
  delete: [
    { from: ['idle', 'terminated', 'provisioning'], outcome: { kind: 'remove' } },
    { from: ['running'], outcome: RUNNING_REFUSAL },
  ],
  // A turn sent while provisioning waits for it; one sent while running is queued.
  send: [
    { from: ['provisioning', 'idle', 'running'], outcome: { kind: 'stay' } },
    { from: ['terminated'], outcome: ARCHIVED_REFUSAL },
  ],
  // A fork copies a live session (a running one up to its last completed turn); an archived
  // session's sandbox is gone (nothing to copy), a provisioning one has no workspace yet.
  fork: [
    { from: ['idle', 'running'], outcome: { kind: 'stay' } },
    { from: ['provisioning'], outcome: { kind: 'refuse', code: 'conflict', message: 'the session is still provisioning; fork it once it is idle' } },
    {
      from: ['terminated'],
      outcome: { kind: 'refuse', code: 'session_archived', message: 'the session is archived: its workspace is gone, so it cannot be forked' },
    },
  ],
  provisioned: [{ from: ['provisioning'], outcome: { kind: 'move', to: 'idle' } }],
  claim: [{ from: ['idle'], outcome: { kind: 'move', to: 'running' } }],
  release: [{ from: ['running'], outcome: { kind: 'move', to: 'idle' } }],
  recover: [{ from: ['running'], outcome: { kind: 'move', to: 'idle' } }],
};

const NOT_ALLOWED: Outcome = { kind: 'refuse', code: 'conflict', message: 'the session cannot do that in its current status' };

/** What the table says about `action` from `status`; a reached budget refuses new work. */
export function decide(action: SessionAction, status: SessionStatus, opts: { budgetReached?: boolean } = {}): Outcome {
  const row = SESSION_TABLE[action].find((r) => r.from.includes(status));
  const outcome = row?.outcome ?? NOT_ALLOWED;
  if (action === 'send' && outcome.kind !== 'refuse' && opts.budgetReached) {
    return { kind: 'refuse', code: 'budget_reached', message: 'the session reached its budget; raise or remove it with PATCH to continue' };
  }
  return outcome;
}

/** Throws the table's refusal (in the spec's error envelope) when `action` is not allowed. */
export function assertAllowed(action: SessionAction, status: SessionStatus, opts: { budgetReached?: boolean } = {}): Outcome {
  const outcome = decide(action, status, opts);
  if (outcome.kind === 'refuse') throw new AppError(outcome.code, outcome.message);
  return outcome;
}

/** The statuses from which `action` moves or removes the session. */
export function movableFrom(action: SessionAction): SessionStatus[] {
  return SESSION_TABLE[action].filter((r) => r.outcome.kind === 'move' || r.outcome.kind === 'remove').flatMap((r) => [...r.from]);
}

/** The single move of `action`: the statuses it starts from and the one it reaches. */
export function moveOf(action: SessionAction): { from: SessionStatus[]; to: SessionStatus } {
  const rows = SESSION_TABLE[action].filter((r) => r.outcome.kind === 'move');
  if (rows.length !== 1) throw new Error(`${action} is not a single move of the session table`);
  const { from, outcome } = rows[0]!;
  return { from: [...from], to: (outcome as { to: SessionStatus }).to };
}

/**
 * Applies a move of the table with one conditional UPDATE: it happens only if the session is,
 * at that instant, in a status the move starts from (and matches `where`, e.g. its runner).
 * Returns whether it happened.
 */
export async function transition(
  sessionId: string,
  action: SessionAction,
  extra: Prisma.SessionUpdateManyMutationInput = {},
  tx: Pick<typeof prisma, 'session'> = prisma,
  where: Prisma.SessionWhereInput = {},
): Promise<boolean> {
  const { from, to } = moveOf(action);
  const moved = await tx.session.updateMany({ where: { ...where, id: sessionId, status: { in: from } }, data: { ...extra, status: to } });
  return moved.count === 1;
}
