// Model subscriptions: a user's own Anthropic or OpenAI credential, sealed at rest, powering
// sessions with modelBilling `account` (no wallet charge).
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { seal, open } from '../crypto/secret-box.js';
import { config } from '../config.js';
import { ProviderError, type Provider, type ProviderCredential } from '../gateway/types.js';
import type { Viewer } from '../auth/viewer.js';
import type { ModelSubscription } from '../generated/prisma/client.js';
import { modelProvider } from '../gateway/models.js';
import { PROVIDERS, type ModelSubscriptionView, type PatchSubscriptionBody, type PutSubscriptionBody } from './contract.js';

function parseProvider(value: string): Provider {
  if (!(PROVIDERS as readonly string[]).includes(value)) throw new AppError('not_found', `unknown provider ${value}; use anthropic or openai`);
  return value as Provider;
}

/** The universe's subscriptions as the spec shows them: two queries however many there are. */
export async function subscriptionViews(universeId: string, rows: ModelSubscription[]): Promise<ModelSubscriptionView[]> {
  if (!rows.length) return [];
  const sessions = await prisma.session.findMany({
    where: { universeId, modelBilling: 'account', status: { not: 'terminated' } },
    select: { id: true, agentId: true, llm: true, title: true, agent: { select: { name: true } } },
    orderBy: { id: 'asc' },
  });
  return rows.map((sub) => ({
    provider: sub.provider as (typeof PROVIDERS)[number],
    label: sub.label,
    status: sub.status as ModelSubscriptionView['status'],
    expiresAt: sub.expiresAt?.toISOString() ?? null,
    lastUsedAt: sub.lastUsedAt?.toISOString() ?? null,
    useForNewAgents: sub.useForNewAgents,
    createdAt: sub.createdAt.toISOString(),
    agents: sessions
      .filter((s) => modelProvider(s.llm) === sub.provider)
      .map((s) => ({ id: s.id, agentId: s.agentId, name: s.agent?.name ?? s.title ?? s.id })),
  }));
}

export async function subscriptionView(sub: ModelSubscription): Promise<ModelSubscriptionView> {
  const [view] = await subscriptionViews(sub.universeId, [sub]);
  return view!;
}

export async function listSubscriptions(viewer: Viewer): Promise<ModelSubscription[]> {
  return prisma.modelSubscription.findMany({ where: { universeId: viewer.universe.id }, orderBy: { provider: 'asc' } });
}

export async function getSubscription(viewer: Viewer, provider: string): Promise<ModelSubscription> {
  const sub = await prisma.modelSubscription.findUnique({
    where: { universeId_provider: { universeId: viewer.universe.id, provider: parseProvider(provider) } },
  });
  if (!sub) throw new AppError('not_found', `no ${provider} subscription is connected`);
  return sub;
}

export async function putSubscription(viewer: Viewer, provider: string, body: PutSubscriptionBody): Promise<ModelSubscription> {
  const p = parseProvider(provider);
  const credential = seal(body.credential);
  return prisma.modelSubscription.upsert({
    where: { universeId_provider: { universeId: viewer.universe.id, provider: p } },
    create: { id: newId('msg').replace('msg_', 'msub_'), universeId: viewer.universe.id, provider: p, label: body.label ?? null, credential },
    update: { credential, status: 'connected', ...(body.label !== undefined ? { label: body.label } : {}) },
  });
}

export async function patchSubscription(viewer: Viewer, provider: string, body: PatchSubscriptionBody): Promise<ModelSubscription> {
  const sub = await getSubscription(viewer, provider);
  return prisma.modelSubscription.update({
    where: { id: sub.id },
    data: {
      ...(body.useForNewAgents !== undefined ? { useForNewAgents: body.useForNewAgents } : {}),
      ...(body.label !== undefined ? { label: body.label } : {}),
    },
  });
}

export async function deleteSubscription(viewer: Viewer, provider: string): Promise<void> {
  const sub = await getSubscription(viewer, provider);
  await prisma.modelSubscription.delete({ where: { id: sub.id } });
}

/** The subscription to auto-apply on a new session, if one is set to. */
export async function autoBilling(universeId: string, provider: Provider): Promise<'platform' | 'account'> {
  const sub = await prisma.modelSubscription.findUnique({ where: { universeId_provider: { universeId, provider } } });
  return sub?.useForNewAgents && sub.status === 'connected' ? 'account' : 'platform';
}

/** The credential a call on account billing uses; a clear error when there is none. */
export async function accountCredential(universeId: string, provider: Provider): Promise<{ cred: ProviderCredential; subscriptionId: string }> {
  const sub = await prisma.modelSubscription.findUnique({ where: { universeId_provider: { universeId, provider } } });
  if (!sub)
    throw new ProviderError(`this session bills to a connected ${provider} subscription, but none is connected: PUT /v1/model-subscriptions/${provider}`, {
      status: null,
      retryable: false,
      code: 'subscription_missing',
    });
  if (sub.status !== 'connected')
    throw new ProviderError(`the ${provider} subscription needs to be reconnected (the provider refused its credential)`, {
      status: null,
      retryable: false,
      code: 'subscription_needs_reconnect',
    });
  const cfg = config();
  return {
    cred: { apiKey: open(sub.credential), baseUrl: provider === 'anthropic' ? cfg.anthropicBaseUrl : cfg.openaiBaseUrl, kind: 'account' },
    subscriptionId: sub.id,
  };
}

export async function markUsed(subscriptionId: string): Promise<void> {
  await prisma.modelSubscription.update({ where: { id: subscriptionId }, data: { lastUsedAt: new Date() } }).catch(() => undefined);
}

export async function markNeedsReconnect(subscriptionId: string): Promise<void> {
  await prisma.modelSubscription.update({ where: { id: subscriptionId }, data: { status: 'needs_reconnect' } }).catch(() => undefined);
}
