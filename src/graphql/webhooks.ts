// Outbound webhook endpoints and their delivery records. Inputs and outputs are derived from the
// zod schemas of src/webhooks/contract.ts (the ones REST validates with and OpenAPI documents).
import { builder } from './builder.js';
import { prisma } from '../db/client.js';
import { createEndpoint, patchEndpoint, deleteEndpoint, findEndpoint, listEndpoints, webhookEndpointView } from '../webhooks/endpoints.js';
import {
  createWebhookEndpointBody,
  patchWebhookEndpointBody,
  webhookEndpointBody,
  createdWebhookEndpointBody,
  webhookEventType,
} from '../webhooks/contract.js';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/catalog.js';
import { enumOf, inputOf, objectOf } from './graphql-types.js';
import { takeInput } from './input.js';
import { newestFirst } from './id-connection.js';

const WebhookEndpointType = objectOf(webhookEndpointBody);
const WebhookEventTypeEnum = enumOf(webhookEventType);

const WebhookDeliveryType = builder.prismaObject('WebhookDelivery', {
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The X-Service-Delivery value, stable across retries' }),
    eventId: t.exposeString('eventId'),
    eventType: t.exposeString('eventType'),
    status: t.exposeString('status', { description: 'pending, succeeded or failed' }),
    attempts: t.exposeInt('attempts'),
    nextAttemptAt: t.expose('nextAttemptAt', { type: 'DateTime', nullable: true }),
    lastStatusCode: t.exposeInt('lastStatusCode', { nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.objectField(WebhookEndpointType, 'deliveries', (t) =>
  t.connection({
    type: WebhookDeliveryType,
    description: 'Delivery records, newest first',
    resolve: (endpoint, args) =>
      newestFirst(args, { defaultSize: 20, maxSize: 100 }, (page) =>
        prisma.webhookDelivery.findMany({ where: { endpointId: endpoint.id, ...page.where }, orderBy: page.orderBy, take: page.take }),
      ),
  }),
);

builder.queryField('webhookEventTypes', (t) =>
  t.field({
    type: [WebhookEventTypeEnum],
    description: 'Events an endpoint can subscribe to',
    authScopes: { read: true },
    resolve: () => [...WEBHOOK_EVENT_TYPES],
  }),
);
builder.queryField('webhookEndpoints', (t) =>
  t.field({
    type: [WebhookEndpointType],
    description: 'Outbound endpoints, oldest first',
    authScopes: { read: true },
    resolve: (_r, _a, ctx) => listEndpoints(ctx.viewer!),
  }),
);
builder.queryField('webhookEndpoint', (t) =>
  t.field({
    type: WebhookEndpointType,
    args: { id: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_r, { id }, ctx) => webhookEndpointView(await findEndpoint(ctx.viewer!, id)),
  }),
);
builder.mutationField('createWebhookEndpoint', (t) =>
  t.field({
    type: objectOf(createdWebhookEndpointBody),
    description: 'Register an endpoint; the whsec_ secret is in this answer only',
    args: { input: t.arg({ type: inputOf(createWebhookEndpointBody, 'CreateWebhookEndpoint'), required: true }) },
    authScopes: { admin: true },
    resolve: (_r, { input }, ctx) => createEndpoint(ctx.viewer!, takeInput(ctx, createWebhookEndpointBody, input)),
  }),
);
builder.mutationField('updateWebhookEndpoint', (t) =>
  t.field({
    type: WebhookEndpointType,
    description: 'Change url or events, or re-enable (status active keeps the secret)',
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: inputOf(patchWebhookEndpointBody, 'UpdateWebhookEndpoint'), required: true }) },
    authScopes: { admin: true },
    resolve: async (_r, { id, input }, ctx) => webhookEndpointView(await patchEndpoint(ctx.viewer!, id, takeInput(ctx, patchWebhookEndpointBody, input))),
  }),
);
builder.mutationField('deleteWebhookEndpoint', (t) =>
  t.boolean({
    args: { id: t.arg.string({ required: true }) },
    authScopes: { admin: true },
    resolve: async (_r, { id }, ctx) => {
      await deleteEndpoint(ctx.viewer!, id);
      return true;
    },
  }),
);
