// Model subscriptions: a user's own Anthropic or OpenAI credential, sealed at rest, powering
// sessions with modelBilling `account` (no wallet charge).
import { z } from 'zod';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { parseInput } from '../validation.js';
import { seal, open } from '../crypto/secret-box.js';
import { config } from '../config.js';
import { ProviderError, type Provider, type ProviderCredential } from '../gateway/types.js';
import type { Viewer } from '../auth/viewer.js';

export const PROVIDERS = ['anthropic', 'openai'] as const;
export const putSubscriptionBody = z.strictObject({ credential: z.string().min(1).max(100_000), label: z.string().max(60).nullish() });
export const patchSubscriptionBody = z.strictObject({ useForNewAgents: z.boolean().optional(), label: z.string().max(60).nullable().optional() });

export function parseProvider(value: string): Provider {
  if (!(PROVIDERS as readonly string[]).includes(value)) throw new AppError('not_found', `unknown provider ${value}; use anthropic or openai`);
  return value as Provider;
}

export async function listSubscriptions(viewer: Viewer) {
  return prisma.modelSubscription.findMany({ where: { universeId: viewer.universe.id }, orderBy: { provider: 'asc' } });
}

export async function getSubscription(viewer: Viewer, provider: string) {
  const sub = await prisma.modelSubscription.findUnique({ where: { universeId_provider: { universeId: viewer.universe.id, provider: parseProvider(provider) } } });
  if (!sub) throw new AppError('not_found', `no ${provider} subscription is connected`);
  return sub;
}

export async function putSubscription(viewer: Viewer, provider: string, input: unknown) {
  const p = parseProvider(provider);
  const body = parseInput(putSubscriptionBody, input ?? {});
  const credential = seal(body.credential);
  return prisma.modelSubscription.upsert({
    where: { universeId_provider: { universeId: viewer.universe.id, provider: p } },
    create: { id: newId('msg').replace('msg_', 'msub_'), universeId: viewer.universe.id, provider: p, label: body.label ?? null, credential },
    update: { credential, status: 'connected', ...(body.label !== undefined ? { label: body.label } : {}) },
  });
}

export async function patchSubscription(viewer: Viewer, provider: string, input: unknown) {
  const body = parseInput(patchSubscriptionBody, input ?? {});
  const sub = await getSubscription(viewer, provider);
  return prisma.modelSubscription.update({
    where: { id: sub.id },
    data: { ...(body.useForNewAgents !== undefined ? { useForNewAgents: body.useForNewAgents } : {}), ...(body.label !== undefined ? { label: body.label } : {}) },
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
  if (!sub) throw new ProviderError(`this session bills to a connected ${provider} subscription, but none is connected: PUT /v1/model-subscriptions/${provider}`, { status: null, retryable: false, code: 'subscription_missing' });
  if (sub.status !== 'connected') throw new ProviderError(`the ${provider} subscription needs to be reconnected (the provider refused its credential)`, { status: null, retryable: false, code: 'subscription_needs_reconnect' });
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
