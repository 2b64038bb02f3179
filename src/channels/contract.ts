// The channel operations' shapes, once: request bodies (validation for REST and GraphQL, with the
// spec's limits) and responses (OpenAPI, GraphQL output types, the domain's return types).
// Field names are the spec's (snake_case for channel resources).
import { z } from 'zod';
import { ABSOLUTE_HTTP_URL, JSON_OBJECT_STRING, exactlyOneOf, without } from '../contract/documented.js';
import { dateTime } from '../contract/zod-walk.js';

export const APP_PLATFORMS = ['telegram', 'slack', 'discord', 'whatsapp', 'imessage'] as const;
/** Connections also accept the in-process `loopback` surface. */
export const CONNECTION_PLATFORMS = [...APP_PLATFORMS, 'loopback'] as const;
export type AppPlatform = (typeof APP_PLATFORMS)[number];
/** Platforms claimed through the hosted connect page (connections.ts flowOf 'link'): the only ones a callback_url applies to. */
export const LINK_FLOW_PLATFORMS = ['loopback', 'slack', 'discord'] as const;
export type ConnectionPlatform = (typeof CONNECTION_PLATFORMS)[number];
/** The platforms this service talks to (imessage answers 501 coming_soon). */
export type LivePlatform = Exclude<ConnectionPlatform, 'imessage'>;

export const CONNECTION_STATUSES = ['PENDING', 'CONNECTED', 'DISCONNECTED'] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

export const CHANNEL_EVENT_TYPES = [
  'message.received',
  'message.reaction',
  'interaction.action',
  'command.received',
  'channel.connected',
  'channel.needs_reauth',
  'channel.disconnected',
  'channel.unmapped_conversation',
  'turn.refused',
  'delivery.failed',
] as const;
export type ChannelEventType = (typeof CHANNEL_EVENT_TYPES)[number];

export const CAPABILITY_KEYS = ['threads', 'reactions', 'markers', 'proactive', 'markdown', 'modals', 'ephemeral', 'streaming'] as const;

/** Credential keys each platform requires on app create (and on every rotation). */
export const REQUIRED_CREDENTIALS: Record<AppPlatform, readonly string[]> = {
  telegram: ['bot_token'],
  discord: ['bot_token', 'public_key'],
  slack: ['bot_token', 'signing_secret'],
  whatsapp: ['access_token', 'phone_number_id', 'app_secret'],
  imessage: ['api_key', 'phone_number', 'webhook_secret'],
};

const timestamp = dateTime(z.string().describe('ISO 8601 timestamp'));
const id = z.string().min(1).max(128);
const label = z.string().min(1).max(120);
const platformEnum = z.enum(APP_PLATFORMS).meta({ id: 'ChannelAppPlatform' });
const connectionPlatformEnum = z.enum(CONNECTION_PLATFORMS).meta({ id: 'ChannelPlatform' });
const connectionStatusEnum = z.enum(CONNECTION_STATUSES).meta({ id: 'ChannelConnectionStatus' });
export const eventTypeEnum = z.enum(CHANNEL_EVENT_TYPES).meta({ id: 'ChannelEventType' });
const endpointStatusEnum = z.enum(['active', 'disabled']).meta({ id: 'ChannelWebhookStatus' });

const credentials = z
  .record(z.string().min(1).max(100), z.string().min(1).max(10_000))
  .refine((c) => Object.keys(c).length <= 20, 'at most 20 credential keys')
  .describe('Write-only map of credential names to values (required keys depend on the platform)');
const metadata = z.record(z.string().max(64), z.unknown()).describe('Client metadata, echoed on channel.connected and on the callback redirect');

// ---- apps ----

// The credential keys each platform needs (checked in apps.ts), stated in the document as one
// branch per platform.
const credentialsPerPlatform = {
  oneOf: APP_PLATFORMS.map((p) => ({
    required: ['platform', 'credentials'],
    properties: {
      platform: { const: p },
      credentials: {
        properties: Object.fromEntries(REQUIRED_CREDENTIALS[p].map((k) => [k, { type: 'string', minLength: 1 }])),
        required: [...REQUIRED_CREDENTIALS[p]],
      },
    },
  })),
};
export const createAppBody = z.strictObject({ platform: platformEnum, label, credentials }).meta({ id: 'CreateChannelApp', ...credentialsPerPlatform });
export type CreateAppBody = z.output<typeof createAppBody>;

