// Channels: apps, connections (and their binding slot), thread bindings, posting, proactive
// deliveries, channel webhook endpoints, the loopback surface and the `channelEvents`
// subscription. Every input and output type is derived from src/channels/contract.ts, the same
// schemas REST validates with and OpenAPI documents.
import { builder } from './builder.js';
import { enumOf, inputOf, objectOf } from './graphql-types.js';
import { takeInput } from './input.js';
import {
  createAppBody,
  patchAppBody,
  channelApp,
  createConnectionBody,
  channelConnection,
  putBindingBody,
  createBindingBody,
  channelBinding,
  channelCapabilities,
  postMessageBody,
  postedMessage,
  deliveryBody,
  channelDelivery,
  createChannelWebhookBody,
  patchChannelWebhookBody,
  channelWebhookEndpoint,
  createdChannelWebhookEndpoint,
  channelEvent,
  loopbackInboundBody,
  loopbackAccepted,
  loopbackOutboxItem,
  CHANNEL_EVENT_TYPES,
  eventTypeEnum,
  type ChannelEventJson,
  type ConnectionPlatform,
} from '../channels/contract.js';
import { appJson, createApp, deleteApp, findApp, listApps, patchApp } from '../channels/apps.js';
import { capabilitiesOf, connectionJson, createConnection, deleteConnection, findConnection, listConnections } from '../channels/connections.js';
import { bindingJson, clearConnectionBinding, createBinding, deleteBinding, listBindings, setConnectionBinding } from '../channels/bindings.js';
import { createDelivery, postMessage } from '../channels/posting.js';
import {
  channelEndpointJson,
  createChannelWebhook,
  deleteChannelWebhook,
  findChannelWebhook,
  listChannelWebhooks,
  patchChannelWebhook,
} from '../channels/endpoints.js';
import { loopbackOutbox, receiveLoopback } from '../channels/loopback.js';
import { channelEventFeed } from '../channels/mirror.js';
import { withinLength } from './arg-limits.js';

const ChannelAppType = objectOf(channelApp);
const ChannelConnectionType = objectOf(channelConnection);
const ChannelBindingType = objectOf(channelBinding);
const ChannelCapabilitiesType = objectOf(channelCapabilities);
const ChannelWebhookType = objectOf(channelWebhookEndpoint);
const CreatedChannelWebhookType = objectOf(createdChannelWebhookEndpoint);
const ChannelEventObject = objectOf(channelEvent);
const LoopbackOutboxItemType = objectOf(loopbackOutboxItem);

// ---- apps ----

