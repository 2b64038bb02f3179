// Agent rules: create (defaults, minted slug, first prompt version), update with optimistic
// concurrency, archive (read-only from then on), delete, prompt versions and write-only secrets.
// Every lookup is scoped to the viewer's universe, so other universes' ids answer 404. Bodies
// arrive validated (src/agents/contract.ts); each change queues its webhook event in its own
// transaction, and the dispatchers are nudged after commit.
import { randomBytes } from 'node:crypto';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { Viewer } from '../auth/viewer.js';
import { seal } from '../crypto/secret-box.js';
import { defaultModel, currentHarness } from '../catalog/catalog.js';
import { checkEffortForEngine, checkModelForEngine } from '../sessions/engine-rules.js';
import { SECRET_KEY_PATTERN, DEFAULT_AGENT_TYPE } from './rules.js';
import type { CreateAgentBody, PatchAgentBody, PutPromptBody, PutSecretBody } from './contract.js';
import { Prisma, type Agent } from '../generated/prisma/client.js';
import { nudgeDispatchers, queueResourceEvent } from '../webhooks/outbox.js';
import type { WebhookEventType } from '../webhooks/catalog.js';
import { checkSkillRefs } from './skill-refs.js';
import { storedMcpServers } from '../tools/mcp/auth.js';
import { checkSecretChange, EgressHeaderConflictError, publishPolicyChange } from '../egress/session-policy.js';
import { checkDefaultChoice } from '../sessions/default-session.js';
import { checkRoster } from './roster.js';

type Tx = Prisma.TransactionClient;

/** Queues `type` for the agent inside the change's transaction. */
function announce(tx: Tx, agent: Pick<Agent, 'id' | 'universeId'>, type: WebhookEventType): Promise<number> {
  return queueResourceEvent(tx, agent.universeId, type, { type: 'agent', id: agent.id });
}

/** Runs a change and its announcement in one transaction, then wakes the dispatchers. */
async function announced<T>(change: (tx: Tx) => Promise<{ value: T; queued: number }>): Promise<T> {
  const { value, queued } = await prisma.$transaction(change);
  if (queued) nudgeDispatchers();
  return value;
}

const ADJECTIVES = ['brisk', 'calm', 'clever', 'eager', 'gentle', 'keen', 'lucid', 'nimble', 'quiet', 'steady', 'swift', 'witty'];
const NOUNS = ['badger', 'falcon', 'heron', 'lynx', 'marten', 'otter', 'owl', 'panda', 'raven', 'robin', 'seal', 'wren'];

/** A friendly name for agents created without a displayName ("swift-otter"). */
function autoName(): string {
  const b = randomBytes(2);
  return `${ADJECTIVES[b[0]! % ADJECTIVES.length]}-${NOUNS[b[1]! % NOUNS.length]}`;
}

function slugify(text: string): string {
  // NFKD splits accented letters into letter + combining mark; the marks are dropped.
  return (
    text
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 48)
      .replace(/-+$/, '') || 'agent'
  );
}

/** The base slug when free, else the base with a random suffix (slugs are unique service-wide). */
async function freeSlug(base: string): Promise<string> {
  if (!(await prisma.agent.findUnique({ where: { slug: base }, select: { id: true } }))) return base;
  for (;;) {
    const candidate = `${base}-${randomBytes(3).toString('hex')}`;
    if (!(await prisma.agent.findUnique({ where: { slug: candidate }, select: { id: true } }))) return candidate;
  }
}

const isPrismaCode = (err: unknown, code: string) => (err as { code?: string } | null)?.code === code;

export async function findAgent(viewer: Viewer, id: string): Promise<Agent> {
  const agent = await prisma.agent.findFirst({ where: { id, universeId: viewer.universe.id } });
  if (!agent) throw new AppError('not_found', 'agent not found');
  return agent;
}

// Archived agents are read-only. 409 conflict (not 400): the request is well-formed, it
// conflicts with the agent's current state, like a stale expectedVersion.
const archivedError = () => new AppError('conflict', 'the agent is archived and read-only');

