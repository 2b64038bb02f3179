// Outbound webhook endpoints: create (the whsec_ secret shown once), list, detail, patch
// (re-enabling keeps the secret), delete.
import { z } from 'zod';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { newId, secretText } from '../ids.js';
import { parseInput } from '../validation.js';
import { seal } from '../crypto/secret-box.js';
import type { Viewer } from '../auth/viewer.js';
import { WEBHOOK_EVENT_TYPES } from './catalog.js';
import { checkOutboundUrl } from '../net/outbound-guard.js';

const events = z.array(z.enum(WEBHOOK_EVENT_TYPES, { error: (i) => `unknown event ${JSON.stringify(i.input)}; see the documented list` })).min(1).max(32);
const url = z.string().min(1).max(2048);
export const createEndpointBody = z.strictObject({ url, events });
export const patchEndpointBody = z.strictObject({ url: url.optional(), events: events.optional(), status: z.enum(['active', 'disabled']).optional() });

/** The outbound guard on a URL about to be stored (deliveries are checked again at connect time). */
async function checkUrl(value: string): Promise<void> {
  const problem = await checkOutboundUrl(value);
  if (problem) throw new AppError('invalid_request', problem);
}

export async function createEndpoint(viewer: Viewer, input: unknown) {
  const body = parseInput(createEndpointBody, input ?? {});
  await checkUrl(body.url);
  const secret = `whsec_${secretText(24)}`;
  const endpoint = await prisma.webhookEndpoint.create({
    data: { id: newId('whep'), universeId: viewer.universe.id, url: body.url, events: [...new Set(body.events)], secret: seal(secret) },
  });
  return { endpoint, secret };
}

export async function findEndpoint(viewer: Viewer, id: string) {
  const endpoint = await prisma.webhookEndpoint.findFirst({ where: { id, universeId: viewer.universe.id } });
  if (!endpoint) throw new AppError('not_found', 'webhook endpoint not found');
  return endpoint;
}

export async function patchEndpoint(viewer: Viewer, id: string, input: unknown) {
  const body = parseInput(patchEndpointBody, input ?? {});
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
