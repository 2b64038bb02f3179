// Outbound webhook endpoints: the create/patch bodies and the endpoint as returned, with the
// spec's limits. One definition each for REST validation, OpenAPI, GraphQL and the domain.
import { z } from 'zod';
import { ABSOLUTE_HTTP_URL } from '../contract/documented.js';
import { dateTime } from '../contract/zod-walk.js';
import { WEBHOOK_EVENT_TYPES } from './catalog.js';

export const webhookEventType = z
  .enum(WEBHOOK_EVENT_TYPES, { error: (i) => `unknown event ${JSON.stringify(i.input)}; see the documented list` })
  .meta({ id: 'WebhookEventType' });
const webhookEndpointStatus = z.enum(['active', 'disabled']).meta({ id: 'WebhookEndpointStatus' });

const events = z.array(webhookEventType).min(1).max(32).describe('Event types to deliver (duplicates are kept once)');
const url = z
  .string()
  .min(1)
  .max(2048)
  .meta({ ...ABSOLUTE_HTTP_URL, description: 'https, or http for localhost only; private and link-local addresses are refused' });

export const createWebhookEndpointBody = z.strictObject({ url, events }).meta({ id: 'CreateWebhookEndpointInput' });
export type CreateWebhookEndpointBody = z.output<typeof createWebhookEndpointBody>;

export const patchWebhookEndpointBody = z
  .strictObject({
    url: url.optional(),
    events: events.optional(),
    status: webhookEndpointStatus.optional().describe('active re-enables a disabled endpoint (the secret is kept)'),
  })
  .meta({ id: 'UpdateWebhookEndpointInput' });
export type PatchWebhookEndpointBody = z.output<typeof patchWebhookEndpointBody>;

const endpointFields = {
  id: z.string(),
  url: z.string(),
  events: z.array(webhookEventType),
  status: webhookEndpointStatus,
  failure_count: z.int32().min(0).describe('Consecutive failed attempts'),
  created_at: dateTime(z.string()),
};
export const webhookEndpointBody = z.strictObject(endpointFields).meta({ id: 'WebhookEndpoint' });
export type WebhookEndpointView = z.output<typeof webhookEndpointBody>;

export const createdWebhookEndpointBody = z
  .strictObject({
    ...endpointFields,
    secret: z.string().describe('whsec_… signing secret: in this answer only'),
  })
  .meta({ id: 'CreatedWebhookEndpoint' });
export type CreatedWebhookEndpointView = z.output<typeof createdWebhookEndpointBody>;

export const webhookEndpointList = z.strictObject({ data: z.array(webhookEndpointBody).describe('Oldest first') }).meta({ id: 'WebhookEndpointList' });