function assertWritable(agent: Pick<Agent, 'archived'>): void {
  if (agent.archived) throw archivedError();
}

/** Locks the agent row for the rest of the transaction and re-checks it is writable. */
async function lockWritable(tx: Tx, agentId: string): Promise<void> {
  const rows = await tx.$queryRaw<{ archived: boolean }[]>`SELECT "archived" FROM "Agent" WHERE "id" = ${agentId} FOR UPDATE`;
  if (!rows[0]) throw new AppError('not_found', 'agent not found');
  assertWritable(rows[0]);
}

export async function createAgent(viewer: Viewer, body: CreateAgentBody): Promise<Agent> {
  const agentType = body.agentType ?? DEFAULT_AGENT_TYPE;
  const llm = body.llm ?? defaultModel(agentType);
  checkModelForEngine(agentType, llm);
  if (body.reasoningEffort) checkEffortForEngine(agentType, body.reasoningEffort);
  await checkSkillRefs(viewer.universe.id, body.skills);
  const mcpServers = storedMcpServers(body.mcpServers);
  const displayName = body.displayName ?? autoName();
  const id = newId('agent');
  const multiagent = await checkRoster(viewer.universe.id, id, body.multiagent);
  for (let attempt = 0; ; attempt++) {
    const slug = await freeSlug(slugify(displayName));
    try {
      return await announced(async (tx) => {
        const created = await tx.agent.create({
          data: {
            id,
            universeId: viewer.universe.id,
            slug,
            name: body.name ?? displayName,
            displayName,
            description: body.description ?? null,
            agentType,
            llm,
            harnessVersion: currentHarness(agentType),
            reasoningEffort: body.reasoningEffort ?? null,
            capabilities: [...new Set(body.capabilities)],
            instructions: body.instructions as Prisma.InputJsonValue,
            skills: body.skills as Prisma.InputJsonValue,
            mcpServers: mcpServers as unknown as Prisma.InputJsonValue,
            customData: body.customData as Prisma.InputJsonValue,
            metadata: body.metadata as Prisma.InputJsonValue,
            ...(multiagent ? { multiagent: multiagent as Prisma.InputJsonValue } : {}),
            // An explicit prompt, even an empty one, is prompt version 1; omitted or null: none.
            ...(body.prompt != null ? { promptVersions: { create: { id: newId('pv'), version: 1, content: body.prompt, active: true } } } : {}),
          },
        });
        return { value: created, queued: await announce(tx, created, 'agent.created') };
      });
    } catch (err) {
      // Two agents minted the same slug at once: pick another.
      if (!isPrismaCode(err, 'P2002') || attempt > 3) throw err;
    }
  }
}

function mergeMetadata(current: unknown, patch: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...(current as Record<string, unknown>) };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete merged[k];
    else merged[k] = v;
  }
  return merged;
}

const versionConflict = (expected: number, actual: number) =>
  new AppError('version_conflict', `expectedVersion ${expected} does not match the agent's version ${actual}`);

/**
 * Applies a PATCH and bumps `version` in one conditional write (`WHERE version = <read>`), so a
 * stale expectedVersion answers 409 even against a concurrent writer. Without expectedVersion a
 * lost race is retried on a fresh read (metadata merges onto the latest keys), never a 409.
 */
