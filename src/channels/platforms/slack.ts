// Slack: `auth.test` on registration (the Events API request URL is set by hand: `events_url`);
// inbound requests are signed `v0=` HMAC-SHA256 of `v0:{timestamp}:{body}` with the signing
// secret (5 minutes of skew); answers `url_verification`; events, slash commands and block
// actions arrive on the same URL. Posts with `chat.postMessage`; the working marker is an
// :eyes: reaction on the replied-to message.
import { createHmac } from 'node:crypto';
import { config } from '../../config.js';
import { callJson, download, safeEqual } from './http.js';
import {
  PlatformError,
  type AppRecord,
  type InboundAttachment,
  type InboundMessage,
  type InboundResult,
  type PlatformAdapter,
  type Surface,
  type SurfaceNotice,
} from './types.js';

const MiB = 1024 * 1024;
const MAX_SKEW_S = 300;
const AUTH_ERRORS = new Set(['invalid_auth', 'not_authed', 'token_revoked', 'token_expired', 'account_inactive', 'missing_scope']);
const MARKER = 'eyes';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);

async function call(token: string, method: string, body: Obj): Promise<Obj> {
  const { status, json } = await callJson('slack', `${config().slackApiBaseUrl}/${method}`, { body, headers: { authorization: `Bearer ${token}` } });
  if (json.ok !== true) {
    const error = str(json.error) ?? `status ${status}`;
    throw new PlatformError('slack', `slack ${method} refused: ${error}`, status, AUTH_ERRORS.has(error) || status === 401);
  }
  return json;
}

const splitThread = (threadId: string) => {
  const [channel, ts] = threadId.split(':');
  return { channel: channel!, thread_ts: ts };
};
const threadOf = (channel: string, threadTs: string | null) => (threadTs ? `${channel}:${threadTs}` : channel);
const isDmChannel = (channel: string) => channel.startsWith('D');

function filesOf(event: Obj): InboundAttachment[] {
  const files = Array.isArray(event.files) ? (event.files as Obj[]) : [];
  return files
    .filter((f) => f.url_private_download || f.url_private)
    .map((f) => {
      const mimeType = str(f.mimetype) ?? 'application/octet-stream';
      return {
        ref: String(f.url_private_download ?? f.url_private),
        type: mimeType.startsWith('image/') ? 'image' : mimeType.startsWith('audio/') ? 'audio' : mimeType.startsWith('video/') ? 'video' : 'document',
        name: str(f.name) ?? str(f.id) ?? 'file',
        mimeType,
        sizeBytes: typeof f.size === 'number' ? f.size : null,
      } satisfies InboundAttachment;
    });
}

function parseEvent(payload: Obj): { messages: InboundMessage[]; notices: SurfaceNotice[] } {
  const event = obj(payload.event);
  const team = str(payload.team_id) ?? str(event.team) ?? '';
  const type = str(event.type);
  if ((type === 'message' || type === 'app_mention') && !event.bot_id && (event.subtype === undefined || event.subtype === 'file_share')) {
    const channel = str(event.channel) ?? '';
    const ts = str(event.ts) ?? '';
    return {
      notices: [],
      messages: [
        {
          kind: 'message',
          // A mention arrives twice (message + app_mention, two event ids): the message ts is the key.
          dedupeId: `msg:${channel}:${ts}`,
          surfaceId: team,
          threadId: threadOf(channel, str(event.thread_ts)),
          messageId: ts,
          text: (str(event.text) ?? '').replace(/^<@[A-Z0-9]+>\s*/, ''),
          conversation: { id: channel, is_dm: str(event.channel_type) === 'im' || isDmChannel(channel), type: str(event.channel_type), title: null },
          author: { id: str(event.user) ?? 'unknown', name: null, username: null },
          attachments: filesOf(event),
        },
      ],
    };
  }
  if (type === 'reaction_added' || type === 'reaction_removed') {
    const item = obj(event.item);
    const channel = str(item.channel) ?? '';
    return {
      notices: [],
      messages: [
        {
          kind: 'reaction',
          dedupeId: `event:${str(payload.event_id)}`,
          surfaceId: team,
          threadId: channel,
          messageId: str(item.ts) ?? '',
          text: '',
          conversation: { id: channel, is_dm: isDmChannel(channel), type: null, title: null },
          author: { id: str(event.user) ?? 'unknown', name: null, username: null },
          attachments: [],
          reaction: { emoji: str(event.reaction) ?? '', message_id: str(item.ts) ?? '', removed: type === 'reaction_removed' },
        },
      ],
    };
  }
  if (type === 'app_uninstalled') return { messages: [], notices: [{ kind: 'disconnected', surfaceId: team, reason: 'the Slack app was uninstalled' }] };
  if (type === 'tokens_revoked') return { messages: [], notices: [{ kind: 'needs_reauth', surfaceId: team, reason: 'the Slack tokens were revoked' }] };
  return { messages: [], notices: [] };
}