export const patchAppBody = z
  .strictObject({ label: label.optional(), credentials: credentials.optional().describe('A full replacement bag; rotation re-runs the platform registration') })
  .meta({ id: 'UpdateChannelApp' });
export type PatchAppBody = z.output<typeof patchAppBody>;

export const channelApp = z
  .strictObject({
    id: z.string(),
    platform: platformEnum,
    label: z.string(),
    status: z.string().describe('active, or needs_reauth once the platform refused the credentials'),
    credential_keys: z.array(z.string()).describe('Names only; values are never returned'),
    created_at: timestamp,
    setup: z
      .record(z.string(), z.string())
      .describe('Steps the platform cannot automate: webhook_url, verify_token, events_url, invite_url as the platform needs'),
  })
  .meta({ id: 'ChannelApp' });
export type ChannelAppJson = z.output<typeof channelApp>;

// ---- destinations, connections, bindings ----

export const destination = z
  .strictObject({
    session: id.optional().describe('A session id: messages become turns, the final reply is posted back'),
    webhook: id.optional().describe('A channel webhook endpoint id: messages arrive as message.received'),
  })
  .refine((d) => (d.session === undefined) !== (d.webhook === undefined), 'destination must name exactly one of session or webhook')
  .meta({ id: 'ChannelDestination', ...exactlyOneOf('session', 'webhook') });
export type Destination = z.output<typeof destination>;

export const createConnectionBody = z
  .strictObject({
    platform: connectionPlatformEnum,
    label: label.optional(),
    metadata: metadata.optional(),
    destination: destination.optional().describe('Pre-binds the connection (its connection-level binding)'),
    app: id.optional().describe("The channel app (BYO) this connection uses; default the universe's only app of the platform"),
    invite_user: z.string().min(1).max(255).optional().describe('Slack only: a Slack user id who receives the connect link in a direct message'),
    callback_url: z
      .string()
      .min(1)
      .max(2048)
      .meta({
        ...ABSOLUTE_HTTP_URL,
        description: 'Link-flow platforms only (loopback, slack, discord): where the hosted connect page redirects after the claim',
      })
      .optional(),
  })
  .meta({
    id: 'CreateChannelConnection',
    // invite_user is Slack's only, a loopback connection takes no app, callback_url is for link-flow
    // platforms (checked in connections.ts)
    allOf: [
      { anyOf: [{ properties: { platform: { enum: [...LINK_FLOW_PLATFORMS] } } }, without('callback_url')] },
      { anyOf: [{ properties: { platform: { const: 'slack' } } }, without('invite_user')] },
      { anyOf: [{ properties: { platform: { not: { const: 'loopback' } } } }, without('app')] },
    ],
  });
export type CreateConnectionBody = z.output<typeof createConnectionBody>;

export const connectInfo = z
  .strictObject({
    url: z.string(),
    phone: z.string().optional().describe('Code flows: the number to message'),
    code: z.string().optional().describe('Code flows: the text to send'),
    expires_at: timestamp,
  })
  .meta({ id: 'ChannelConnect' });

export const channelConnection = z
  .strictObject({
    id: z.string(),
    platform: connectionPlatformEnum,
    channel_id: z.string().nullable(),
    label: z.string(),
    status: connectionStatusEnum,
    bound_session: z.strictObject({ id: z.string(), label: z.string() }).meta({ id: 'ChannelBoundSession' }).nullable(),
    created_at: timestamp,
    connect: connectInfo.optional().describe('Present only while PENDING'),
  })
  .meta({ id: 'ChannelConnection' });
export type ChannelConnectionJson = z.output<typeof channelConnection>;

export const putBindingBody = z.strictObject({ destination }).meta({ id: 'SetChannelConnectionBinding' });
export type PutBindingBody = z.output<typeof putBindingBody>;

