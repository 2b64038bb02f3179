// Reading and replacing an agent's tool policy (GET/PUT /v1/agents/{id}/tool-policy, the
// GraphQL `toolPolicy` field and `setAgentToolPolicy`). A change bumps the agent's version, is
// refused on an archived agent like every other change, and is announced as agent.updated. It
// applies to the next tool call of every session of the agent.
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import type { Viewer } from '../auth/viewer.js';
import { findAgent } from './agents.js';
import { nudgeDispatchers, queueResourceEvent } from '../webhooks/outbox.js';
import { parseToolPolicy, type ToolPolicy } from '../tools/policy.js';

export async function getToolPolicy(viewer: Viewer, agentId: string): Promise<ToolPolicy> {
  return parseToolPolicy((await findAgent(viewer, agentId)).toolPolicy);
}

export async function setToolPolicy(viewer: Viewer, agentId: string, policy: ToolPolicy): Promise<ToolPolicy> {
  const agent = await findAgent(viewer, agentId);
  const queued = await prisma.$transaction(async (tx) => {
    const n = await tx.agent.updateMany({ where: { id: agent.id, archived: false }, data: { toolPolicy: policy, version: { increment: 1 } } });
    if (n.count === 0) throw new AppError('conflict', 'the agent is archived and read-only');
    return queueResourceEvent(tx, agent.universeId, 'agent.updated', { type: 'agent', id: agent.id });
  });
  if (queued) nudgeDispatchers();
  return policy;
}
