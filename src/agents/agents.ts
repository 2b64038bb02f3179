// Agent rules: create (defaults, slug, first prompt version), update with optimistic
// concurrency, archive, delete, prompt versions and write-only secrets.
import { randomBytes } from 'node:crypto';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { parseInput } from '../validation.js';
import type { Viewer } from '../auth/viewer.js';
import { seal } from '../crypto/secret-box.js';
import { defaultModel, currentHarness } from '../catalog/catalog.js';
import { checkEffortForEngine, checkModelForEngine } from '../sessions/engine-rules.js';
import { createAgentBody, patchAgentBody, putPromptBody, putSecretBody, SECRET_KEY_PATTERN } from './rules.js';
import type { Agent, Prisma } from '../generated/prisma/client.js';
import { emitResourceEvent } from '../webhooks/outbox.js';

const ADJECTIVES = ['brisk', 'calm', 'clever', 'eager', 'gentle', 'keen', 'lucid', 'nimble', 'quiet', 'steady', 'swift', 'witty'];
const NOUNS = ['badger', 'falcon', 'heron', 'lynx', 'marten', 'otter', 'owl', 'panda', 'raven', 'robin', 'seal', 'wren'];

function autoName(): string {
  const b = randomBytes(2);
  return `${ADJECTIVES[b[0]! % ADJECTIVES.length]}-${NOUNS[b[1]! % NOUNS.length]}`;
}

export function slugify(text: string): string {
  return text.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 48) || 'agent';
}

async function freeSlug(base: string): Promise<string> {
  if (!(await prisma.agent.findUnique({ where: { slug: base }, select: { id: true } }))) return base;
  for (;;) {
    const candidate = `${base}-${randomBytes(3).toString('hex')}`;
    if (!(await prisma.agent.findUnique({ where: { slug: candidate }, select: { id: true } }))) return candidate;
  }
}

export async function findAgent(viewer: Viewer, id: string): Promise<Agent> {
  const agent = await prisma.agent.findFirst({ where: { id, universeId: viewer.universe.id } });
  if (!agent) throw new AppError('not_found', 'agent not found');
  return agent;
}

function assertWritable(agent: Agent): void {
  if (agent.archived) throw new AppError('conflict', 'the agent is archived and read-only');
}

