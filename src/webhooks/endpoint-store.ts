// The webhook endpoint table, shared by outbound endpoints (kind `outbound`) and channel webhook
// endpoints (kind `channel`): one create (whsec_ secret sealed, shown once), find, list, patch
// (re-enabling keeps the secret and restarts the failure count) and delete per kind, so the one
// dispatcher delivers both exactly alike.
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { secretText } from '../ids.js';
import { seal } from '../crypto/secret-box.js';
import type { Viewer } from '../auth/viewer.js';
import type { WebhookEndpoint } from '../generated/prisma/client.js';
import { checkOutboundUrl } from '../net/outbound-guard.js';

export type EndpointKind = 'outbound' | 'channel';

export interface EndpointPatch {
  url?: string;
  events?: string[];
  status?: 'active' | 'disabled';
}

/** The outbound guard on a URL about to be stored (deliveries are checked again at connect time). */
async function checkUrl(value: string): Promise<void> {
  const problem = await checkOutboundUrl(value);
  if (problem) throw new AppError('invalid_request', `url: ${problem}`);
}

export function endpointStore(kind: EndpointKind, what: string) {
  const find = async (viewer: Viewer, id: string): Promise<WebhookEndpoint> => {
    const endpoint = await prisma.webhookEndpoint.findFirst({ where: { id, universeId: viewer.universe.id, kind } });
    if (!endpoint) throw new AppError('not_found', `${what} not found`);
    return endpoint;
  };
  return {
    async create(viewer: Viewer, id: string, body: { url: string; events: string[] }): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
      await checkUrl(body.url);
      const secret = `whsec_${secretText(24)}`;
      const endpoint = await prisma.webhookEndpoint.create({
        data: { id, universeId: viewer.universe.id, kind, url: body.url, events: [...new Set(body.events)], secret: seal(secret) },
      });
      return { endpoint, secret };
    },
    list: (viewer: Viewer): Promise<WebhookEndpoint[]> =>
      prisma.webhookEndpoint.findMany({ where: { universeId: viewer.universe.id, kind }, orderBy: { id: 'asc' } }),
    find,
    async patch(viewer: Viewer, id: string, body: EndpointPatch): Promise<WebhookEndpoint> {
      const endpoint = await find(viewer, id);
      if (body.url !== undefined) await checkUrl(body.url);
      return prisma.webhookEndpoint.update({
        where: { id: endpoint.id },
        data: {
          ...(body.url !== undefined ? { url: body.url } : {}),
          ...(body.events !== undefined ? { events: [...new Set(body.events)] } : {}),
          ...(body.status !== undefined ? { status: body.status, ...(body.status === 'active' ? { failureCount: 0 } : {}) } : {}),
        },
      });
    },
    async remove(viewer: Viewer, id: string): Promise<void> {
      const endpoint = await find(viewer, id);
      await prisma.webhookEndpoint.delete({ where: { id: endpoint.id } });
    },
  };
}
