// /channels: apps, connections (binding slot, capabilities, posting, deliveries, the loopback
// surface), bindings, channel webhook endpoints and the event mirror; plus what platforms and
// end users call without a token: the platform inbound endpoint and the hosted connect page.
// Bodies and answers are the zod schemas of src/channels/contract.ts.
import { z } from 'zod';
import { defineRoute } from '../route.js';
import { Ok } from '../schemas.js';
import { selectionOf } from '../../src/contract/values.js';
import {
  createAppBody, patchAppBody, channelApp, createConnectionBody, channelConnection, putBindingBody, createBindingBody, channelBinding,
  channelCapabilities, postMessageBody, postedMessage, deliveryBody, channelDelivery, createChannelWebhookBody, patchChannelWebhookBody,
  channelWebhookEndpoint, createdChannelWebhookEndpoint, channelEvent, loopbackInboundBody, loopbackAccepted, loopbackOutboxItem, loopbackOutboxQuery,
} from '../../src/channels/contract.js';
import { channelEventFeed } from '../../src/channels/mirror.js';
import { handlePlatformInbound } from '../../src/channels/inbound-http.js';
import { claimConnectPage, showConnectPage } from '../../src/channels/connect-page.js';

const APP = selectionOf(channelApp);
const CONNECTION = selectionOf(channelConnection);
const BINDING = selectionOf(channelBinding);
const WEBHOOK = selectionOf(channelWebhookEndpoint);

const list = <S extends z.ZodType>(item: S, id: string) => z.strictObject({ data: z.array(item) }).meta({ id });
const TAG = 'Channels';
const WEBHOOKS = 'Channel webhooks';

