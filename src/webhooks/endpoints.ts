// Outbound webhook endpoints: create (the whsec_ secret shown once), list, detail, patch
// (re-enabling keeps the secret), delete. Channel webhook endpoints share the table (kind
// `channel`) and are not seen here.
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { newId, secretText } from '../ids.js';
import { seal } from '../crypto/secret-box.js';
import type { Viewer } from '../auth/viewer.js';
import type { WebhookEndpoint } from '../generated/prisma/client.js';
import { checkOutboundUrl } from '../net/outbound-guard.js';
import type { CreateWebhookEndpointBody, CreatedWebhookEndpointView, PatchWebhookEndpointBody, WebhookEndpointView } from './contract.js';

const OUTBOUND = 'outbound';

/** The outbound guard on a URL about to be stored (deliveries are checked again at connect time). */
async function checkUrl(value: string): Promise<void> {
  const problem = await checkOutboundUrl(value);
  if (problem) throw new AppError('invalid_request', problem);
}

export function webhookEndpointView(e: WebhookEndpoint): WebhookEndpointView {
  return {
    id: e.id,
    url: e.url,
    events: e.events as WebhookEndpointView['events'],
    status: e.status as WebhookEndpointView['status'],
    failure_count: e.failureCount,
    created_at: e.createdAt.toISOString(),
  };
}

export async function createEndpoint(viewer: Viewer, body: CreateWebhookEndpointBody): Promise<CreatedWebhookEndpointView> {
  await checkUrl(body.url);
  const secret = `whsec_${secretText(24)}`;
  const endpoint = await prisma.webhookEndpoint.create({
    data: { id: newId('whep'), universeId: viewer.universe.id, kind: OUTBOUND, url: body.url, events: [...new Set(body.events)], secret: seal(secret) },
  });
  return { ...webhookEndpointView(endpoint), secret };
}

export async function listEndpoints(viewer: Viewer): Promise<WebhookEndpointView[]> {
  const rows = await prisma.webhookEndpoint.findMany({ where: { universeId: viewer.universe.id, kind: OUTBOUND }, orderBy: { id: 'asc' } });
  return rows.map(webhookEndpointView);
}

export async function findEndpoint(viewer: Viewer, id: string): Promise<WebhookEndpoint> {
  const endpoint = await prisma.webhookEndpoint.findFirst({ where: { id, universeId: viewer.universe.id, kind: OUTBOUND } });
  if (!endpoint) throw new AppError('not_found', 'webhook endpoint not found');
  return endpoint;
}

export async function patchEndpoint(viewer: Viewer, id: string, body: PatchWebhookEndpointBody): Promise<WebhookEndpoint> {
  const endpoint = await findEndpoint(viewer, id);
  if (body.url !== undefined) await checkUrl(body.url);
  return prisma.webhookEndpoint.update({
    where: { id: endpoint.id },
    data: {
      ...(body.url !== undefined ? { url: body.url } : {}),
      ...(body.events !== undefined ? { events: [...new Set(body.events)] } : {}),
      // Re-enabling starts a fresh count of consecutive failures.
      ...(body.status !== undefined ? { status: body.status, ...(body.status === 'active' ? { failureCount: 0 } : {}) } : {}),
    },
  });
}

export async function deleteEndpoint(viewer: Viewer, id: string): Promise<void> {
  const endpoint = await findEndpoint(viewer, id);
  await prisma.webhookEndpoint.delete({ where: { id: endpoint.id } });
}
