// A fake WhatsApp Cloud API (Graph API: `GET /{phone_number_id}`, `POST /{phone_number_id}/messages`,
// media lookups; Bearer access token; errors as `{error: {message, type, code}}`) and the webhook
// side: the verification GET and deliveries signed `X-Hub-Signature-256: sha256=<HMAC>`.
import { createHmac } from 'node:crypto';
import { json, listen, post, readBody, type Recorded } from './http.js';

export interface FakeWhatsApp {
  /** WHATSAPP_API_BASE_URL */
  url: string;
  calls: Recorded[];
  /** access token → phone number id it may use */
  tokens: Map<string, string>;
  phones: Map<string, { display_phone_number: string; verified_name: string }>;
  addMedia(bytes: Buffer, mime: string): string;
  sent(): any[];
  /** A user's message as a signed webhook delivery. */
  userMessage(
    url: string,
    appSecret: string,
    phoneNumberId: string,
    msg: { from: string; name?: string; text?: string; image?: { id: string; mime: string; caption?: string } },
    opts?: { signature?: string },
  ): Promise<{ status: number; text: string; id: string }>;
  close(): Promise<void>;
}

export const hubSignature = (secret: string, body: string) => 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');

export async function startFakeWhatsApp(): Promise<FakeWhatsApp> {
  const calls: Recorded[] = [];
  const tokens = new Map<string, string>();
  const phones = new Map<string, { display_phone_number: string; verified_name: string }>();
  const media = new Map<string, { bytes: Buffer; mime: string }>();
  let next = 1;
  const oauthError = (res: Parameters<typeof json>[0]) =>
    json(res, 401, { error: { message: 'Invalid OAuth access token - Cannot parse access token', type: 'OAuthException', code: 190, fbtrace_id: 'AbC' } });

  let base = '';
  const srv = await listen(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const { body } = await readBody(req);
    calls.push({ method: req.method ?? '', path: url.pathname, headers: req.headers, body });
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!token || !tokens.has(token)) return oauthError(res);
    const download = /^\/media-bytes\/(.+)$/.exec(url.pathname);
    if (download) {
      const m = media.get(download[1]!);
      if (!m) return json(res, 404, { error: { message: 'not found', code: 100 } });
      return void res.writeHead(200, { 'content-type': m.mime }).end(m.bytes);
    }
    const parts = url.pathname.split('/').filter(Boolean);
    if (req.method === 'GET' && parts.length === 1) {
      const phone = phones.get(parts[0]!);
      if (phone && tokens.get(token) === parts[0]) return json(res, 200, { ...phone, id: parts[0], quality_rating: 'GREEN' });
      const m = media.get(parts[0]!);
      if (m)
        return json(res, 200, {
          messaging_product: 'whatsapp',
          url: `${base}/media-bytes/${parts[0]}`,
          mime_type: m.mime,
          sha256: 'x',
          file_size: m.bytes.length,
          id: parts[0],
        });
      return json(res, 400, {
        error: { message: `Unsupported get request. Object with ID '${parts[0]}' does not exist`, type: 'GraphMethodException', code: 100 },
      });
    }
    if (req.method === 'POST' && parts.length === 2 && parts[1] === 'messages') {
      if (tokens.get(token) !== parts[0]) return json(res, 400, { error: { message: 'Unsupported post request', type: 'GraphMethodException', code: 100 } });
      if (body.messaging_product !== 'whatsapp')
        return json(res, 400, { error: { message: '(#100) The parameter messaging_product is required.', type: 'OAuthException', code: 100 } });
      if (body.status === 'read') return json(res, 200, { success: true });
      if (!body.to || body.type !== 'text' || !body.text?.body)
        return json(res, 400, { error: { message: '(#100) Invalid parameter', type: 'OAuthException', code: 100 } });
      return json(res, 200, { messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id: `wamid.OUT${next++}` }] });
    }
    json(res, 404, { error: { message: 'Unknown path', code: 100 } });
  });
  base = srv.url;

  return {
    url: srv.url,
    calls,
    tokens,
    phones,
    addMedia(bytes, mime) {
      const id = `media${next++}`;
      media.set(id, { bytes, mime });
      return id;
    },
    sent: () => calls.filter((c) => c.method === 'POST' && c.path.endsWith('/messages') && c.body.type === 'text').map((c) => c.body),
    async userMessage(url, appSecret, phoneNumberId, msg, opts = {}) {
      const id = `wamid.IN${next++}`;
      const message: any = { from: msg.from, id, timestamp: String(Math.floor(Date.now() / 1000)) };
      if (msg.image)
        Object.assign(message, {
          type: 'image',
          image: { id: msg.image.id, mime_type: msg.image.mime, sha256: 'x', ...(msg.image.caption ? { caption: msg.image.caption } : {}) },
        });
      else Object.assign(message, { type: 'text', text: { body: msg.text ?? '' } });
      const payload = {
        object: 'whatsapp_business_account',
        entry: [
          {
            id: 'WABA1',
            changes: [
              {
                field: 'messages',
                value: {
                  messaging_product: 'whatsapp',
                  metadata: { display_phone_number: phones.get(phoneNumberId)?.display_phone_number ?? '', phone_number_id: phoneNumberId },
                  contacts: [{ profile: { name: msg.name ?? 'Grace' }, wa_id: msg.from }],
                  messages: [message],
                },
              },
            ],
          },
        ],
      };
      const body = JSON.stringify(payload);
      const r = await post(url, body, { 'content-type': 'application/json', 'x-hub-signature-256': opts.signature ?? hubSignature(appSecret, body) });
      return { status: r.status, text: r.text, id };
    },
    close: srv.close,
  };
}
