// Discord interactions: `GET /users/@me` on registration (the Interactions Endpoint URL and the
// bot invite are set by hand: `webhook_url`, `invite_url`); requests are signed with Ed25519
// over `timestamp + body` (the application's public key); PING answers PONG; slash commands are
// acknowledged as deferred ("thinking…", the working marker) and answered by editing the
// original response; other posts go to `POST /channels/{id}/messages`.
import { createPublicKey, verify as verifySignature, type KeyObject } from 'node:crypto';
import { config } from '../../config.js';
import { callJson, download } from './http.js';
import { PlatformError, type AppRecord, type InboundAttachment, type InboundMessage, type InboundResult, type PlatformAdapter } from './types.js';

const MiB = 1024 * 1024;
// DER prefix of an Ed25519 SubjectPublicKeyInfo: the raw 32-byte key follows it.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const INTERACTION = { PING: 1, APPLICATION_COMMAND: 2, MESSAGE_COMPONENT: 3, AUTOCOMPLETE: 4, MODAL_SUBMIT: 5 } as const;
const CALLBACK = { PONG: 1, DEFERRED_CHANNEL_MESSAGE: 5, DEFERRED_UPDATE_MESSAGE: 6, AUTOCOMPLETE_RESULT: 8 } as const;
const OPTION = { STRING: 3, ATTACHMENT: 11 } as const;

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);
const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);

const keys = new Map<string, KeyObject>();
function publicKey(hex: string): KeyObject | null {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return null;
  let key = keys.get(hex);
  if (!key) {
    key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' });
    keys.set(hex, key);
  }
  return key;
}

async function call(token: string, method: string, path: string, body?: Obj): Promise<Obj> {
  const { status, json } = await callJson('discord', `${config().discordApiBaseUrl}${path}`, { method, body, headers: { authorization: `Bot ${token}` } });
  if (status < 200 || status >= 300) {
    // A rate limit says how long to wait: retry_after (seconds, fractional).
    const retryAfter = typeof json.retry_after === 'number' ? { retryAfterMs: json.retry_after * 1000 } : {};
    throw new PlatformError(
      'discord',
      `discord ${method} ${path.replace(/\/webhooks\/(\d+)\/[^/]+/, '/webhooks/$1/…')} refused: ${str(json.message) ?? `status ${status}`}`,
      status,
      status === 401,
      retryAfter,
    );
  }
  return json;
}

function commandOptions(data: Obj): { text: string; attachmentIds: string[] } {
  const strings: string[] = [];
  const attachmentIds: string[] = [];
  const walk = (options: Obj[]) => {
    for (const o of options) {
      if (o.type === OPTION.STRING && typeof o.value === 'string') strings.push(o.value);
      else if (o.type === OPTION.ATTACHMENT && o.value !== undefined) attachmentIds.push(String(o.value));
      walk(list(o.options)); // subcommands nest their options
    }
  };
  walk(list(data.options));
  return { text: strings.join(' '), attachmentIds };
}

function attachmentsOf(data: Obj, ids: string[]): InboundAttachment[] {
  const resolved = obj(obj(data.resolved).attachments);
  return ids
    .map((id) => obj(resolved[id]))
    .filter((a) => a.url)
    .map((a) => {
      const mimeType = str(a.content_type) ?? 'application/octet-stream';
      return {
        ref: String(a.url),
        type: mimeType.startsWith('image/') ? 'image' : mimeType.startsWith('audio/') ? 'audio' : mimeType.startsWith('video/') ? 'video' : 'document',
        name: str(a.filename) ?? 'attachment',
        mimeType,
        sizeBytes: typeof a.size === 'number' ? a.size : null,
      } satisfies InboundAttachment;
    });
}

function base(i: Obj): Omit<InboundMessage, 'kind' | 'text' | 'attachments'> {
  const user = obj(obj(i.member).user ?? i.user);
  const channel = str(i.channel_id) ?? str(obj(i.channel).id) ?? '';
  return {
    dedupeId: `interaction:${str(i.id)}`,
    surfaceId: str(i.application_id) ?? '',
    threadId: channel,
    messageId: str(i.id) ?? '',
    conversation: { id: channel, is_dm: !i.guild_id, type: i.guild_id ? 'guild' : 'dm', title: str(obj(i.channel).name) },
    author: { id: str(user.id) ?? 'unknown', name: str(user.global_name) ?? str(user.username), username: str(user.username) },
    context: { interaction_token: str(i.token) ?? '', application_id: str(i.application_id) ?? '' },
  };
}

