// The agent's default session: the one the session verbs act on when given the agent's id
// (CONTRACT: "any /sessions/{id}/… verb given an agent_… id acts on that agent's default
// session"). The rule, kept by the statements below:
//   - it is always a live session of the agent (not archived, not deleted), or null when the
//     agent has none;
//   - it stays put while it is live: a session created while the agent has a live default does
//     not take over (a routine's fresh session does not steal the user's conversation);
//   - a session created while there is none becomes it;
//   - the user may choose any live session of the agent (PATCH /agents/{id} `defaultSessionId`);
//   - when it is archived or deleted, the agent's newest live session (by creation) takes over.
// A default left pointing at a session that is no longer live (data from before this rule, or a
// choice racing an archive) is repaired when the agent id is next resolved.
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { Prisma } from '../generated/prisma/client.js';

type Db = Pick<typeof prisma, '$executeRaw'>;

// Threads (hidden child sessions, issue #32) are never an agent's default.
const live = (sessionAlias: Prisma.Sql) => Prisma.sql`${sessionAlias}."status" <> 'terminated' AND ${sessionAlias}."parentSessionId" IS NULL`;

/** Inside the create's transaction: the new session becomes the default when the agent has no live one. */
export async function claimDefaultIfVacant(db: Db, agentId: string, sessionId: string): Promise<void> {
  await db.$executeRaw`
    UPDATE "Agent" a SET "defaultSessionId" = ${sessionId}
    WHERE a."id" = ${agentId} AND (a."defaultSessionId" IS NULL OR NOT EXISTS (
      SELECT 1 FROM "Session" s WHERE s."id" = a."defaultSessionId" AND ${live(Prisma.sql`s`)}))`;
}

/**
 * Where `sessionId` is (or was) an agent's default: the agent's newest live session other than
 * it takes over, or null. Run after the archive, or in the delete's transaction.
 */
export async function moveDefaultFrom(db: Db, sessionId: string): Promise<void> {
  await db.$executeRaw`
    UPDATE "Agent" a SET "defaultSessionId" = (
      SELECT s."id" FROM "Session" s WHERE s."agentId" = a."id" AND s."id" <> ${sessionId} AND ${live(Prisma.sql`s`)}
      ORDER BY s."createdAt" DESC, s."id" DESC LIMIT 1)
    WHERE a."defaultSessionId" = ${sessionId}`;
}

/** The agent's default session id for agent-id addressing, repaired first when it is no longer live. */
export async function defaultSessionOf(universeId: string, agentId: string): Promise<string> {
  const agent = await prisma.agent.findFirst({ where: { id: agentId, universeId }, select: { defaultSessionId: true } });
  if (!agent) throw new AppError('not_found', 'agent not found');
  let id = agent.defaultSessionId;
  const current = id ? await prisma.session.findUnique({ where: { id }, select: { status: true } }) : null;
  if (id && (!current || current.status === 'terminated')) {
    await moveDefaultFrom(prisma, id);
    id = (await prisma.agent.findUniqueOrThrow({ where: { id: agentId }, select: { defaultSessionId: true } })).defaultSessionId;
  }
  if (!id) throw new AppError('not_found', 'the agent has no live session to act on: create one with POST /sessions');
  return id;
}

/** PATCH /agents/{id} `defaultSessionId`: must name a live session of this agent (400 otherwise). */
export async function checkDefaultChoice(agentId: string, sessionId: string): Promise<void> {
  const session = await prisma.session.findFirst({ where: { id: sessionId, agentId }, select: { status: true } });
  if (!session) throw new AppError('invalid_request', `defaultSessionId: ${sessionId} is not a session of this agent`);
  if (session.status === 'terminated') throw new AppError('invalid_request', `defaultSessionId: ${sessionId} is archived; the default must be a live session`);
}