function parseForm(form: URLSearchParams): InboundMessage | null {
  const payloadText = form.get('payload');
  if (payloadText) {
    const p = obj(JSON.parse(payloadText));
    if (p.type !== 'block_actions') return null;
    const action = obj((Array.isArray(p.actions) ? p.actions : [])[0]);
    const channel = str(obj(p.channel).id) ?? '';
    const message = obj(p.message);
    const user = obj(p.user);
    return {
      kind: 'action',
      dedupeId: `action:${str(p.trigger_id) ?? str(action.action_ts)}`,
      surfaceId: str(obj(p.team).id) ?? '',
      threadId: threadOf(channel, str(message.thread_ts)),
      messageId: str(message.ts) ?? '',
      text: '',
      conversation: { id: channel, is_dm: isDmChannel(channel), type: null, title: str(obj(p.channel).name) },
      author: { id: str(user.id) ?? 'unknown', name: str(user.name), username: str(user.username) },
      attachments: [],
      action: { id: str(action.action_id) ?? '', value: str(action.value) ?? str(obj(action.selected_option).value) },
      context: { response_url: str(p.response_url) ?? '' },
    };
  }
  const command = form.get('command');
  if (!command) return null;
  const channel = form.get('channel_id') ?? '';
  return {
    kind: 'command',
    dedupeId: `command:${form.get('trigger_id')}`,
    surfaceId: form.get('team_id') ?? '',
    threadId: channel,
    messageId: form.get('trigger_id') ?? '',
    text: form.get('text') ?? '',
    conversation: { id: channel, is_dm: form.get('channel_name') === 'directmessage' || isDmChannel(channel), type: null, title: form.get('channel_name') },
    author: { id: form.get('user_id') ?? 'unknown', name: form.get('user_name'), username: form.get('user_name') },
    attachments: [],
    command: { name: command.replace(/^\//, ''), text: form.get('text') ?? '' },
    context: { response_url: form.get('response_url') ?? '' },
  };
}

async function react(surface: Surface, method: 'reactions.add' | 'reactions.remove', channel: string, ts: string): Promise<void> {
  try {
    await call(surface.app!.credentials.bot_token!, method, { channel, timestamp: ts, name: MARKER });
  } catch (err) {
    if (err instanceof PlatformError && /already_reacted|no_reaction/.test(err.message)) return;
    throw err;
  }
}

export const slack: PlatformAdapter = {
  platform: 'slack',
  capabilities: { threads: true, reactions: true, markers: true, proactive: true, markdown: true, modals: true, ephemeral: true, streaming: false },
  maxTextLength: 39_000,
  maxInboundBytes: 32 * MiB,
  markerRefreshMs: null,
  connectFlow: 'link',

  async register(credentials, ctx) {
    const who = await call(credentials.bot_token!, 'auth.test', {});
    return {
      info: { team_id: str(who.team_id) ?? '', team: str(who.team) ?? '', bot_user_id: str(who.user_id) ?? '' },
      setup: { events_url: ctx.inboundUrl },
    };
  },

  verify(app, req) {
    if (req.method !== 'POST') return false;
    const ts = req.headers['x-slack-request-timestamp'];
    const signature = req.headers['x-slack-signature'];
    if (!ts || !signature || !/^\d+$/.test(ts) || Math.abs(Date.now() / 1000 - Number(ts)) > MAX_SKEW_S) return false;
    const expected = 'v0=' + createHmac('sha256', app.credentials.signing_secret!).update(`v0:${ts}:`).update(req.rawBody).digest('hex');
    return safeEqual(signature, expected);
  },

  parse(_app, req): InboundResult {
    const contentType = req.headers['content-type'] ?? '';
    const raw = req.rawBody.toString('utf8');
    if (contentType.includes('application/x-www-form-urlencoded')) {
      const message = parseForm(new URLSearchParams(raw));
      return { status: 200, body: '', messages: message ? [message] : [], notices: [] };
    }
    const payload = obj(JSON.parse(raw || '{}'));
    if (payload.type === 'url_verification') return { status: 200, body: { challenge: str(payload.challenge) ?? '' }, messages: [], notices: [] };
    if (payload.type !== 'event_callback') return { status: 200, body: {}, messages: [], notices: [] };
    return { status: 200, body: {}, ...parseEvent(payload) };
  },

  async send(surface, target, message) {
    const { channel, thread_ts } = splitThread(target.threadId);
    const sent = await call(surface.app!.credentials.bot_token!, 'chat.postMessage', {
      channel,
      text: message.text,
      ...(thread_ts ? { thread_ts } : {}),
      ...(message.displayName ? { username: message.displayName } : {}),
      mrkdwn: message.markdown,
      ...message.raw,
    });
    return { messageId: str(sent.ts) };
  },

  async markWorking(surface, target) {
    if (target.replyTo) await react(surface, 'reactions.add', splitThread(target.threadId).channel, target.replyTo);
  },

  async clearWorking(surface, target) {
    if (target.replyTo) await react(surface, 'reactions.remove', splitThread(target.threadId).channel, target.replyTo);
  },

  async download(app: AppRecord, attachment, maxBytes) {
    const got = await download('slack', attachment.ref, maxBytes, { authorization: `Bearer ${app.credentials.bot_token}` });
    return { data: got.data, mimeType: attachment.mimeType, name: attachment.name };
  },

  linkSurface(app) {
    return app.info.team_id ?? '';
  },

  async invite(app, user, url, label) {
    const opened = await call(app.credentials.bot_token!, 'conversations.open', { users: user });
    const channel = str(obj(opened.channel).id);
    if (!channel) throw new PlatformError('slack', 'slack conversations.open returned no channel');
    await call(app.credentials.bot_token!, 'chat.postMessage', { channel, text: `You are invited to connect "${label}": ${url}` });
  },
};