export async function createAgent(viewer: Viewer, input: unknown): Promise<Agent> {
  const body = parseInput(createAgentBody, input ?? {});
  const agentType = body.agentType ?? 'hermes';
  const llm = body.llm ?? defaultModel(agentType);
  checkModelForEngine(agentType, llm);
  if (body.reasoningEffort) checkEffortForEngine(agentType, body.reasoningEffort);
  const displayName = body.displayName ?? autoName();
  const id = newId('agent');
  for (let attempt = 0; ; attempt++) {
    const slug = await freeSlug(slugify(displayName));
    try {
      const created = await prisma.agent.create({
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
          mcpServers: body.mcpServers as Prisma.InputJsonValue,
          customData: body.customData as Prisma.InputJsonValue,
          metadata: body.metadata as Prisma.InputJsonValue,
          ...(body.prompt ? { promptVersions: { create: { id: newId('pv'), version: 1, content: body.prompt, active: true } } } : {}),
        },
      });
      await emitResourceEvent(viewer.universe.id, 'agent.created', { type: 'agent', id });
      return created;
    } catch (err) {
      // Two agents minted the same slug at once: pick another.
      if ((err as { code?: string }).code !== 'P2002' || attempt > 3) throw err;
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

/** Applies `data` and bumps `version`, failing with 409 when `expectedVersion` is stale. */
async function bumpedUpdate(agent: Agent, data: Prisma.AgentUpdateManyMutationInput, expectedVersion?: number): Promise<Agent> {
  const version = expectedVersion ?? agent.version;
  const n = await prisma.agent.updateMany({ where: { id: agent.id, version, archived: false }, data: { ...data, version: { increment: 1 } } });
  if (n.count !== 1) {
    const now = await prisma.agent.findUniqueOrThrow({ where: { id: agent.id } });
    if (now.archived) throw new AppError('conflict', 'the agent is archived and read-only');
    throw new AppError('version_conflict', `expectedVersion ${version} does not match the agent's version ${now.version}`);
  }
  await emitResourceEvent(agent.universeId, 'agent.updated', { type: 'agent', id: agent.id });
  return prisma.agent.findUniqueOrThrow({ where: { id: agent.id } });
}

export async function updateAgent(viewer: Viewer, id: string, input: unknown): Promise<Agent> {
  const body = parseInput(patchAgentBody, input ?? {});
  const agent = await findAgent(viewer, id);
  assertWritable(agent);
  if (body.expectedVersion !== undefined && body.expectedVersion !== agent.version) {
    throw new AppError('version_conflict', `expectedVersion ${body.expectedVersion} does not match the agent's version ${agent.version}`);
  }
  if (body.llm !== undefined) checkModelForEngine(agent.agentType, body.llm);
  if (body.reasoningEffort) checkEffortForEngine(agent.agentType, body.reasoningEffort);
  const data: Prisma.AgentUpdateManyMutationInput = {};
  if (body.displayName !== undefined) data.displayName = body.displayName;
  if (body.name !== undefined) data.name = body.name;
  if (body.description !== undefined) data.description = body.description;
  if (body.llm !== undefined) data.llm = body.llm;
  if (body.capabilities !== undefined) data.capabilities = [...new Set(body.capabilities)];
  if (body.metadata !== undefined) data.metadata = mergeMetadata(agent.metadata, body.metadata) as Prisma.InputJsonValue;
  // The spec: PATCH harnessVersion moves the agent to the platform's current engine version.
  if (body.harnessVersion !== undefined) data.harnessVersion = currentHarness(agent.agentType);
  if (body.reasoningEffort !== undefined) data.reasoningEffort = body.reasoningEffort;
  if (body.instructions !== undefined) data.instructions = body.instructions as Prisma.InputJsonValue;
  if (body.skills !== undefined) data.skills = body.skills as Prisma.InputJsonValue;
  if (body.mcpServers !== undefined) data.mcpServers = body.mcpServers as Prisma.InputJsonValue;
  if (body.customData !== undefined) data.customData = body.customData as Prisma.InputJsonValue;
  return bumpedUpdate(agent, data, body.expectedVersion);
}

export async function archiveAgent(viewer: Viewer, id: string): Promise<Agent> {
  const agent = await findAgent(viewer, id);
  if (agent.archived) return agent;
  const archived = await prisma.agent.update({ where: { id: agent.id }, data: { archived: true, version: { increment: 1 } } });
  await emitResourceEvent(agent.universeId, 'agent.archived', { type: 'agent', id: agent.id });
  return archived;
}

export async function deleteAgent(viewer: Viewer, id: string): Promise<void> {
  const agent = await findAgent(viewer, id);
  const sessions = await prisma.session.count({ where: { agentId: agent.id } });
  if (sessions > 0) throw new AppError('agent_has_sessions', `the agent has ${sessions} session(s); delete them first`);
  try {
    await prisma.agent.delete({ where: { id: agent.id } });
    await emitResourceEvent(agent.universeId, 'agent.deleted', { type: 'agent', id: agent.id });
  } catch (err) {
    // A session was created between the count and the delete (the relation restricts).
    if ((err as { code?: string }).code === 'P2003') throw new AppError('agent_has_sessions', 'the agent has sessions; delete them first');
    throw err;
  }
}

export async function setPrompt(viewer: Viewer, id: string, input: unknown): Promise<{ version: number; unchanged: boolean }> {
  const body = parseInput(putPromptBody, input ?? {});
  const agent = await findAgent(viewer, id);
  assertWritable(agent);
  return prisma.$transaction(async (tx) => {
    // Lock the agent row so two saves number their versions one after the other.
    await tx.$executeRaw`SELECT 1 FROM "Agent" WHERE "id" = ${agent.id} FOR UPDATE`;
    const active = await tx.promptVersion.findFirst({ where: { agentId: agent.id, active: true } });
    if (active && active.content === body.prompt) return { version: active.version, unchanged: true };
    const last = await tx.promptVersion.findFirst({ where: { agentId: agent.id }, orderBy: { version: 'desc' }, select: { version: true } });
    const version = (last?.version ?? 0) + 1;
    await tx.promptVersion.updateMany({ where: { agentId: agent.id, active: true }, data: { active: false } });
    await tx.promptVersion.create({ data: { id: newId('pv'), agentId: agent.id, version, content: body.prompt, note: body.note ?? null, active: true } });
    await tx.agent.update({ where: { id: agent.id }, data: { version: { increment: 1 } } });
    return { version, unchanged: false };
  });
}

export async function listSecrets(viewer: Viewer, id: string) {
  const agent = await findAgent(viewer, id);
  return prisma.agentSecret.findMany({ where: { agentId: agent.id }, orderBy: { key: 'asc' }, select: { key: true, description: true } });
}

function checkKey(key: string): void {
  if (!SECRET_KEY_PATTERN.test(key)) throw new AppError('invalid_request', 'secret key must match ^[A-Za-z_][A-Za-z0-9_]{0,127}$');
}

export async function putSecret(viewer: Viewer, id: string, key: string, input: unknown): Promise<void> {
  checkKey(key);
  const body = parseInput(putSecretBody, input ?? {});
  const agent = await findAgent(viewer, id);
  assertWritable(agent);
  const ciphertext = seal(body.value);
  await prisma.agentSecret.upsert({
    where: { agentId_key: { agentId: agent.id, key } },
    create: { agentId: agent.id, key, description: body.description ?? '', ciphertext },
    update: { ciphertext, ...(body.description !== undefined ? { description: body.description } : {}) },
  });
  await prisma.agent.update({ where: { id: agent.id }, data: { version: { increment: 1 } } });
}

export async function deleteSecret(viewer: Viewer, id: string, key: string): Promise<void> {
  checkKey(key);
  const agent = await findAgent(viewer, id);
  assertWritable(agent);
  const n = await prisma.agentSecret.deleteMany({ where: { agentId: agent.id, key } });
  if (n.count === 0) throw new AppError('not_found', `secret ${key} not found`);
  await prisma.agent.update({ where: { id: agent.id }, data: { version: { increment: 1 } } });
}
