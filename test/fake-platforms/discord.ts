// A fake Discord API (`Authorization: Bot <token>`; errors as `{message, code}` with the HTTP
// status) and the interactions side: an Ed25519 key pair made with node:crypto signs
// `timestamp + body` into `X-Signature-Ed25519` / `X-Signature-Timestamp`, as Discord does.
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { json, listen, post, readBody, type Recorded } from './http.js';

export interface FakeDiscord {
  /** DISCORD_API_BASE_URL */
  url: string;
  calls: Recorded[];
  /** bot token → application (bot user) */
  tokens: Map<string, { id: string; username: string }>;
  /** The application's public key as Discord shows it: 64 hex characters. */
  publicKeyHex: string;
  sent(method: string, pathPrefix: string): Recorded[];
  /** Signs and POSTs an interaction to the service (a different key when `forge` is set). */
  interact(url: string, interaction: unknown, opts?: { forge?: boolean; timestamp?: string }): Promise<{ status: number; text: string; json: any }>;
  close(): Promise<void>;
}

export async function startFakeDiscord(): Promise<FakeDiscord> {
  const calls: Recorded[] = [];
  const tokens = new Map<string, { id: string; username: string }>();
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const forger = generateKeyPairSync('ed25519').privateKey;
  const publicKeyHex = (publicKey.export({ format: 'der', type: 'spki' }) as Buffer).subarray(-32).toString('hex');
  let nextId = 1_100_000_000_000_000_000n;

  const srv = await listen(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const { body } = await readBody(req);
    calls.push({ method: req.method ?? '', path, headers: req.headers, body });
    const webhook = /^\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/.exec(path);
    if (webhook) {
      // Interaction webhooks are authorised by their token, not the bot token.
      if (req.method !== 'PATCH') return json(res, 405, { message: '405: Method Not Allowed', code: 0 });
      return json(res, 200, { id: String(nextId++), content: body.content, channel_id: 'interaction' });
    }
    const token = /^Bot (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const app = token ? tokens.get(token) : undefined;
    if (!app) return json(res, 401, { message: '401: Unauthorized', code: 0 });
    if (req.method === 'GET' && path === '/users/@me') return json(res, 200, { id: app.id, username: app.username, discriminator: '0', bot: true });
    const channel = /^\/channels\/(\d+)\/(messages|typing)$/.exec(path);
    if (channel && req.method === 'POST') {
      if (channel[2] === 'typing') return void res.writeHead(204).end();
      if (!body.content && !body.embeds) return json(res, 400, { message: 'Cannot send an empty message', code: 50006 });
      if (String(body.content ?? '').length > 2000) return json(res, 400, { message: 'Invalid Form Body', code: 50035 });
      return json(res, 200, { id: String(nextId++), channel_id: channel[1], content: body.content });
    }
    json(res, 404, { message: '404: Not Found', code: 0 });
  });

  const signWith = (key: KeyObject, timestamp: string, body: string) => sign(null, Buffer.from(timestamp + body), key).toString('hex');
  return {
    url: srv.url,
    calls,
    tokens,
    publicKeyHex,
    sent: (method, prefix) => calls.filter((c) => c.method === method && c.path.startsWith(prefix)),
    async interact(url, interaction, opts = {}) {
      const body = JSON.stringify(interaction);
      const timestamp = opts.timestamp ?? String(Math.floor(Date.now() / 1000));
      return post(url, body, {
        'content-type': 'application/json',
        'x-signature-timestamp': timestamp,
        'x-signature-ed25519': signWith(opts.forge ? forger : privateKey, timestamp, body),
      });
    },
    close: srv.close,
  };
}
