// The hosted connect page `GET /v1/connect/{token}` (HTML, no external assets, so it works
// offline) and its claim `POST /v1/connect/{token}`: CONNECTED, channel.connected, then a 303 to
// `callback_url` with connection_id, status and metadata (JSON) when one was given. Telegram and
// WhatsApp connections are claimed inside the platform: their page shows how.
import type { Request, Response } from 'express';
import { sendError } from '../wire/error-envelope.js';
import { appRecord } from './apps.js';
import { claimConnection, connectionJson, flowOf, pendingByToken, type ConnectionRow } from './connections.js';
import { adapterFor } from './platforms/index.js';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>
body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#1d1d1f}
.card{border:1px solid #ddd;border-radius:12px;padding:1.5rem}button{font-size:1rem;padding:.6rem 1.4rem;border-radius:8px;border:0;background:#2456d3;color:#fff;cursor:pointer}
code{background:#f2f2f2;padding:.1rem .3rem;border-radius:4px}.muted{color:#666;font-size:.9rem}
</style></head><body><div class="card">${body}</div></body></html>`;
}

const wantsHtml = (req: Request) => req.accepts(['json', 'html']) === 'html';

function notFound(req: Request, res: Response): void {
  const message = 'this connect link is unknown, already used or expired';
  if (wantsHtml(req))
    res
      .status(404)
      .type('html')
      .send(page('Link expired', `<h1>Link not valid</h1><p>${escapeHtml(message)}.</p>`));
  else sendError(res, 404, 'not_found', message);
}

function describe(conn: ConnectionRow): string {
  const label = escapeHtml(conn.label);
  const expires = escapeHtml(conn.connectExpiresAt!.toISOString());
  const flow = flowOf(conn.platform);
  if (flow === 'link') {
    return `<h1>Connect ${label}</h1><p>Connect this <strong>${escapeHtml(conn.platform)}</strong> surface so its messages reach the agent.</p>
<form method="post"><button type="submit">Connect</button></form><p class="muted">This link expires at ${expires}.</p>`;
  }
  const info = adapterFor(conn.platform)!.connectInfo!(appRecord(conn.app!), conn.connectToken!, conn.connectCode ?? '');
  const how =
    flow === 'start'
      ? `<p>Open the bot in Telegram and press <strong>Start</strong>:</p><p><a href="${escapeHtml(info.url)}">${escapeHtml(info.url)}</a></p>`
      : `<p>Send <code>${escapeHtml(info.code ?? '')}</code> on WhatsApp to <strong>${escapeHtml(info.phone ?? '')}</strong>:</p><p><a href="${escapeHtml(info.url)}">${escapeHtml(info.url)}</a></p>`;
  return `<h1>Connect ${label}</h1>${how}<p class="muted">This link expires at ${expires}.</p>`;
}

export async function showConnectPage(req: Request, res: Response): Promise<void> {
  const conn = await pendingByToken(String(req.params.token ?? ''));
  if (!conn) return notFound(req, res);
  if (!wantsHtml(req)) {
    res.json({ connection_id: conn.id, platform: conn.platform, label: conn.label, status: conn.status, connect: connectionJson(conn).connect });
    return;
  }
  res
    .set('cache-control', 'no-store')
    .type('html')
    .send(page(`Connect ${conn.label}`, describe(conn)));
}

export async function claimConnectPage(req: Request, res: Response): Promise<void> {
  const token = String(req.params.token ?? '');
  const pending = await pendingByToken(token);
  if (!pending) return notFound(req, res);
  if (flowOf(pending.platform) !== 'link') {
    return sendError(res, 400, 'invalid_request', `${pending.platform} connections are claimed inside ${pending.platform}: open the link this page shows`);
  }
  const surface =
    pending.platform === 'loopback' ? `loopback-${pending.id.slice('chconn_'.length)}` : adapterFor(pending.platform)!.linkSurface!(appRecord(pending.app!));
  const conn = await claimConnection({ token }, surface);
  if (!conn) return notFound(req, res);
  if (conn.callbackUrl) {
    const target = new URL(conn.callbackUrl);
    target.searchParams.set('connection_id', conn.id);
    target.searchParams.set('status', conn.status);
    target.searchParams.set('metadata', JSON.stringify(conn.metadata ?? {}));
    res.redirect(303, target.toString());
    return;
  }
  if (wantsHtml(req)) {
    res.type('html').send(page('Connected', `<h1>Connected</h1><p><strong>${escapeHtml(conn.label)}</strong> is connected. You can close this page.</p>`));
    return;
  }
  res.json({ connection_id: conn.id, status: conn.status, metadata: conn.metadata });
}
