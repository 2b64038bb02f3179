// Channel connections: one surface (a chat, a workspace, a phone number, a loopback surface)
// reached through an app. PENDING with a connect link until an end user claims it, CONNECTED
// (channel_id set), DISCONNECTED when the platform reports it. Claiming emits channel.connected.
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { logger } from '../logger.js';
import { urlShapeRefusal } from '../net/outbound-guard.js';
import type { Viewer } from '../auth/viewer.js';
import type { ChannelApp, ChannelBinding, ChannelConnection } from '../generated/prisma/client.js';
import { channelId, connectCode, connectToken } from './ids.js';
import { appRecord, markNeedsReauth } from './apps.js';
import { adapterFor, outboundFor } from './platforms/index.js';
import { connectPageUrl } from './public-url.js';
import { CONNECTION_SLOT, putSlot, resolveDestination } from './bindings.js';
import { emitChannelEvent } from './events.js';
import type { SurfaceNotice } from './platforms/types.js';
import type { AppPlatform, ChannelConnectionJson, ConnectionPlatform, ConnectionStatus, CreateConnectionBody, Capabilities } from './contract.js';

export const CONNECT_TTL_MS = 24 * 60 * 60 * 1000;

export type ConnectionRow = ChannelConnection & {
  app: ChannelApp | null;
  bindings: (ChannelBinding & { session: { id: string; title: string | null } | null })[];
};

export const connectionInclude = {
  app: true,
  bindings: { where: { threadKey: CONNECTION_SLOT }, include: { session: { select: { id: true, title: true } } } },
} as const;

/** How an end user claims a connection of this platform. */
export function flowOf(platform: string): 'link' | 'start' | 'code' {
  return platform === 'loopback' ? 'link' : (adapterFor(platform)?.connectFlow ?? 'link');
}

export function connectionJson(row: ConnectionRow): ChannelConnectionJson {
  const slot = row.bindings.find((b) => b.threadKey === CONNECTION_SLOT);
  const json: ChannelConnectionJson = {
    id: row.id,
    platform: row.platform as ConnectionPlatform,
    channel_id: row.channelId,
    label: row.label,
    status: row.status as ConnectionStatus,
    bound_session: slot?.session ? { id: slot.session.id, label: slot.session.title ?? slot.session.id } : null,
    created_at: row.createdAt.toISOString(),
  };
  if (row.status === 'PENDING' && row.connectToken && row.connectExpiresAt) {
    const flow = flowOf(row.platform);
    const adapter = adapterFor(row.platform);
    const info =
      flow === 'link' || !row.app || !adapter?.connectInfo
        ? { url: connectPageUrl(row.connectToken) }
        : adapter.connectInfo(appRecord(row.app), row.connectToken, row.connectCode ?? '');
    json.connect = { ...info, expires_at: row.connectExpiresAt.toISOString() };
  }
  return json;
}

async function pickApp(viewer: Viewer, platform: AppPlatform, appId: string | undefined): Promise<ChannelApp> {
  if (appId) {
    const app = await prisma.channelApp.findFirst({ where: { id: appId, universeId: viewer.universe.id } });
    if (!app) throw new AppError('not_found', 'channel app not found');
    if (app.platform !== platform) throw new AppError('invalid_request', `app: ${app.id} is a ${app.platform} app, not ${platform}`);
    return app;
  }
  const apps = await prisma.channelApp.findMany({ where: { universeId: viewer.universe.id, platform }, take: 2 });
  if (apps.length === 1) return apps[0]!;
  if (!apps.length) throw new AppError('invalid_spec', `no ${platform} app is registered in this universe: create one with POST /channels/apps first`);
  throw new AppError('invalid_request', `app: the universe has several ${platform} apps; name one`);
}

export async function createConnection(viewer: Viewer, body: CreateConnectionBody): Promise<ConnectionRow> {
  if (body.platform === 'imessage') throw new AppError('coming_soon', 'imessage channels are coming soon');
  const platform = body.platform;
  if (platform === 'loopback' && body.app) throw new AppError('invalid_request', 'app: loopback connections take no app');
  if (body.invite_user !== undefined && platform !== 'slack') throw new AppError('invalid_request', 'invite_user: Slack only');
  if (body.callback_url !== undefined) {
    if (flowOf(platform) !== 'link')
      throw new AppError(
        'invalid_request',
        `callback_url: only link-flow platforms (loopback, slack, discord) redirect after the claim; ${platform} is claimed inside the platform`,
      );
    const problem = urlShapeRefusal(body.callback_url, { httpOnlyForLocalhost: false });
    if (problem) throw new AppError('invalid_request', `callback_url: ${problem}`);
  }
  const app = platform === 'loopback' ? null : await pickApp(viewer, platform, body.app);
  const dest = body.destination ? await resolveDestination(viewer, body.destination) : null;
  const id = channelId('chconn');
  const token = connectToken();
  await prisma.channelConnection.create({
    data: {
      id,
      universeId: viewer.universe.id,
      platform,
      appId: app?.id ?? null,
      label: body.label ?? `${platform} connection`,
      metadata: (body.metadata ?? {}) as object,
      connectToken: token,
      connectCode: flowOf(platform) === 'code' ? connectCode() : null,
      connectExpiresAt: new Date(Date.now() + CONNECT_TTL_MS),
      callbackUrl: body.callback_url ?? null,
      inviteUser: body.invite_user ?? null,
    },
  });
  if (dest) await putSlot(viewer.universe.id, id, CONNECTION_SLOT, null, dest, 'default');
  if (app && body.invite_user) {
    const adapter = adapterFor(platform)!;
    try {
      await adapter.invite!(appRecord(app), body.invite_user, connectPageUrl(token), body.label ?? `${platform} connection`);
    } catch (err) {
      await prisma.channelConnection.delete({ where: { id } });
      throw new AppError('invalid_spec', `slack refused the invitation: ${(err as Error).message}`);
    }
  }
  return findConnectionById(id);
}

