// A fake Slack Web API (`POST /<method>` with a Bearer bot token, answers `{ok, …}` or
// `{ok: false, error}`, HTTP 200 either way as Slack does) and the Events API side: requests
// signed `v0=` HMAC-SHA256 of `v0:{timestamp}:{body}` with the app's signing secret.
import { createHmac } from 'node:crypto';
import { json, listen, post, readBody, type Recorded } from './http.js';

export interface FakeSlack {
  /** SLACK_API_BASE_URL */
  url: string;
  calls: Recorded[];
  /** bot token → team */
  tokens: Map<string, { team_id: string; team: string; user_id: string; bot_id: string }>;
  sent(method: string): any[];
  /** Signs and POSTs a body to the service's inbound URL as Slack does. */
  send(
    url: string,
    signingSecret: string,
    body: string,
    contentType?: string,
    opts?: { timestamp?: number; signature?: string },
  ): Promise<{ status: number; text: string; json: any }>;
  close(): Promise<void>;
}

export function slackSignature(secret: string, timestamp: number, body: string): string {
  return 'v0=' + createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex');
}

export async function startFakeSlack(): Promise<FakeSlack> {
  const calls: Recorded[] = [];
  const tokens = new Map<string, { team_id: string; team: string; user_id: string; bot_id: string }>();
  let ts = 1_700_000_000;
  const srv = await listen(async (req, res) => {
    const method = (req.url ?? '/').split('?')[0]!.slice(1);
    const { body } = await readBody(req);
    calls.push({ method, path: req.url ?? '', headers: req.headers, body });
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const who = token ? tokens.get(token) : undefined;
    if (!token) return json(res, 200, { ok: false, error: 'not_authed' });
    if (!who) return json(res, 200, { ok: false, error: 'invalid_auth' });
    switch (method) {
      case 'auth.test':
        return json(res, 200, {
          ok: true,
          url: `https://${who.team.toLowerCase()}.slack.com/`,
          team: who.team,
          user: 'agentbot',
          team_id: who.team_id,
          user_id: who.user_id,
          bot_id: who.bot_id,
        });
      case 'chat.postMessage':
        if (!body.channel) return json(res, 200, { ok: false, error: 'channel_not_found' });
        if (!body.text && !body.blocks) return json(res, 200, { ok: false, error: 'no_text' });
        return json(res, 200, { ok: true, channel: body.channel, ts: `${ts++}.000100`, message: { text: body.text } });
      case 'reactions.add':
      case 'reactions.remove':
        return json(res, 200, body.channel && body.timestamp && body.name ? { ok: true } : { ok: false, error: 'invalid_arguments' });
      case 'conversations.open':
        return json(res, 200, body.users ? { ok: true, channel: { id: `D${String(body.users).replace(/\W/g, '')}` } } : { ok: false, error: 'user_not_found' });
      default:
        return json(res, 200, { ok: false, error: 'unknown_method' });
    }
  });
  return {
    url: srv.url,
    calls,
    tokens,
    sent: (method) => calls.filter((c) => c.method === method).map((c) => c.body),
    async send(url, secret, body, contentType = 'application/json', opts = {}) {
      const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000);
      return post(url, body, {
        'content-type': contentType,
        'x-slack-request-timestamp': String(timestamp),
        'x-slack-signature': opts.signature ?? slackSignature(secret, timestamp, body),
      });
    },
    close: srv.close,
  };
}
