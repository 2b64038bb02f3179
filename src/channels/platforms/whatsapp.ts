// WhatsApp Cloud API: `GET /{phone_number_id}` on registration (the webhook URL and its verify
// token are set by hand in Meta's dashboard: `webhook_url`, `verify_token`); the dashboard's
// `GET ?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…` is answered with the challenge;
// deliveries are signed `X-Hub-Signature-256: sha256=<HMAC of the body with app_secret>`.
// Posts with `POST /{phone_number_id}/messages`; the working marker is "read + typing".
import { createHmac } from 'node:crypto';
import { config } from '../../config.js';
import { callJson, download, safeEqual } from './http.js';
import { PlatformError, type AppRecord, type InboundAttachment, type InboundMessage, type InboundResult, type PlatformAdapter } from './types.js';

const MiB = 1024 * 1024;

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);
const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);

async function call(token: string, method: string, path: string, body?: Obj): Promise<Obj> {
  const { status, json } = await callJson('whatsapp', `${config().whatsappApiBaseUrl}${path}`, { method, body, headers: { authorization: `Bearer ${token}` } });
  if (status < 200 || status >= 300 || json.error) {
    const error = obj(json.error);
    throw new PlatformError(
      'whatsapp',
      `whatsapp ${method} ${path} refused: ${str(error.message) ?? `status ${status}`}`,
      status,
      status === 401 || error.code === 190,
    );
  }
  return json;
}

const MEDIA: Record<string, InboundAttachment['type']> = { image: 'image', sticker: 'image', document: 'document', audio: 'audio', video: 'video' };

function parseMessage(m: Obj, names: Map<string, string>): InboundMessage | null {
  const from = str(m.from);
  const id = str(m.id);
  if (!from || !id) return null;
  const type = str(m.type) ?? '';
  const base = {
    dedupeId: `msg:${id}`,
    surfaceId: from,
    threadId: from,
    messageId: id,
    conversation: { id: from, is_dm: true, type: 'individual', title: null },
    author: { id: from, name: names.get(from) ?? null, username: null },
  };
  if (type === 'reaction') {
    const r = obj(m.reaction);
    return {
      ...base,
      kind: 'reaction',
      text: '',
      attachments: [],
      reaction: { emoji: str(r.emoji) ?? '', message_id: str(r.message_id) ?? '', removed: !r.emoji },
    };
  }
  if (type === 'interactive' || type === 'button') {
    const i = obj(m.interactive);
    const reply = obj(i.button_reply ?? i.list_reply);
    const button = obj(m.button);
    return {
      ...base,
      kind: 'action',
      text: '',
      attachments: [],
      action: { id: str(reply.id) ?? str(button.payload) ?? '', value: str(reply.title) ?? str(button.text) },
    };
  }
  const attachments: InboundAttachment[] = [];
  let text = str(obj(m.text).body) ?? '';
  if (MEDIA[type]) {
    const media = obj(m[type]);
    const mimeType = str(media.mime_type)?.split(';')[0]?.trim() ?? 'application/octet-stream';
    if (media.id)
      attachments.push({ ref: String(media.id), type: MEDIA[type]!, name: str(media.filename) ?? `${type}-${String(media.id)}`, mimeType, sizeBytes: null });
    text = str(media.caption) ?? text;
  }
  if (!text && !attachments.length) return null;
  return { ...base, kind: 'message', text, attachments, ...(m.context ? { context: { quoted: str(obj(m.context).id) ?? '' } } : {}) };
}

export const whatsapp: PlatformAdapter = {
  platform: 'whatsapp',
  capabilities: { threads: false, reactions: true, markers: true, proactive: true, markdown: true, modals: false, ephemeral: false, streaming: false },
  maxTextLength: 4096,
  maxInboundBytes: 20 * MiB,
  markerRefreshMs: null,
  connectFlow: 'code',

  async register(credentials, ctx) {
    const phone = await call(
      credentials.access_token!,
      'GET',
      `/${encodeURIComponent(credentials.phone_number_id!)}?fields=display_phone_number,verified_name`,
    );
    return {
      info: { display_phone_number: str(phone.display_phone_number) ?? '', verified_name: str(phone.verified_name) ?? '' },
      setup: { webhook_url: ctx.inboundUrl, verify_token: ctx.inboundSecret },
    };
  },

  verify(app, req) {
    if (req.method === 'GET') return req.query['hub.mode'] === 'subscribe' && safeEqual(req.query['hub.verify_token'] ?? '', app.inboundSecret);
    const signature = req.headers['x-hub-signature-256'];
    if (!signature) return false;
    return safeEqual(signature, 'sha256=' + createHmac('sha256', app.credentials.app_secret!).update(req.rawBody).digest('hex'));
  },

  parse(app, req): InboundResult {
    if (req.method === 'GET') return { status: 200, body: req.query['hub.challenge'] ?? '', messages: [], notices: [] };
    const payload = obj(JSON.parse(req.rawBody.toString('utf8') || '{}'));
    const messages: InboundMessage[] = [];
    for (const entry of list(payload.entry)) {
      for (const change of list(entry.changes)) {
        if (change.field !== 'messages') continue;
        const value = obj(change.value);
        // One app may share a business account with other numbers: only ours.
        if (str(obj(value.metadata).phone_number_id) !== app.credentials.phone_number_id) continue;
        const names = new Map(list(value.contacts).map((c) => [str(c.wa_id) ?? '', str(obj(c.profile).name) ?? '']));
        for (const m of list(value.messages)) {
          const parsed = parseMessage(m, names);
          if (parsed) messages.push(parsed);
        }
      }
    }
    return { status: 200, body: '', messages, notices: [] };
  },

  async send(surface, target, message) {
    const creds = surface.app!.credentials;
    const body = message.displayName ? `*${message.displayName}*: ${message.text}` : message.text;
    const sent = await call(creds.access_token!, 'POST', `/${encodeURIComponent(creds.phone_number_id!)}/messages`, {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: target.threadId,
      type: 'text',
      text: { body, preview_url: false },
      ...(target.replyTo ? { context: { message_id: target.replyTo } } : {}),
      ...message.raw,
    });
    return { messageId: str(list(sent.messages)[0]?.id) };
  },

  async markWorking(surface, target) {
    if (!target.replyTo) return;
    const creds = surface.app!.credentials;
    await call(creds.access_token!, 'POST', `/${encodeURIComponent(creds.phone_number_id!)}/messages`, {
      messaging_product: 'whatsapp',
      status: 'read',
      message_id: target.replyTo,
      typing_indicator: { type: 'text' },
    });
  },

  async clearWorking() {
    // The typing indicator ends with the reply (or after 25 s).
  },

  async download(app: AppRecord, attachment, maxBytes) {
    const token = app.credentials.access_token!;
    const media = await call(token, 'GET', `/${encodeURIComponent(attachment.ref)}`);
    if (typeof media.file_size === 'number' && media.file_size > maxBytes) throw new PlatformError('whatsapp', `the file is larger than ${maxBytes} bytes`);
    const url = str(media.url);
    if (!url) throw new PlatformError('whatsapp', 'whatsapp returned no media url');
    const got = await download('whatsapp', url, maxBytes, { authorization: `Bearer ${token}` });
    return { data: got.data, mimeType: str(media.mime_type) ?? attachment.mimeType, name: attachment.name };
  },

  connectInfo(app, _token, code) {
    const phone = app.info.display_phone_number ?? '';
    return { url: `https://wa.me/${phone.replace(/\D/g, '')}?text=${encodeURIComponent(code)}`, phone, code };
  },

  homeThread(channelId) {
    return channelId;
  },
};
