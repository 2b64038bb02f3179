// Telegram Bot API: `getMe` + `setWebhook` (with a secret_token) on registration; updates arrive
// with `X-Telegram-Bot-Api-Secret-Token`; posts with `sendMessage`, the working marker is
// `sendChatAction typing` (it fades after ~5 s, so it is repeated); files via `getFile`.
import { config } from '../../config.js';
import { callJson, download, safeEqual } from './http.js';
import {
  PlatformError,
  type AppRecord,
  type InboundAttachment,
  type InboundMessage,
  type InboundResult,
  type OutboundTarget,
  type PlatformAdapter,
  type SurfaceNotice,
} from './types.js';

const MiB = 1024 * 1024;
const apiUrl = (token: string, method: string) => `${config().telegramApiBaseUrl}/bot${token}/${method}`;

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);

async function call(token: string, method: string, params: Obj = {}): Promise<unknown> {
  const { status, json } = await callJson('telegram', apiUrl(token, method), { body: params });
  if (json.ok !== true) {
    const code = typeof json.error_code === 'number' ? json.error_code : status;
    // A flood limit says how long to wait: parameters.retry_after (seconds).
    const retryAfter = obj(json.parameters).retry_after;
    throw new PlatformError(
      'telegram',
      `telegram ${method} refused: ${str(json.description) ?? `status ${status}`}`,
      code,
      code === 401 || (method === 'getMe' && code === 404),
      typeof retryAfter === 'number' ? { retryAfterMs: retryAfter * 1000 } : {},
    );
  }
  return json.result;
}

/** `chat` or `chat:topic` → sendMessage's chat_id (numeric ids as numbers) and message_thread_id. */
function chatOf(threadId: string): { chat_id: number | string; message_thread_id?: number } {
  const [chat, topic] = threadId.split(':');
  const chatId = /^-?\d+$/.test(chat!) ? Number(chat) : chat!;
  return topic && /^\d+$/.test(topic) ? { chat_id: chatId, message_thread_id: Number(topic) } : { chat_id: chatId };
}

function attachmentsOf(m: Obj): InboundAttachment[] {
  const out: InboundAttachment[] = [];
  const photos = Array.isArray(m.photo) ? (m.photo as Obj[]) : [];
  if (photos.length) {
    const best = photos[photos.length - 1]!; // sizes come smallest first
    out.push({
      ref: String(best.file_id),
      type: 'image',
      name: `photo-${str(best.file_unique_id) ?? 'telegram'}.jpg`,
      mimeType: 'image/jpeg',
      sizeBytes: typeof best.file_size === 'number' ? best.file_size : null,
    });
  }
  const kinds: [string, InboundAttachment['type'], string][] = [
    ['document', 'document', 'application/octet-stream'],
    ['audio', 'audio', 'audio/mpeg'],
    ['voice', 'audio', 'audio/ogg'],
    ['video', 'video', 'video/mp4'],
    ['video_note', 'video', 'video/mp4'],
    ['animation', 'video', 'video/mp4'],
  ];
  for (const [key, type, fallback] of kinds) {
    const f = obj(m[key]);
    if (!f.file_id) continue;
    const mimeType = str(f.mime_type) ?? fallback;
    out.push({
      ref: String(f.file_id),
      type: key === 'document' && mimeType.startsWith('image/') ? 'image' : type,
      name: str(f.file_name) ?? `${key}-${str(f.file_unique_id) ?? 'telegram'}`,
      mimeType,
      sizeBytes: typeof f.file_size === 'number' ? f.file_size : null,
    });
  }
  return out;
}

function person(from: Obj): InboundMessage['author'] {
  const name = [str(from.first_name), str(from.last_name)].filter(Boolean).join(' ');
  return { id: str(from.id) ?? 'unknown', name: name || null, username: str(from.username) };
}

function conversationOf(chat: Obj): InboundMessage['conversation'] {
  return { id: str(chat.id) ?? '', is_dm: chat.type === 'private', type: str(chat.type), title: str(chat.title) ?? str(chat.username) };
}

function threadOf(chat: Obj, m: Obj): string {
  return m.is_topic_message && typeof m.message_thread_id === 'number' ? `${str(chat.id)}:${m.message_thread_id}` : String(str(chat.id));
}

function parseMessage(updateId: string, m: Obj): InboundMessage | null {
  const chat = obj(m.chat);
  if (chat.id === undefined || obj(m.from).is_bot === true) return null;
  const text = str(m.text) ?? str(m.caption) ?? '';
  const entities = Array.isArray(m.entities) ? (m.entities as Obj[]) : [];
  const isCommand = entities.some((e) => e.type === 'bot_command' && e.offset === 0);
  const base: InboundMessage = {
    kind: isCommand ? 'command' : 'message',
    dedupeId: `update:${updateId}`,
    surfaceId: String(str(chat.id)),
    threadId: threadOf(chat, m),
    messageId: String(str(m.message_id)),
    text,
    conversation: conversationOf(chat),
    author: person(obj(m.from ?? chat)),
    attachments: attachmentsOf(m),
  };
  if (isCommand) {
    const [head, ...rest] = text.split(/\s+/);
    base.command = { name: head!.slice(1).split('@')[0]!, text: rest.join(' ') };
  }
  return base;
}