export async function updateAgent(viewer: Viewer, id: string, body: PatchAgentBody): Promise<Agent> {
  for (let attempt = 0; ; attempt++) {
    const agent = await findAgent(viewer, id);
    assertWritable(agent);
    if (body.expectedVersion !== undefined && body.expectedVersion !== agent.version) throw versionConflict(body.expectedVersion, agent.version);
    if (body.llm !== undefined) checkModelForEngine(agent.agentType, body.llm);
    if (body.reasoningEffort) checkEffortForEngine(agent.agentType, body.reasoningEffort);
    if (body.skills && attempt === 0) await checkSkillRefs(agent.universeId, body.skills);
    if (body.defaultSessionId !== undefined) await checkDefaultChoice(agent.id, body.defaultSessionId);
    const data: Prisma.AgentUpdateManyMutationInput = { version: { increment: 1 } };
    if (body.displayName !== undefined) data.displayName = body.displayName;
    if (body.name !== undefined) data.name = body.name;
    if (body.description !== undefined) data.description = body.description;
    if (body.llm !== undefined) data.llm = body.llm;
    if (body.capabilities !== undefined) data.capabilities = [...new Set(body.capabilities)];
    if (body.metadata !== undefined) data.metadata = mergeMetadata(agent.metadata, body.metadata) as Prisma.InputJsonValue;
    // The spec: a PATCH moves the agent to the platform's current engine version (whatever it
    // changes; an explicit harnessVersion asks for nothing else).
    data.harnessVersion = currentHarness(agent.agentType);
    if (body.reasoningEffort !== undefined) data.reasoningEffort = body.reasoningEffort;
    if (body.instructions !== undefined) data.instructions = body.instructions as Prisma.InputJsonValue;
    if (body.skills !== undefined) data.skills = body.skills as Prisma.InputJsonValue;
    if (body.mcpServers !== undefined) data.mcpServers = storedMcpServers(body.mcpServers, agent.mcpServers) as unknown as Prisma.InputJsonValue;
    if (body.customData !== undefined) data.customData = body.customData as Prisma.InputJsonValue;
    if (body.defaultSessionId !== undefined) data.defaultSessionId = body.defaultSessionId;
    if (body.multiagent !== undefined) {
      const roster = await checkRoster(agent.universeId, agent.id, body.multiagent);
      data.multiagent = roster ? (roster as Prisma.InputJsonValue) : Prisma.DbNull;
    }

    const written = await announced(async (tx) => {
      const n = await tx.agent.updateMany({ where: { id: agent.id, version: agent.version, archived: false }, data });
      return { value: n.count === 1, queued: n.count === 1 ? await announce(tx, agent, 'agent.updated') : 0 };
    });
    if (written) return findAgent(viewer, agent.id);
    // Someone else wrote (or archived, or deleted) in between: the next read tells which.
    if (body.expectedVersion !== undefined || attempt >= 9) {
      const now = await findAgent(viewer, id);
      assertWritable(now);
      throw versionConflict(body.expectedVersion ?? agent.version, now.version);
    }
  }
}

/** Admin only (checked by the GraphQL scope). Idempotent: archiving an archived agent changes nothing. */
export async function archiveAgent(viewer: Viewer, id: string): Promise<Agent> {
  const agent = await findAgent(viewer, id);
  if (agent.archived) return agent;
  await announced(async (tx) => {
    const n = await tx.agent.updateMany({ where: { id: agent.id, archived: false }, data: { archived: true, version: { increment: 1 } } });
    return { value: undefined, queued: n.count === 1 ? await announce(tx, agent, 'agent.archived') : 0 };
  });
  return findAgent(viewer, agent.id);
}

/** Admin only. Refused with 409 agent_has_sessions while any session (of any status) exists. */
export async function deleteAgent(viewer: Viewer, id: string): Promise<void> {
  const agent = await findAgent(viewer, id);
  const sessions = await prisma.session.count({ where: { agentId: agent.id } });
  if (sessions > 0) throw new AppError('agent_has_sessions', `the agent has ${sessions} session(s); delete them first`);
  try {
    await announced(async (tx) => {
      await tx.agent.delete({ where: { id: agent.id } });
      return { value: undefined, queued: await announce(tx, agent, 'agent.deleted') };
    });
  } catch (err) {
    // A session was created between the count and the delete (the relation restricts).
    if (isPrismaCode(err, 'P2003')) throw new AppError('agent_has_sessions', 'the agent has sessions; delete them first');
    // Deleted concurrently by another request: it is gone either way.
    if (isPrismaCode(err, 'P2025')) throw new AppError('not_found', 'agent not found');
    throw err;
  }
}

/**
 * Saves the prompt: content equal to the active version answers `unchanged` and writes nothing;
 * otherwise a new version becomes active (sessions started after the save use it) and the
 * agent's version is bumped.
 */