export const createBindingBody = z
  .strictObject({
    connection_id: id,
    thread_id: z.string().min(1).max(255).describe('The one thread this binding routes'),
    destination,
    route_key: z.string().min(1).max(60).optional().describe('Your own tag for this route, echoed in message.received (default: the thread id, cut to 60)'),
  })
  .meta({ id: 'CreateChannelBinding' });
export type CreateBindingBody = z.output<typeof createBindingBody>;

export const channelBinding = z
  .strictObject({
    id: z.string(),
    connection_id: z.string(),
    thread_id: z.string().nullable(),
    destination: z.strictObject({ session: z.string().optional(), webhook: z.string().optional() }).meta({ id: 'ChannelBindingDestination' }),
    is_default: z.boolean().describe('true for the connection-level binding'),
    status: z.string(),
    route_key: z.string(),
  })
  .meta({ id: 'ChannelBinding' });
export type ChannelBindingJson = z.output<typeof channelBinding>;

export const channelCapabilities = z
  .strictObject({
    connection_id: z.string(),
    platform: connectionPlatformEnum,
    capabilities: z
      .strictObject(Object.fromEntries(CAPABILITY_KEYS.map((k) => [k, z.boolean()])) as Record<(typeof CAPABILITY_KEYS)[number], z.ZodBoolean>)
      .meta({ id: 'ChannelCapabilityMap' }),
  })
  .meta({ id: 'ChannelCapabilities' });
export type Capabilities = z.output<typeof channelCapabilities>['capabilities'];

// ---- posting ----

const rawPayload = z
  .string()
  .min(2)
  .max(100_000)
  .refine((s) => {
    try {
      const v: unknown = JSON.parse(s);
      return typeof v === 'object' && v !== null && !Array.isArray(v);
    } catch {
      return false;
    }
  }, 'payload must be a JSON object encoded as a string')
  .meta(JSON_OBJECT_STRING);

export const channelMessagePart = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('text'), text: z.string().min(1).max(40_000) }).meta({ id: 'ChannelTextPart' }),
    z.strictObject({ type: z.literal('markdown'), text: z.string().min(1).max(40_000) }).meta({ id: 'ChannelMarkdownPart' }),
    z
      .strictObject({
        type: z.literal('raw'),
        platform: connectionPlatformEnum,
        payload: rawPayload.describe('A platform-native payload encoded as a JSON string'),
      })
      .meta({ id: 'ChannelRawPart' }),
  ])
  .meta({ id: 'ChannelMessagePart' });
export type ChannelMessagePart = z.output<typeof channelMessagePart>;

const parts = z.array(channelMessagePart).min(1).max(20);
const displayName = z.string().min(1).max(80);

export const postMessageBody = z
  .strictObject({
    parts,
    display_name: displayName.optional(),
    done: z.boolean().optional().describe('Clears the working marker of the replied-to message'),
  })
  .meta({ id: 'PostChannelMessage' });
export type PostMessageBody = z.output<typeof postMessageBody>;

export const postedMessage = z
  .strictObject({
    connection_id: z.string(),
    thread_id: z.string(),
    message_id: z.string().nullable().describe("The platform's id of the posted message (the last one when it was split)"),
  })
  .meta({ id: 'ChannelPostedMessage' });
export type PostedMessageJson = z.output<typeof postedMessage>;

export const deliveryBody = z.strictObject({ destination, parts, display_name: displayName.optional() }).meta({ id: 'CreateChannelDelivery' });
export type DeliveryBody = z.output<typeof deliveryBody>;

export const channelDelivery = z
  .strictObject({
    id: z.string(),
    connection_id: z.string(),
    thread_id: z.string().describe('Where it is posted; replies there route to the destination'),
    status: z.enum(['queued']).meta({ id: 'ChannelDeliveryStatus' }).describe('Posting happens after the answer; a refusal emits delivery.failed'),
  })
  .meta({ id: 'ChannelDelivery' });
export type ChannelDeliveryJson = z.output<typeof channelDelivery>;

// ---- channel webhook endpoints ----

