// Channel webhook endpoints: rows of the shared webhook endpoint table with kind `channel`, so
// the one outbox dispatcher signs, retries (0/5/30 s, same X-Service-Delivery) and disables
// them after sustained failure exactly like outbound endpoints. The whsec_ secret shows once.
import { endpointStore } from '../webhooks/endpoint-store.js';
import type { Viewer } from '../auth/viewer.js';
import type { WebhookEndpoint } from '../generated/prisma/client.js';
import { channelId } from './ids.js';
import type { ChannelEventType, ChannelWebhookEndpointJson, CreateChannelWebhookBody, PatchChannelWebhookBody } from './contract.js';

export const CHANNEL_ENDPOINT = 'channel';
const store = endpointStore(CHANNEL_ENDPOINT, 'channel webhook endpoint');

export function channelEndpointJson(e: WebhookEndpoint): ChannelWebhookEndpointJson {
  return { id: e.id, url: e.url, events: e.events as ChannelEventType[], status: e.status as 'active' | 'disabled' };
}

export const createChannelWebhook = (viewer: Viewer, body: CreateChannelWebhookBody): Promise<{ endpoint: WebhookEndpoint; secret: string }> =>
  store.create(viewer, channelId('whep'), body);

export const listChannelWebhooks = (viewer: Viewer): Promise<WebhookEndpoint[]> => store.list(viewer);

export const findChannelWebhook = (viewer: Viewer, id: string): Promise<WebhookEndpoint> => store.find(viewer, id);

export const patchChannelWebhook = (viewer: Viewer, id: string, body: PatchChannelWebhookBody): Promise<WebhookEndpoint> => store.patch(viewer, id, body);

/** Removes the endpoint; bindings routed to it go with it. */
export const deleteChannelWebhook = (viewer: Viewer, id: string): Promise<void> => store.remove(viewer, id);
