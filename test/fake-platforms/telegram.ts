// A fake Telegram Bot API on a real port: `POST /bot<token>/<method>` (JSON or form bodies) with
// Telegram's `{ok, result}` / `{ok: false, error_code, description}` answers, file downloads at
// `/file/bot<token>/<path>`, and the webhook side: updates are POSTed to the URL the service
// registered with `setWebhook`, carrying `X-Telegram-Bot-Api-Secret-Token`, as Telegram does.
import type http from 'node:http';
import { json, listen, post, readBody, type Recorded } from './http.js';

export interface TelegramBot {
  token: string;
  id: number;
  username: string;
  webhook: { url: string; secret_token: string | null; allowed_updates: string[] | null } | null;
}

export interface FakeTelegram {
  /** TELEGRAM_API_BASE_URL */
  url: string;
  calls: Recorded[];
  bots: Map<string, TelegramBot>;
  addBot(token: string, username: string): TelegramBot;
  addFile(bytes: Buffer): string;
  /** Refuse every sendMessage to this chat (as for a bot the user blocked). */
  blockedChats: Set<number>;
  /** Refuse the next `count` sendMessage calls with Telegram's flood limit (429, parameters.retry_after). */
  floodNext(count: number, retryAfterSec: number): void;
  /** The user writes to the bot: an Update delivered to the registered webhook. */
  userMessage(
    token: string,
    msg: {
      chatId: number;
      text?: string;
      from?: { id: number; first_name: string; username?: string };
      chatType?: string;
      photo?: string;
      document?: { fileId: string; name: string; mime: string; size: number };
      caption?: string;
    },
  ): Promise<{ status: number; update: any; text: string }>;
  /** Delivers a raw update (optionally with a wrong secret). */
  deliver(token: string, update: any, secret?: string | null): Promise<{ status: number; text: string }>;
  sent(method: string, token?: string): any[];
  close(): Promise<void>;
}