const events = z.array(eventTypeEnum).min(1).max(32);
export const createChannelWebhookBody = z
  .strictObject({
    url: z
      .string()
      .min(1)
      .max(2048)
      .meta({ ...ABSOLUTE_HTTP_URL, description: 'https, or http for localhost only' }),
    events: events.default(['message.received']),
  })
  .meta({ id: 'CreateChannelWebhook' });
export type CreateChannelWebhookBody = z.output<typeof createChannelWebhookBody>;

export const patchChannelWebhookBody = z
  .strictObject({
    url: z.string().min(1).max(2048).meta(ABSOLUTE_HTTP_URL).optional(),
    events: events.optional(),
    status: endpointStatusEnum.optional().describe('active re-enables a failure-disabled endpoint (the secret is kept)'),
  })
  .meta({ id: 'UpdateChannelWebhook' });
export type PatchChannelWebhookBody = z.output<typeof patchChannelWebhookBody>;

export const channelWebhookEndpoint = z
  .strictObject({
    id: z.string(),
    url: z.string(),
    events: z.array(eventTypeEnum),
    status: endpointStatusEnum,
  })
  .meta({ id: 'ChannelWebhookEndpoint' });
export type ChannelWebhookEndpointJson = z.output<typeof channelWebhookEndpoint>;

export const createdChannelWebhookEndpoint = channelWebhookEndpoint
  .extend({ secret: z.string().describe('whsec_…: returned here only') })
  .meta({ id: 'CreatedChannelWebhookEndpoint' });

// ---- events (webhook deliveries and the mirror stream carry the same object) ----

export const channelEvent = z
  .strictObject({
    id: z.string(),
    type: eventTypeEnum,
    createdAt: timestamp,
    data: z
      .record(z.string(), z.unknown())
      .describe('Event fields; message.received carries connection_id, app_id, thread_id, message_id, text, conversation, author, attachments, metadata'),
  })
  .meta({ id: 'ChannelEvent' });
export type ChannelEventJson = z.output<typeof channelEvent>;

// ---- loopback ----

export const loopbackInboundBody = z
  .strictObject({
    thread_id: z.string().min(1).max(255),
    text: z.string().max(40_000).default(''),
    author: z.string().min(1).max(120).default('loopback user').describe("The end user's name"),
    message_id: z.string().min(1).max(128).optional().describe('The platform message id (a repeat is processed once); generated when omitted'),
    attachments: z
      .array(
        z
          .strictObject({
            name: z.string().min(1).max(255),
            mime_type: z.string().min(1).max(255),
            data: z.string().min(1).describe('base64'),
          })
          .meta({ id: 'LoopbackAttachment' }),
      )
      .max(10)
      .optional(),
  })
  .refine((b) => b.text.length > 0 || (b.attachments?.length ?? 0) > 0, 'text or attachments are required')
  .meta({
    id: 'LoopbackInbound',
    anyOf: [
      { properties: { text: { type: 'string', minLength: 1 } }, required: ['text'] },
      { properties: { attachments: { type: 'array', minItems: 1 } }, required: ['attachments'] },
    ],
  });
export type LoopbackInboundBody = z.output<typeof loopbackInboundBody>;

export const loopbackAccepted = z
  .strictObject({
    message_id: z.string(),
    thread_id: z.string(),
    duplicate: z.boolean().describe('true when this message id was already received (processed once)'),
  })
  .meta({ id: 'LoopbackAccepted' });
export type LoopbackAcceptedJson = z.output<typeof loopbackAccepted>;

export const loopbackOutboxItem = z
  .strictObject({
    id: z.string(),
    thread_id: z.string(),
    kind: z.enum(['message', 'typing', 'typing_done']).meta({ id: 'LoopbackOutboxKind' }),
    text: z.string().nullable(),
    parts: z.array(channelMessagePart),
    display_name: z.string().nullable(),
    reply_to: z.string().nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'LoopbackOutboxItem' });
export type LoopbackOutboxItemJson = z.output<typeof loopbackOutboxItem>;

export const loopbackOutboxQuery = z.strictObject({
  after: z.string().max(128).optional().describe('Only items after this item id'),
  thread_id: z.string().max(255).optional(),
});
