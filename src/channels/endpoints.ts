// Channel webhook endpoints: rows of the shared webhook endpoint table with kind `channel`, so
// the one outbox dispatcher signs, retries (0/5/30 s, same X-Service-Delivery) and disables
// them after sustained failure exactly like outbound endpoints. The whsec_ secret shows once.
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { secretText } from '../ids.js';
import { seal } from '../crypto/secret-box.js';
import { checkOutboundUrl } from '../net/outbound-guard.js';
import type { Viewer } from '../auth/viewer.js';
import type { WebhookEndpoint } from '../generated/prisma/client.js';
import { channelId } from './ids.js';
import type { ChannelEventType, ChannelWebhookEndpointJson, CreateChannelWebhookBody, PatchChannelWebhookBody } from './contract.js';

export const CHANNEL_ENDPOINT = 'channel';

export function channelEndpointJson(e: WebhookEndpoint): ChannelWebhookEndpointJson {
  return { id: e.id, url: e.url, events: e.events as ChannelEventType[], status: e.status as 'active' | 'disabled' };
}

async function checkUrl(value: string): Promise<void> {
  const problem = await checkOutboundUrl(value);
  if (problem) throw new AppError('invalid_request', `url: ${problem}`);
}

export async function createChannelWebhook(viewer: Viewer, body: CreateChannelWebhookBody): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  await checkUrl(body.url);
  const secret = `whsec_${secretText(24)}`;
  const endpoint = await prisma.webhookEndpoint.create({
    data: { id: channelId('whep'), universeId: viewer.universe.id, kind: CHANNEL_ENDPOINT, url: body.url, events: [...new Set(body.events)], secret: seal(secret) },
  });
  return { endpoint, secret };
}

export function listChannelWebhooks(viewer: Viewer): Promise<WebhookEndpoint[]> {
  return prisma.webhookEndpoint.findMany({ where: { universeId: viewer.universe.id, kind: CHANNEL_ENDPOINT }, orderBy: { id: 'asc' } });
}

export async function findChannelWebhook(viewer: Viewer, id: string): Promise<WebhookEndpoint> {
  const endpoint = await prisma.webhookEndpoint.findFirst({ where: { id, universeId: viewer.universe.id, kind: CHANNEL_ENDPOINT } });
  if (!endpoint) throw new AppError('not_found', 'channel webhook endpoint not found');
  return endpoint;
}

export async function patchChannelWebhook(viewer: Viewer, id: string, body: PatchChannelWebhookBody): Promise<WebhookEndpoint> {
  const endpoint = await findChannelWebhook(viewer, id);
  if (body.url !== undefined) await checkUrl(body.url);
  return prisma.webhookEndpoint.update({
    where: { id: endpoint.id },
    data: {
      ...(body.url !== undefined ? { url: body.url } : {}),
      ...(body.events !== undefined ? { events: [...new Set(body.events)] } : {}),
      // Re-enabling keeps the secret and starts a fresh count of consecutive failures.
      ...(body.status !== undefined ? { status: body.status, ...(body.status === 'active' ? { failureCount: 0 } : {}) } : {}),
    },
  });
}

/** Removes the endpoint; bindings routed to it go with it. */
export async function deleteChannelWebhook(viewer: Viewer, id: string): Promise<void> {
  const endpoint = await findChannelWebhook(viewer, id);
  await prisma.webhookEndpoint.delete({ where: { id: endpoint.id } });
}