export const telegram: PlatformAdapter = {
  platform: 'telegram',
  capabilities: { threads: true, reactions: true, markers: true, proactive: true, markdown: true, modals: false, ephemeral: false, streaming: false },
  maxTextLength: 4096,
  maxInboundBytes: 32 * MiB,
  markerRefreshMs: 4_500,
  connectFlow: 'start',

  async register(credentials, ctx) {
    const me = obj(await call(credentials.bot_token!, 'getMe'));
    if (!me.username) throw new PlatformError('telegram', 'telegram getMe returned no bot username');
    await call(credentials.bot_token!, 'setWebhook', {
      url: ctx.inboundUrl,
      secret_token: ctx.inboundSecret,
      allowed_updates: ['message', 'callback_query', 'message_reaction', 'my_chat_member'],
    });
    return { info: { bot_id: String(str(me.id)), bot_username: String(me.username) }, setup: { webhook_url: ctx.inboundUrl } };
  },

  async unregister(app) {
    await call(app.credentials.bot_token!, 'deleteWebhook');
  },

  verify(app, req) {
    const given = req.headers['x-telegram-bot-api-secret-token'];
    return req.method === 'POST' && typeof given === 'string' && safeEqual(given, app.inboundSecret);
  },

  parse(_app, req): InboundResult {
    const update = obj(JSON.parse(req.rawBody.toString('utf8') || '{}'));
    const updateId = str(update.update_id) ?? '';
    const messages: InboundMessage[] = [];
    const notices: SurfaceNotice[] = [];
    if (update.message) {
      const m = parseMessage(updateId, obj(update.message));
      if (m) messages.push(m);
    } else if (update.callback_query) {
      const q = obj(update.callback_query);
      const m = obj(q.message);
      const chat = obj(m.chat);
      if (chat.id !== undefined) {
        messages.push({
          kind: 'action',
          dedupeId: `update:${updateId}`,
          surfaceId: String(str(chat.id)),
          threadId: threadOf(chat, m),
          messageId: String(str(m.message_id)),
          text: '',
          conversation: conversationOf(chat),
          author: person(obj(q.from)),
          attachments: [],
          action: { id: str(q.id) ?? '', value: str(q.data) },
          context: { callback_query_id: str(q.id) ?? '' },
        });
      }
    } else if (update.message_reaction) {
      const r = obj(update.message_reaction);
      const chat = obj(r.chat);
      const added = (Array.isArray(r.new_reaction) ? (r.new_reaction as Obj[]) : []).find((x) => x.type === 'emoji');
      const removed = (Array.isArray(r.old_reaction) ? (r.old_reaction as Obj[]) : []).find((x) => x.type === 'emoji');
      const emoji = str(added?.emoji) ?? str(removed?.emoji);
      if (chat.id !== undefined && emoji) {
        messages.push({
          kind: 'reaction',
          dedupeId: `update:${updateId}`,
          surfaceId: String(str(chat.id)),
          threadId: String(str(chat.id)),
          messageId: String(str(r.message_id)),
          text: '',
          conversation: conversationOf(chat),
          author: person(obj(r.user)),
          attachments: [],
          reaction: { emoji, message_id: String(str(r.message_id)), removed: !added },
        });
      }
    } else if (update.my_chat_member) {
      const c = obj(update.my_chat_member);
      const status = str(obj(c.new_chat_member).status);
      if (status === 'kicked' || status === 'left')
        notices.push({
          kind: 'disconnected',
          surfaceId: str(obj(c.chat).id),
          reason: `the bot was ${status === 'kicked' ? 'blocked or removed' : 'removed'} in Telegram`,
        });
    }
    return { status: 200, body: {}, messages, notices };
  },

  async acknowledge(app, message) {
    if (message.context?.callback_query_id)
      await call(app.credentials.bot_token!, 'answerCallbackQuery', { callback_query_id: message.context.callback_query_id });
  },

  async send(surface, target, message) {
    const token = surface.app!.credentials.bot_token!;
    const text = message.displayName ? `${message.displayName}: ${message.text}` : message.text;
    const params: Obj = {
      ...chatOf(target.threadId),
      text,
      ...(target.replyTo ? { reply_parameters: { message_id: Number(target.replyTo), allow_sending_without_reply: true } } : {}),
      ...(message.markdown ? { parse_mode: 'Markdown' } : {}),
      ...message.raw,
    };
    let sent: Obj;
    try {
      sent = obj(await call(token, 'sendMessage', params));
    } catch (err) {
      // Markdown the legacy parser cannot read is sent as plain text rather than lost.
      if (!(err instanceof PlatformError) || err.status !== 400 || !params.parse_mode || !/parse entities/i.test(err.message)) throw err;
      delete params.parse_mode;
      sent = obj(await call(token, 'sendMessage', params));
    }
    return { messageId: str(sent.message_id) };
  },

  async markWorking(surface, target: OutboundTarget) {
    await call(surface.app!.credentials.bot_token!, 'sendChatAction', { ...chatOf(target.threadId), action: 'typing' });
  },

  async clearWorking() {
    // Telegram's typing indicator ends by itself (and on the next message).
  },

  async download(app: AppRecord, attachment, maxBytes) {
    const token = app.credentials.bot_token!;
    const file = obj(await call(token, 'getFile', { file_id: attachment.ref }));
    if (typeof file.file_size === 'number' && file.file_size > maxBytes) throw new PlatformError('telegram', `the file is larger than ${maxBytes} bytes`);
    const path = str(file.file_path);
    if (!path) throw new PlatformError('telegram', 'telegram getFile returned no file_path');
    const got = await download('telegram', `${config().telegramApiBaseUrl}/file/bot${token}/${path}`, maxBytes);
    return { data: got.data, mimeType: attachment.mimeType, name: attachment.name };
  },

  connectInfo(app, token) {
    return { url: `https://t.me/${app.info.bot_username}?start=${token}` };
  },

  homeThread(channelId) {
    return channelId;
  },
};