builder.queryField('channelApps', (t) =>
  t.field({ type: [ChannelAppType], authScopes: { read: true }, resolve: async (_r, _a, ctx) => (await listApps(ctx.viewer!)).map(appJson) }),
);
builder.queryField('channelApp', (t) =>
  t.field({
    type: ChannelAppType,
    args: { id: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_r, a, ctx) => appJson(await findApp(ctx.viewer!, a.id)),
  }),
);
builder.mutationField('createChannelApp', (t) =>
  t.field({
    type: ChannelAppType,
    description: 'Register a platform app (calls the platform; a refusal fails with invalid_spec). imessage answers coming_soon',
    args: { input: t.arg({ type: inputOf(createAppBody, 'CreateChannelApp'), required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { input }, ctx) => appJson(await createApp(ctx.viewer!, takeInput(ctx, createAppBody, input))),
  }),
);
builder.mutationField('updateChannelApp', (t) =>
  t.field({
    type: ChannelAppType,
    description: 'Change the label, or replace the whole credential bag (registers again)',
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: inputOf(patchAppBody, 'UpdateChannelApp'), required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { id, input }, ctx) => appJson(await patchApp(ctx.viewer!, id, takeInput(ctx, patchAppBody, input))),
  }),
);
builder.mutationField('deleteChannelApp', (t) =>
  t.boolean({
    args: { id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { id }, ctx) => (await deleteApp(ctx.viewer!, id), true),
  }),
);

// ---- connections ----

builder.queryField('channelConnections', (t) =>
  t.field({
    type: [ChannelConnectionType],
    authScopes: { read: true },
    resolve: async (_r, _a, ctx) => (await listConnections(ctx.viewer!)).map(connectionJson),
  }),
);
builder.queryField('channelConnection', (t) =>
  t.field({
    type: ChannelConnectionType,
    args: { id: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_r, a, ctx) => connectionJson(await findConnection(ctx.viewer!, a.id)),
  }),
);
builder.queryField('channelCapabilities', (t) =>
  t.field({
    type: ChannelCapabilitiesType,
    args: { connectionId: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_r, a, ctx) => {
      const conn = await findConnection(ctx.viewer!, a.connectionId);
      return { connection_id: conn.id, platform: conn.platform as ConnectionPlatform, capabilities: capabilitiesOf(conn.platform) };
    },
  }),
);
builder.mutationField('createChannelConnection', (t) =>
  t.field({
    type: ChannelConnectionType,
    description: 'A connection, PENDING with its connect link until an end user claims it',
    args: { input: t.arg({ type: inputOf(createConnectionBody, 'CreateChannelConnection'), required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { input }, ctx) => connectionJson(await createConnection(ctx.viewer!, takeInput(ctx, createConnectionBody, input))),
  }),
);
builder.mutationField('deleteChannelConnection', (t) =>
  t.boolean({
    args: { id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { id }, ctx) => (await deleteConnection(ctx.viewer!, id), true),
  }),
);
builder.mutationField('setChannelConnectionBinding', (t) =>
  t.field({
    type: ChannelBindingType,
    description: 'Sets the connection-level binding (the single slot every thread without its own binding follows)',
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: inputOf(putBindingBody, 'SetChannelConnectionBinding'), required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { id, input }, ctx) => bindingJson(await setConnectionBinding(ctx.viewer!, id, takeInput(ctx, putBindingBody, input).destination)),
  }),
);
builder.mutationField('clearChannelConnectionBinding', (t) =>
  t.boolean({
    args: { id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { id }, ctx) => (await clearConnectionBinding(ctx.viewer!, id), true),
  }),
);

// ---- bindings ----

builder.queryField('channelBindings', (t) =>
  t.field({
    type: [ChannelBindingType],
    args: { connectionId: t.arg.string({ description: "Only this connection's bindings" }) },
    authScopes: { read: true },
    resolve: async (_r, a, ctx) => (await listBindings(ctx.viewer!, withinLength('connectionId', a.connectionId, 128) ?? undefined)).map(bindingJson),
  }),
);
builder.mutationField('createChannelBinding', (t) =>
  t.field({
    type: ChannelBindingType,
    args: { input: t.arg({ type: inputOf(createBindingBody, 'CreateChannelBinding'), required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { input }, ctx) => bindingJson(await createBinding(ctx.viewer!, takeInput(ctx, createBindingBody, input))),
  }),
);
builder.mutationField('deleteChannelBinding', (t) =>
  t.boolean({
    args: { id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { id }, ctx) => (await deleteBinding(ctx.viewer!, id), true),
  }),
);

// ---- posting ----

builder.mutationField('postChannelMessage', (t) =>
  t.field({
    type: objectOf(postedMessage),
    description: 'Post into a thread (replying to its latest routed message); `done` clears the working marker',
    args: {
      connectionId: t.arg.string({ required: true }),
      threadId: t.arg.string({ required: true }),
      input: t.arg({ type: inputOf(postMessageBody, 'PostChannelMessage'), required: true }),
    },
    authScopes: { write: true },
    resolve: (_r, { connectionId, threadId, input }, ctx) => postMessage(ctx.viewer!, connectionId, threadId, takeInput(ctx, postMessageBody, input)),
  }),
);
builder.mutationField('createChannelDelivery', (t) =>
  t.field({
    type: objectOf(channelDelivery),
    description: "Post proactively into the connection's conversation; replies there route to the destination. A refusal emits delivery.failed",
    args: { connectionId: t.arg.string({ required: true }), input: t.arg({ type: inputOf(deliveryBody, 'CreateChannelDelivery'), required: true }) },
    authScopes: { write: true },
    resolve: (_r, { connectionId, input }, ctx) => createDelivery(ctx.viewer!, connectionId, takeInput(ctx, deliveryBody, input)),
  }),
);

// ---- channel webhook endpoints ----

builder.queryField('channelEventTypes', (t) =>
  t.field({
    type: [enumOf(eventTypeEnum)],
    description: 'Events a channel webhook endpoint can subscribe to (the values createChannelWebhook takes)',
    authScopes: { read: true },
    resolve: () => [...CHANNEL_EVENT_TYPES],
  }),
);
builder.queryField('channelWebhooks', (t) =>
  t.field({
    type: [ChannelWebhookType],
    authScopes: { read: true },
    resolve: async (_r, _a, ctx) => (await listChannelWebhooks(ctx.viewer!)).map(channelEndpointJson),
  }),
);
builder.queryField('channelWebhook', (t) =>
  t.field({
    type: ChannelWebhookType,
    args: { id: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_r, a, ctx) => channelEndpointJson(await findChannelWebhook(ctx.viewer!, a.id)),
  }),
);
builder.mutationField('createChannelWebhook', (t) =>
  t.field({
    type: CreatedChannelWebhookType,
    description: 'Register a channel webhook endpoint; its whsec_ secret is in this answer only',
    args: { input: t.arg({ type: inputOf(createChannelWebhookBody, 'CreateChannelWebhook'), required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { input }, ctx) => {
      const { endpoint, secret } = await createChannelWebhook(ctx.viewer!, takeInput(ctx, createChannelWebhookBody, input));
      return { ...channelEndpointJson(endpoint), secret };
    },
  }),
);
builder.mutationField('updateChannelWebhook', (t) =>
  t.field({
    type: ChannelWebhookType,
    description: 'Change url or events, or re-enable a failure-disabled endpoint (the secret is kept)',
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: inputOf(patchChannelWebhookBody, 'UpdateChannelWebhook'), required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { id, input }, ctx) => channelEndpointJson(await patchChannelWebhook(ctx.viewer!, id, takeInput(ctx, patchChannelWebhookBody, input))),
  }),
);
builder.mutationField('deleteChannelWebhook', (t) =>
  t.boolean({
    args: { id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { id }, ctx) => (await deleteChannelWebhook(ctx.viewer!, id), true),
  }),
);

// ---- loopback ----

builder.mutationField('playLoopbackInbound', (t) =>
  t.field({
    type: objectOf(loopbackAccepted),
    description: "Play an end user's message into a CONNECTED loopback connection (processed like a platform's)",
    args: { connectionId: t.arg.string({ required: true }), input: t.arg({ type: inputOf(loopbackInboundBody, 'LoopbackInbound'), required: true }) },
    authScopes: { write: true },
    resolve: (_r, { connectionId, input }, ctx) => receiveLoopback(ctx.viewer!, connectionId, takeInput(ctx, loopbackInboundBody, input)),
  }),
);
builder.queryField('loopbackOutbox', (t) =>
  t.field({
    type: [LoopbackOutboxItemType],
    description: 'What the service posted to a loopback connection, oldest first (at most 500)',
    args: { connectionId: t.arg.string({ required: true }), after: t.arg.string({ description: 'Only items after this item id' }), threadId: t.arg.string() },
    authScopes: { read: true },
    resolve: (_r, a, ctx) =>
      loopbackOutbox(ctx.viewer!, a.connectionId, {
        after: withinLength('after', a.after, 128) ?? undefined,
        thread_id: withinLength('threadId', a.threadId, 255) ?? undefined,
      }),
  }),
);

// ---- the event mirror ----

builder.subscriptionField('channelEvents', (t) =>
  t.field({
    type: ChannelEventObject,
    description: "The universe's channel events as they happen (the payloads channel webhooks get); resumes after `after` (an event id)",
    args: { after: t.arg.string() },
    authScopes: { read: true },
    subscribe: (_r, a, ctx) => channelEventFeed(ctx.viewer!, a.after ?? null),
    resolve: (event: ChannelEventJson) => event,
  }),
);