export async function setPrompt(viewer: Viewer, id: string, body: PutPromptBody): Promise<{ version: number; unchanged: boolean }> {
  const agent = await findAgent(viewer, id);
  assertWritable(agent);
  return announced<{ version: number; unchanged: boolean }>(async (tx) => {
    // The row lock numbers concurrent saves one after the other and sees a concurrent archive.
    await lockWritable(tx, agent.id);
    const active = await tx.promptVersion.findFirst({ where: { agentId: agent.id, active: true } });
    if (active && active.content === body.prompt) return { value: { version: active.version, unchanged: true }, queued: 0 };
    const last = await tx.promptVersion.findFirst({ where: { agentId: agent.id }, orderBy: { version: 'desc' }, select: { version: true } });
    const version = (last?.version ?? 0) + 1;
    await tx.promptVersion.updateMany({ where: { agentId: agent.id, active: true }, data: { active: false } });
    await tx.promptVersion.create({ data: { id: newId('pv'), agentId: agent.id, version, content: body.prompt, note: body.note ?? null, active: true } });
    await tx.agent.update({ where: { id: agent.id }, data: { version: { increment: 1 } } });
    return { value: { version, unchanged: false }, queued: await announce(tx, agent, 'agent.updated') };
  });
}

export async function listSecrets(viewer: Viewer, id: string): Promise<{ key: string; description: string }[]> {
  const agent = await findAgent(viewer, id);
  return prisma.agentSecret.findMany({ where: { agentId: agent.id }, orderBy: { key: 'asc' }, select: { key: true, description: true } });
}

function checkKey(key: string): void {
  if (!SECRET_KEY_PATTERN.test(key)) throw new AppError('invalid_request', `secret key must match ${SECRET_KEY_PATTERN.source}`);
}

/** Creates or replaces a secret. The value is sealed (AES-GCM) before it reaches the database. */
export async function putSecret(viewer: Viewer, id: string, key: string, body: PutSecretBody): Promise<void> {
  checkKey(key);
  const agent = await findAgent(viewer, id);
  assertWritable(agent);
  // Refused (nothing stored) when its egress declaration would conflict: see checkSecretChange.
  const old =
    body.description === undefined
      ? await prisma.agentSecret.findUnique({ where: { agentId_key: { agentId: agent.id, key } }, select: { description: true } })
      : null;
  let live: string[];
  try {
    live = await checkSecretChange({ agentId: agent.id, key, description: body.description ?? old?.description ?? '', value: body.value });
  } catch (err) {
    if (err instanceof EgressHeaderConflictError) throw new AppError('egress_header_conflict', err.message);
    throw err;
  }
  const ciphertext = seal(body.value);
  await announced(async (tx) => {
    await lockWritable(tx, agent.id);
    await tx.agentSecret.upsert({
      where: { agentId_key: { agentId: agent.id, key } },
      create: { agentId: agent.id, key, description: body.description ?? '', ciphertext },
      // A rotation without a description keeps the old one.
      update: { ciphertext, ...(body.description !== undefined ? { description: body.description } : {}) },
    });
    await tx.agent.update({ where: { id: agent.id }, data: { version: { increment: 1 } } });
    return { value: undefined, queued: await announce(tx, agent, 'agent.updated') };
  });
  // Live sessions' proxies use the new header on their next request.
  await Promise.all(live.map((sessionId) => publishPolicyChange(sessionId)));
}

/** 404 when the key is not declared. */
export async function deleteSecret(viewer: Viewer, id: string, key: string): Promise<void> {
  checkKey(key);
  const agent = await findAgent(viewer, id);
  assertWritable(agent);
  await announced(async (tx) => {
    await lockWritable(tx, agent.id);
    const n = await tx.agentSecret.deleteMany({ where: { agentId: agent.id, key } });
    if (n.count === 0) throw new AppError('not_found', `secret ${key} not found`);
    await tx.agent.update({ where: { id: agent.id }, data: { version: { increment: 1 } } });
    return { value: undefined, queued: await announce(tx, agent, 'agent.updated') };
  });
}