export const channelRoutes = [
  // ---- apps ----
  defineRoute({
    method: 'GET', path: '/channels/apps', operationId: 'listChannelApps', tag: TAG, scope: 'read',
    summary: 'Channel apps of the universe (credential names only)',
    document: `query Apps { data: channelApps { ${APP} } }`,
    response: list(channelApp, 'ChannelAppList'),
  }),
  defineRoute({
    method: 'POST', path: '/channels/apps', operationId: 'createChannelApp', tag: TAG, scope: 'write',
    summary: 'Register a platform app: the service proves the credentials with the platform and points its webhook here where it can',
    note: 'Required credentials: telegram bot_token; discord bot_token, public_key; slack bot_token, signing_secret; whatsapp access_token, phone_number_id, app_secret. imessage answers 501 coming_soon. A refusal by the platform answers 422 invalid_spec naming its answer.',
    body: createAppBody,
    document: `mutation Create($input: CreateChannelAppInput!) { app: createChannelApp(input: $input) { ${APP} } }`,
    pick: (data) => data.app,
    status: 201,
    idempotent: true,
    response: channelApp,
    errors: ['invalid_request', 'invalid_spec', 'coming_soon'],
  }),
  defineRoute({
    method: 'GET', path: '/channels/apps/{id}', operationId: 'getChannelApp', tag: TAG, scope: 'read',
    summary: 'One channel app',
    document: `query App($id: String!) { app: channelApp(id: $id) { ${APP} } }`,
    pick: (data) => data.app,
    response: channelApp,
  }),
  defineRoute({
    method: 'PATCH', path: '/channels/apps/{id}', operationId: 'updateChannelApp', tag: TAG, scope: 'write',
    summary: 'Rename, or replace the whole credential bag (the platform registration runs again)',
    body: patchAppBody,
    document: `mutation Update($id: String!, $input: UpdateChannelAppInput!) { app: updateChannelApp(id: $id, input: $input) { ${APP} } }`,
    pick: (data) => data.app,
    response: channelApp,
    errors: ['invalid_request', 'invalid_spec'],
  }),
  defineRoute({
    method: 'DELETE', path: '/channels/apps/{id}', operationId: 'deleteChannelApp', tag: TAG, scope: 'write',
    summary: 'Remove an app without connections',
    document: `mutation Delete($id: String!) { ok: deleteChannelApp(id: $id) }`,
    response: Ok,
    errors: ['conflict'],
  }),

  // ---- connections ----
  defineRoute({
    method: 'GET', path: '/channels/connections', operationId: 'listChannelConnections', tag: TAG, scope: 'read',
    summary: 'Channel connections of the universe',
    document: `query Connections { data: channelConnections { ${CONNECTION} } }`,
    response: list(channelConnection, 'ChannelConnectionList'),
  }),
  defineRoute({
    method: 'POST', path: '/channels/connections', operationId: 'createChannelConnection', tag: TAG, scope: 'write',
    summary: 'A connection, PENDING with `connect` (its link; phone and code for code flows) until an end user claims it',
    note: 'Connect flows: loopback, slack and discord open the hosted page PUBLIC_URL/v1/connect/{token} (callback_url receives a 303 after the claim); telegram links to the bot with ?start=<token>; whatsapp asks the end user to send a code to the business number. Links expire after 24 h.',
    body: createConnectionBody,
    document: `mutation Create($input: CreateChannelConnectionInput!) { connection: createChannelConnection(input: $input) { ${CONNECTION} } }`,
    pick: (data) => data.connection,
    status: 201,
    idempotent: true,
    response: channelConnection,
    errors: ['invalid_request', 'invalid_spec', 'coming_soon', 'session_archived'],
  }),
  defineRoute({
    method: 'GET', path: '/channels/connections/{id}', operationId: 'getChannelConnection', tag: TAG, scope: 'read',
    summary: 'One connection',
    document: `query Connection($id: String!) { connection: channelConnection(id: $id) { ${CONNECTION} } }`,
    pick: (data) => data.connection,
    response: channelConnection,
  }),
  defineRoute({
    method: 'DELETE', path: '/channels/connections/{id}', operationId: 'deleteChannelConnection', tag: TAG, scope: 'write',
    summary: 'Remove a connection and its bindings',
    document: `mutation Delete($id: String!) { ok: deleteChannelConnection(id: $id) }`,
    response: Ok,
  }),
  defineRoute({
    method: 'PUT', path: '/channels/connections/{id}/binding', operationId: 'setChannelConnectionBinding', tag: TAG, scope: 'write',
    summary: 'Set the connection-level binding: every thread without its own binding goes to this session or channel webhook',
    body: putBindingBody,
    document: `mutation Bind($id: String!, $input: SetChannelConnectionBindingInput!) { binding: setChannelConnectionBinding(id: $id, input: $input) { ${BINDING} } }`,
    pick: (data) => data.binding,
    response: channelBinding,
    errors: ['invalid_request', 'session_archived'],
  }),
  defineRoute({
    method: 'DELETE', path: '/channels/connections/{id}/binding', operationId: 'clearChannelConnectionBinding', tag: TAG, scope: 'write',
    summary: 'Clear the connection-level binding',
    document: `mutation Unbind($id: String!) { ok: clearChannelConnectionBinding(id: $id) }`,
    response: Ok,
  }),
  defineRoute({
    method: 'GET', path: '/channels/connections/{id}/capabilities', operationId: 'getChannelCapabilities', tag: TAG, scope: 'read',
    summary: 'What the connection\'s platform can do',
    document: `query Capabilities($id: String!) { capabilities: channelCapabilities(connectionId: $id) { ${selectionOf(channelCapabilities)} } }`,
    pick: (data) => data.capabilities,
    response: channelCapabilities,
  }),
  defineRoute({
    method: 'POST', path: '/channels/connections/{id}/threads/{thread_id}/messages', operationId: 'postChannelMessage', tag: TAG, scope: 'write',
    summary: 'Post into a thread, replying to its latest routed message; `done` clears the working marker',
    body: postMessageBody,
    document: `mutation Post($id: String!, $thread_id: String!, $input: PostChannelMessageInput!) { posted: postChannelMessage(connectionId: $id, threadId: $thread_id, input: $input) { ${selectionOf(postedMessage)} } }`,
    pick: (data) => data.posted,
    idempotent: true,
    response: postedMessage,
    errors: ['invalid_request', 'invalid_spec', 'conflict'],
  }),
  defineRoute({
    method: 'POST', path: '/channels/connections/{id}/deliveries', operationId: 'createChannelDelivery', tag: TAG, scope: 'write',
    summary: 'Proactive delivery into the connection\'s conversation; replies there route to `destination`; a refusal emits delivery.failed',
    body: deliveryBody,
    document: `mutation Deliver($id: String!, $input: CreateChannelDeliveryInput!) { delivery: createChannelDelivery(connectionId: $id, input: $input) { ${selectionOf(channelDelivery)} } }`,
    pick: (data) => data.delivery,
    status: 202,
    idempotent: true,
    response: channelDelivery,
    errors: ['invalid_request', 'conflict', 'session_archived'],
  }),
  defineRoute({
    method: 'POST', path: '/channels/connections/{id}/loopback/inbound', operationId: 'playLoopbackInbound', tag: TAG, scope: 'write',
    summary: 'Loopback: play an end user\'s message (processed like a platform\'s: once per message_id, off the request)',
    body: loopbackInboundBody,
    document: `mutation Play($id: String!, $input: LoopbackInboundInput!) { accepted: playLoopbackInbound(connectionId: $id, input: $input) { ${selectionOf(loopbackAccepted)} } }`,
    pick: (data) => data.accepted,
    status: 202,
    response: loopbackAccepted,
    errors: ['invalid_request', 'conflict', 'file_too_large'],
  }),
  defineRoute({
    method: 'GET', path: '/channels/connections/{id}/loopback/outbox', operationId: 'getLoopbackOutbox', tag: TAG, scope: 'read',
    summary: 'Loopback: what the service posted (messages and working markers), oldest first',
    query: loopbackOutboxQuery,
    document: `query Outbox($id: String!, $after: String, $thread: String) { data: loopbackOutbox(connectionId: $id, after: $after, threadId: $thread) { ${selectionOf(loopbackOutboxItem)} } }`,
    variables: ({ params, query }) => ({ id: params.id, after: query.after ?? null, thread: query.thread_id ?? null }),
    response: list(loopbackOutboxItem, 'LoopbackOutbox'),
  }),

  // ---- bindings ----
  defineRoute({
    method: 'GET', path: '/channels/bindings', operationId: 'listChannelBindings', tag: TAG, scope: 'read',
    summary: 'Bindings of the universe (thread bindings and connection-level ones)',
    query: z.strictObject({ connection_id: z.string().max(128).optional() }),
    document: `query Bindings($connection: String) { data: channelBindings(connectionId: $connection) { ${BINDING} } }`,
    variables: ({ query }) => ({ connection: query.connection_id ?? null }),
    response: list(channelBinding, 'ChannelBindingList'),
  }),
  defineRoute({
    method: 'POST', path: '/channels/bindings', operationId: 'createChannelBinding', tag: TAG, scope: 'write',
    summary: 'Route one thread to a session or a channel webhook',
    body: createBindingBody,
    document: `mutation Create($input: CreateChannelBindingInput!) { binding: createChannelBinding(input: $input) { ${BINDING} } }`,
    pick: (data) => data.binding,
    status: 201,
    idempotent: true,
    response: channelBinding,
    errors: ['invalid_request', 'conflict', 'session_archived'],
  }),
  defineRoute({
    method: 'DELETE', path: '/channels/bindings/{id}', operationId: 'deleteChannelBinding', tag: TAG, scope: 'write',
    summary: 'Remove a binding',
    document: `mutation Delete($id: String!) { ok: deleteChannelBinding(id: $id) }`,
    response: Ok,
  }),

  // ---- channel webhooks and the mirror ----
  defineRoute({
    method: 'POST', path: '/channels/webhooks', operationId: 'createChannelWebhook', tag: WEBHOOKS, scope: 'write',
    summary: 'Register a channel webhook endpoint; the whsec_ secret is in this answer only',
    note: 'Deliveries: POST {id, type, createdAt, data} with X-Service-Event, X-Service-Delivery (retries reuse it), X-Service-Timestamp and X-Service-Signature v1=<hex HMAC-SHA256 of "{timestamp}.{body}">; attempts at 0 s, 5 s, 30 s; disabled after about 20 consecutive failures.',
    body: createChannelWebhookBody,
    document: `mutation Create($input: CreateChannelWebhookInput!) { endpoint: createChannelWebhook(input: $input) { ${selectionOf(createdChannelWebhookEndpoint)} } }`,
    pick: (data) => data.endpoint,
    status: 201,
    idempotent: true,
    response: createdChannelWebhookEndpoint,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'GET', path: '/channels/webhooks', operationId: 'listChannelWebhooks', tag: WEBHOOKS, scope: 'read',
    summary: 'Channel webhook endpoints (never their secrets)',
    document: `query Webhooks { data: channelWebhooks { ${WEBHOOK} } }`,
    response: list(channelWebhookEndpoint, 'ChannelWebhookList'),
  }),
  defineRoute({
    method: 'PATCH', path: '/channels/webhooks/{id}', operationId: 'updateChannelWebhook', tag: WEBHOOKS, scope: 'write',
    summary: 'Change url or events, or re-enable a failure-disabled endpoint (status active; the secret is kept)',
    body: patchChannelWebhookBody,
    document: `mutation Update($id: String!, $input: UpdateChannelWebhookInput!) { endpoint: updateChannelWebhook(id: $id, input: $input) { ${WEBHOOK} } }`,
    pick: (data) => data.endpoint,
    response: channelWebhookEndpoint,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'DELETE', path: '/channels/webhooks/{id}', operationId: 'deleteChannelWebhook', tag: WEBHOOKS, scope: 'write',
    summary: 'Remove the endpoint (bindings routed to it go with it)',
    document: `mutation Delete($id: String!) { ok: deleteChannelWebhook(id: $id) }`,
    response: Ok,
  }),
  defineRoute({
    method: 'GET', path: '/channels/events/stream', operationId: 'streamChannelEvents', tag: WEBHOOKS, scope: 'read',
    summary: 'SSE mirror of the channel webhook events of the universe (same payloads); resumes after Last-Event-ID or ?after=',
    query: z.strictObject({ after: z.string().max(64).optional().describe('replay every event after this event id') }),
    document: '',
    feed: (ctx, { query, headers }) => channelEventFeed(ctx.viewer!, query.after ?? headers['last-event-id'] ?? null),
    response: channelEvent,
    errors: ['invalid_request'],
  }),

  // ---- called without a token ----
  defineRoute({
    method: 'POST', path: '/channels/inbound/{app_id}', operationId: 'receivePlatformInbound', tag: TAG, scope: null,
    summary: 'What a platform calls (verified with its own signature scheme; 401 invalid_token and nothing recorded when it does not verify)',
    note: 'telegram: X-Telegram-Bot-Api-Secret-Token; slack: X-Slack-Signature v0 (5 minutes); discord: X-Signature-Ed25519 / X-Signature-Timestamp; whatsapp: X-Hub-Signature-256. A platform\'s retry of the same update is processed once. Not counted against a token\'s rate limit.',
    document: '',
    raw: (req, res) => handlePlatformInbound(req, res),
    rawRequestBody: { content: { 'application/json': { schema: { type: 'object' } }, 'application/x-www-form-urlencoded': { schema: { type: 'object' } } } },
    rawResponseContent: { 'application/json': { schema: { type: 'object' } }, 'text/plain': { schema: { type: 'string' } } },
    response: z.unknown(),
    errors: ['invalid_token', 'invalid_request'],
  }),
  defineRoute({
    method: 'GET', path: '/channels/inbound/{app_id}', operationId: 'verifyPlatformInbound', tag: TAG, scope: null,
    summary: 'WhatsApp\'s verification handshake: hub.mode=subscribe with the app\'s verify_token answers hub.challenge',
    document: '',
    raw: (req, res) => handlePlatformInbound(req, res),
    rawResponseContent: { 'text/plain': { schema: { type: 'string' } } },
    response: z.unknown(),
    errors: ['invalid_token'],
  }),
  defineRoute({
    method: 'GET', path: '/connect/{token}', operationId: 'showConnectPage', tag: TAG, scope: null,
    summary: 'The hosted connect page (HTML; JSON for non-browser clients)',
    document: '',
    raw: (req, res) => showConnectPage(req, res),
    rawResponseContent: { 'text/html': { schema: { type: 'string' } } },
    response: z.unknown(),
  }),
  defineRoute({
    method: 'POST', path: '/connect/{token}', operationId: 'claimConnectPage', tag: TAG, scope: null,
    summary: 'Claim the connection: CONNECTED and channel.connected; 303 to callback_url (connection_id, status, metadata) when one was given',
    document: '',
    raw: (req, res) => claimConnectPage(req, res),
    rawRequestBody: { content: { 'application/x-www-form-urlencoded': { schema: { type: 'object' } } } },
    rawResponseContent: { 'text/html': { schema: { type: 'string' } } },
    response: z.unknown(),
    errors: ['invalid_request'],
  }),
];