export function findConnectionById(id: string): Promise<ConnectionRow> {
  return prisma.channelConnection.findUniqueOrThrow({ where: { id }, include: connectionInclude });
}

export async function findConnection(viewer: Viewer, id: string): Promise<ConnectionRow> {
  const row = await prisma.channelConnection.findFirst({ where: { id, universeId: viewer.universe.id }, include: connectionInclude });
  if (!row) throw new AppError('not_found', 'channel connection not found');
  return row;
}

export function listConnections(viewer: Viewer): Promise<ConnectionRow[]> {
  return prisma.channelConnection.findMany({ where: { universeId: viewer.universe.id }, orderBy: { id: 'asc' }, include: connectionInclude });
}

export async function deleteConnection(viewer: Viewer, id: string): Promise<void> {
  const row = await findConnection(viewer, id);
  await prisma.$transaction([
    prisma.channelReply.updateMany({ where: { connectionId: row.id, status: 'pending' }, data: { status: 'failed', error: 'the connection was deleted' } }),
    prisma.loopbackMessage.deleteMany({ where: { connectionId: row.id } }),
    prisma.channelConnection.delete({ where: { id: row.id } }),
  ]);
  // A connected surface is gone for subscribers too: the same event as a platform's disconnect.
  if (row.status === 'CONNECTED') {
    await emitChannelEvent(row.universeId, {
      type: 'channel.disconnected',
      data: {
        connection_id: row.id,
        platform: row.platform,
        app_id: row.appId,
        channel_id: row.channelId,
        reason: 'the connection was deleted',
        metadata: row.metadata,
      },
    });
  }
}

export function capabilitiesOf(platform: string): Capabilities {
  return outboundFor(platform).capabilities;
}

/**
 * Claims a PENDING connection by its connect token (or code): CONNECTED, channel_id set, the
 * link spent; emits channel.connected with the connection's metadata. Null when the token is
 * unknown, spent or expired.
 */
export async function claimConnection(where: { token: string } | { appId: string; code: string }, channelIdValue: string): Promise<ConnectionRow | null> {
  const match = 'token' in where ? { connectToken: where.token } : { appId: where.appId, connectCode: where.code };
  const candidate = await prisma.channelConnection.findFirst({
    where: { ...match, status: 'PENDING', connectExpiresAt: { gt: new Date() } },
    select: { id: true },
  });
  if (!candidate) return null;
  const n = await prisma.channelConnection.updateMany({
    where: { id: candidate.id, status: 'PENDING' },
    data: { status: 'CONNECTED', channelId: channelIdValue, connectToken: null, connectCode: null, connectExpiresAt: null },
  });
  if (n.count !== 1) return null; // claimed by someone else at the same moment
  const row = await findConnectionById(candidate.id);
  await emitChannelEvent(row.universeId, {
    type: 'channel.connected',
    data: { connection_id: row.id, platform: row.platform, app_id: row.appId, channel_id: row.channelId, label: row.label, metadata: row.metadata },
  });
  return row;
}

/** A PENDING connection for a connect token (the hosted page), with its app. */
export async function pendingByToken(token: string): Promise<ConnectionRow | null> {
  const row = await prisma.channelConnection.findUnique({ where: { connectToken: token }, include: connectionInclude });
  if (!row || row.status !== 'PENDING' || !row.connectExpiresAt || row.connectExpiresAt <= new Date()) return null;
  return row;
}

/** The connection an app's inbound message belongs to (the latest claim of that surface). */
export function connectionForSurface(appId: string, surfaceId: string): Promise<ConnectionRow | null> {
  return prisma.channelConnection.findFirst({
    where: { appId, channelId: surfaceId, status: 'CONNECTED' },
    orderBy: { updatedAt: 'desc' },
    include: connectionInclude,
  });
}

/** The platform reported a surface gone (or its credentials revoked): DISCONNECTED, with an event. */
export async function applyNotice(app: ChannelApp, notice: SurfaceNotice): Promise<void> {
  const affected = await prisma.channelConnection.findMany({
    where: { appId: app.id, status: 'CONNECTED', ...(notice.surfaceId !== null ? { channelId: notice.surfaceId } : {}) },
  });
  if (notice.kind === 'needs_reauth') await markNeedsReauth(app.id);
  for (const c of affected) {
    const n = await prisma.channelConnection.updateMany({ where: { id: c.id, status: 'CONNECTED' }, data: { status: 'DISCONNECTED' } });
    if (n.count !== 1) continue;
    await emitChannelEvent(c.universeId, {
      type: notice.kind === 'needs_reauth' ? 'channel.needs_reauth' : 'channel.disconnected',
      data: { connection_id: c.id, platform: c.platform, app_id: c.appId, channel_id: c.channelId, reason: notice.reason, metadata: c.metadata },
    }).catch((err) => logger.error({ err, connectionId: c.id }, 'could not emit the disconnect event'));
  }
}
