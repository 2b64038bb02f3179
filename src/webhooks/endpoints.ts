// Outbound webhook endpoints: create (the whsec_ secret shown once), list, detail, patch
// (re-enabling keeps the secret), delete — the shared endpoint store of kind `outbound`.
// Channel webhook endpoints share the table (kind `channel`) and are not seen here.
import { newId } from '../ids.js';
import type { Viewer } from '../auth/viewer.js';
import type { WebhookEndpoint } from '../generated/prisma/client.js';
import { endpointStore } from './endpoint-store.js';
import type { CreateWebhookEndpointBody, CreatedWebhookEndpointView, PatchWebhookEndpointBody, WebhookEndpointView } from './contract.js';

const store = endpointStore('outbound', 'webhook endpoint');

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
  const { endpoint, secret } = await store.create(viewer, newId('whep'), body);
  return { ...webhookEndpointView(endpoint), secret };
}

export async function listEndpoints(viewer: Viewer): Promise<WebhookEndpointView[]> {
  return (await store.list(viewer)).map(webhookEndpointView);
}

export const findEndpoint = (viewer: Viewer, id: string): Promise<WebhookEndpoint> => store.find(viewer, id);

export const patchEndpoint = (viewer: Viewer, id: string, body: PatchWebhookEndpointBody): Promise<WebhookEndpoint> => store.patch(viewer, id, body);

export const deleteEndpoint = (viewer: Viewer, id: string): Promise<void> => store.remove(viewer, id);