export const discord: PlatformAdapter = {
  platform: 'discord',
  capabilities: { threads: true, reactions: true, markers: true, proactive: true, markdown: true, modals: true, ephemeral: true, streaming: false },
  maxTextLength: 2000,
  maxInboundBytes: 32 * MiB,
  markerRefreshMs: 9_000,
  connectFlow: 'link',

  async register(credentials, ctx) {
    if (!publicKey(credentials.public_key!)) throw new PlatformError('discord', "public_key must be the application's Ed25519 public key: 64 hex characters");
    const me = await call(credentials.bot_token!, 'GET', '/users/@me');
    const appId = str(me.id) ?? '';
    return {
      info: { application_id: appId, bot_username: str(me.username) ?? '' },
      setup: {
        webhook_url: ctx.inboundUrl,
        invite_url: `https://discord.com/oauth2/authorize?client_id=${appId}&scope=bot%20applications.commands&permissions=3072`,
      },
    };
  },

  verify(app, req) {
    const signature = req.headers['x-signature-ed25519'];
    const timestamp = req.headers['x-signature-timestamp'];
    const key = publicKey(app.credentials.public_key ?? '');
    if (req.method !== 'POST' || !key || !signature || !timestamp || !/^[0-9a-fA-F]{128}$/.test(signature)) return false;
    return verifySignature(null, Buffer.concat([Buffer.from(timestamp, 'utf8'), req.rawBody]), key, Buffer.from(signature, 'hex'));
  },

  parse(_app, req): InboundResult {
    const i = obj(JSON.parse(req.rawBody.toString('utf8') || '{}'));
    const data = obj(i.data);
    switch (i.type) {
      case INTERACTION.PING:
        return { status: 200, body: { type: CALLBACK.PONG }, messages: [], notices: [] };
      case INTERACTION.APPLICATION_COMMAND: {
        const { text, attachmentIds } = commandOptions(data);
        const name = str(data.name) ?? '';
        return {
          status: 200,
          body: { type: CALLBACK.DEFERRED_CHANNEL_MESSAGE },
          messages: [{ ...base(i), kind: 'command', text, attachments: attachmentsOf(data, attachmentIds), command: { name, text } }],
          notices: [],
        };
      }
      case INTERACTION.MESSAGE_COMPONENT:
        return {
          status: 200,
          body: { type: CALLBACK.DEFERRED_UPDATE_MESSAGE },
          messages: [
            {
              ...base(i),
              kind: 'action',
              text: '',
              attachments: [],
              action: { id: str(data.custom_id) ?? '', value: list(data.values).length ? String(list(data.values)[0]) : null },
            },
          ],
          notices: [],
        };
      case INTERACTION.AUTOCOMPLETE:
        return { status: 200, body: { type: CALLBACK.AUTOCOMPLETE_RESULT, data: { choices: [] } }, messages: [], notices: [] };
      default:
        return { status: 200, body: { type: CALLBACK.DEFERRED_UPDATE_MESSAGE }, messages: [], notices: [] };
    }
  },

  async send(surface, target, message) {
    const token = surface.app!.credentials.bot_token!;
    const content = message.displayName ? `**${message.displayName}**: ${message.text}` : message.text;
    const body = { content, ...message.raw };
    const interaction = target.context?.interaction_token;
    if (interaction) {
      // The deferred slash command: its "thinking…" response becomes the answer.
      const appId = target.context!.application_id || surface.app!.info.application_id;
      const edited = await call(token, 'PATCH', `/webhooks/${appId}/${interaction}/messages/@original`, body);
      return { messageId: str(edited.id) };
    }
    const sent = await call(token, 'POST', `/channels/${target.threadId}/messages`, {
      ...body,
      ...(target.replyTo ? { message_reference: { message_id: target.replyTo, fail_if_not_exists: false } } : {}),
    });
    return { messageId: str(sent.id) };
  },

  async markWorking(surface, target) {
    if (target.context?.interaction_token) return; // the deferred response already shows "thinking…"
    await call(surface.app!.credentials.bot_token!, 'POST', `/channels/${target.threadId}/typing`);
  },

  async clearWorking() {
    // Typing ends by itself; a deferred response ends when it is edited.
  },

  async download(_app: AppRecord, attachment, maxBytes) {
    const got = await download('discord', attachment.ref, maxBytes);
    return { data: got.data, mimeType: attachment.mimeType, name: attachment.name };
  },

  linkSurface(app) {
    return app.info.application_id ?? '';
  },
};