export async function startFakeTelegram(): Promise<FakeTelegram> {
  const calls: Recorded[] = [];
  const bots = new Map<string, TelegramBot>();
  const files = new Map<string, { bytes: Buffer; path: string }>();
  const blockedChats = new Set<number>();
  const flood = { count: 0, retryAfter: 1 };
  let nextBotId = 7_000_000_000;
  let nextMessageId = 100;
  let nextUpdateId = 500_000;
  let nextFile = 1;

  const fail = (res: http.ServerResponse, code: number, description: string) => json(res, code, { ok: false, error_code: code, description });
  const ok = (res: http.ServerResponse, result: unknown) => json(res, 200, { ok: true, result });

  const methods: Record<string, (bot: TelegramBot, p: any, res: http.ServerResponse) => void> = {
    getMe: (bot, _p, res) =>
      ok(res, {
        id: bot.id,
        is_bot: true,
        first_name: bot.username,
        username: bot.username,
        can_join_groups: true,
        can_read_all_group_messages: false,
        supports_inline_queries: false,
      }),
    setWebhook: (bot, p, res) => {
      if (!p.url || !/^https?:\/\//.test(p.url)) return fail(res, 400, 'Bad Request: bad webhook: An HTTPS URL must be provided for webhook');
      if (p.secret_token !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(p.secret_token))
        return fail(res, 400, 'Bad Request: secret token contains unallowed characters');
      bot.webhook = { url: p.url, secret_token: p.secret_token ?? null, allowed_updates: p.allowed_updates ?? null };
      ok(res, true);
    },
    deleteWebhook: (bot, _p, res) => {
      bot.webhook = null;
      ok(res, true);
    },
    sendMessage: (_bot, p, res) => {
      if (p.chat_id === undefined) return fail(res, 400, 'Bad Request: chat_id is empty');
      if (typeof p.text !== 'string' || !p.text.trim()) return fail(res, 400, 'Bad Request: message text is empty');
      if (p.text.length > 4096) return fail(res, 400, 'Bad Request: message is too long');
      if (blockedChats.has(Number(p.chat_id))) return fail(res, 403, 'Forbidden: bot was blocked by the user');
      if (flood.count > 0) {
        flood.count--;
        return json(res, 429, {
          ok: false,
          error_code: 429,
          description: `Too Many Requests: retry after ${flood.retryAfter}`,
          parameters: { retry_after: flood.retryAfter },
        });
      }
      if (p.parse_mode === 'Markdown' && ((p.text.match(/\*/g) ?? []).length % 2 || (p.text.match(/_/g) ?? []).length % 2)) {
        return fail(res, 400, "Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 0");
      }
      ok(res, { message_id: nextMessageId++, date: Math.floor(Date.now() / 1000), chat: { id: Number(p.chat_id), type: 'private' }, text: p.text });
    },
    sendChatAction: (_bot, p, res) => {
      if (!['typing', 'upload_photo', 'upload_document'].includes(p.action)) return fail(res, 400, 'Bad Request: wrong parameter action in request');
      ok(res, true);
    },
    answerCallbackQuery: (_bot, _p, res) => ok(res, true),
    getFile: (_bot, p, res) => {
      const f = files.get(p.file_id);
      if (!f) return fail(res, 400, 'Bad Request: invalid file_id');
      ok(res, { file_id: p.file_id, file_unique_id: `u${p.file_id}`, file_size: f.bytes.length, file_path: f.path });
    },
  };

  const srv = await listen(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const fileMatch = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (fileMatch) {
      if (!bots.has(fileMatch[1]!)) return fail(res, 401, 'Unauthorized');
      const f = [...files.values()].find((x) => x.path === fileMatch[2]);
      if (!f) return fail(res, 404, 'Not Found');
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(f.bytes.length) }).end(f.bytes);
      return;
    }
    const m = /^\/bot([^/]+)\/(\w+)$/.exec(url.pathname);
    const { body } = await readBody(req);
    const params = { ...Object.fromEntries(url.searchParams), ...(Buffer.isBuffer(body) ? {} : body) };
    calls.push({ method: m?.[2] ?? '?', path: url.pathname, headers: req.headers, body: params, at: Date.now() });
    if (!m) return fail(res, 404, 'Not Found');
    const bot = bots.get(m[1]!);
    if (!bot) return fail(res, 401, 'Unauthorized');
    const handler = methods[m[2]!];
    if (!handler) return fail(res, 404, 'Not Found: method not found');
    handler(bot, params, res);
  });

  async function deliver(token: string, update: any, secret?: string | null) {
    const bot = bots.get(token);
    if (!bot?.webhook) throw new Error('no webhook registered for this bot');
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const s = secret === undefined ? bot.webhook.secret_token : secret;
    if (s) headers['x-telegram-bot-api-secret-token'] = s;
    const r = await post(bot.webhook.url, JSON.stringify(update), headers);
    return { status: r.status, text: r.text };
  }

  return {
    url: srv.url,
    calls,
    bots,
    blockedChats,
    floodNext(count, retryAfterSec) {
      flood.count = count;
      flood.retryAfter = retryAfterSec;
    },
    addBot(token, username) {
      const bot: TelegramBot = { token, id: nextBotId++, username, webhook: null };
      bots.set(token, bot);
      return bot;
    },
    addFile(bytes) {
      const id = `AgAD${nextFile++}file`;
      files.set(id, { bytes, path: `photos/file_${nextFile}.jpg` });
      return id;
    },
    async userMessage(token, msg) {
      const from = msg.from ?? { id: msg.chatId, first_name: 'Ada', username: 'ada' };
      const message: any = {
        message_id: nextMessageId++,
        from: { ...from, is_bot: false },
        chat: { id: msg.chatId, type: msg.chatType ?? 'private', first_name: from.first_name },
        date: Math.floor(Date.now() / 1000),
      };
      if (msg.text !== undefined) {
        message.text = msg.text;
        if (msg.text.startsWith('/')) message.entities = [{ type: 'bot_command', offset: 0, length: msg.text.split(' ')[0]!.length }];
      }
      if (msg.photo) {
        const f = files.get(msg.photo)!;
        message.photo = [
          { file_id: `${msg.photo}-thumb`, file_unique_id: 'thumb', width: 90, height: 90, file_size: 100 },
          { file_id: msg.photo, file_unique_id: `u${msg.photo}`, width: 800, height: 600, file_size: f.bytes.length },
        ];
      }
      if (msg.document)
        message.document = {
          file_id: msg.document.fileId,
          file_unique_id: `u${msg.document.fileId}`,
          file_name: msg.document.name,
          mime_type: msg.document.mime,
          file_size: msg.document.size,
        };
      if (msg.caption) message.caption = msg.caption;
      const update = { update_id: nextUpdateId++, message };
      const r = await deliver(token, update);
      return { status: r.status, update, text: r.text };
    },
    deliver,
    sent: (method, token) => calls.filter((c) => c.method === method && (!token || c.path.startsWith(`/bot${token}/`))).map((c) => c.body),
    close: srv.close,
  };
}
