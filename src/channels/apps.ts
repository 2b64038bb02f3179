// Channel apps (BYO platform credentials): create registers with the platform (a refusal fails
// the request), PATCH replaces the whole credential bag and registers again, credentials are
// sealed and never returned (only their names), `setup` lists what the platform cannot automate.
import { settings } from '../config.js';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { secretText } from '../ids.js';
import { logger } from '../logger.js';
import { open, seal } from '../crypto/secret-box.js';
import type { Viewer } from '../auth/viewer.js';
import type { ChannelApp } from '../generated/prisma/client.js';
import { channelId } from './ids.js';
import { adapterFor } from './platforms/index.js';
import { PlatformError, type AppRecord, type PlatformAdapter } from './platforms/types.js';
import { inboundUrl } from './public-url.js';
import { REQUIRED_CREDENTIALS, type AppPlatform, type ChannelAppJson, type CreateAppBody, type PatchAppBody } from './contract.js';

interface Registration {
  info: Record<string, string>;
  setup: Record<string, string>;
}

const registrationOf = (row: ChannelApp): Registration => {
  const stored = (row.platformInfo ?? {}) as Partial<Registration>;
  return { info: stored.info ?? {}, setup: stored.setup ?? {} };
};

export function appJson(row: ChannelApp): ChannelAppJson {
  return {
    id: row.id,
    platform: row.platform as AppPlatform,
    label: row.label,
    status: row.status,
    credential_keys: row.credentialKeys,
    created_at: row.createdAt.toISOString(),
    setup: registrationOf(row).setup,
  };
}

export function appRecord(row: ChannelApp): AppRecord {
  return {
    id: row.id,
    universeId: row.universeId,
    platform: row.platform as AppPlatform,
    credentials: JSON.parse(open(row.credentials)) as Record<string, string>,
    inboundSecret: open(row.inboundSecret),
    info: registrationOf(row).info,
  };
}

function liveAdapter(platform: AppPlatform): PlatformAdapter {
  const adapter = adapterFor(platform);
  if (!adapter) throw new AppError('coming_soon', `${platform} channel apps are coming soon`);
  return adapter;
}

function checkCredentials(platform: AppPlatform, credentials: Record<string, string>): void {
  const missing = REQUIRED_CREDENTIALS[platform].filter((k) => !credentials[k]);
  if (missing.length) throw new AppError('invalid_request', `credentials: ${platform} needs ${missing.map((k) => `\`${k}\``).join(', ')}`);
}

async function register(adapter: PlatformAdapter, appId: string, credentials: Record<string, string>, inboundSecret: string): Promise<Registration> {
  try {
    return await adapter.register(credentials, { inboundUrl: inboundUrl(appId), inboundSecret });
  } catch (err) {
    if (err instanceof PlatformError) throw new AppError('invalid_spec', `${adapter.platform} refused the registration: ${err.message}`);
    throw err;
  }
}

export async function createApp(viewer: Viewer, body: CreateAppBody): Promise<ChannelApp> {
  // imessage is in the spec's enumeration but not served yet: 501 before anything else.
  const adapter = liveAdapter(body.platform);
  checkCredentials(body.platform, body.credentials);
  const id = channelId('chapp');
  const inboundSecret = secretText(24);
  const registration = await register(adapter, id, body.credentials, inboundSecret);
  return prisma.channelApp.create({
    data: {
      id,
      universeId: viewer.universe.id,
      platform: body.platform,
      label: body.label,
      credentials: seal(JSON.stringify(body.credentials)),
      credentialKeys: Object.keys(body.credentials).sort(),
      inboundSecret: seal(inboundSecret),
      platformInfo: { info: registration.info, setup: registration.setup },
    },
  });
}

export async function findApp(viewer: Viewer, id: string): Promise<ChannelApp> {
  const app = await prisma.channelApp.findFirst({ where: { id, universeId: viewer.universe.id } });
  if (!app) throw new AppError('not_found', 'channel app not found');
  return app;
}

export function listApps(viewer: Viewer): Promise<ChannelApp[]> {
  return prisma.channelApp.findMany({ where: { universeId: viewer.universe.id }, orderBy: { id: 'asc' } });
}

export async function patchApp(viewer: Viewer, id: string, body: PatchAppBody): Promise<ChannelApp> {
  const app = await findApp(viewer, id);
  const platform = app.platform as AppPlatform;
  let rotated: Record<string, unknown> = {};
  if (body.credentials) {
    checkCredentials(platform, body.credentials);
    // The inbound secret stays: it may be pasted in the platform's dashboard (verify_token).
    const registration = await register(liveAdapter(platform), app.id, body.credentials, open(app.inboundSecret));
    rotated = {
      credentials: seal(JSON.stringify(body.credentials)),
      credentialKeys: Object.keys(body.credentials).sort(),
      platformInfo: { info: registration.info, setup: registration.setup },
      status: 'active',
    };
  }
  appCache.delete(app.id);
  return prisma.channelApp.update({ where: { id: app.id }, data: { ...(body.label !== undefined ? { label: body.label } : {}), ...rotated } });
}

export async function deleteApp(viewer: Viewer, id: string): Promise<void> {
  const app = await findApp(viewer, id);
  const connections = await prisma.channelConnection.count({ where: { appId: app.id } });
  if (connections) throw new AppError('conflict', `the app has ${connections} connection(s); delete them first`);
  await prisma.channelApp.delete({ where: { id: app.id } });
  appCache.delete(app.id);
  const unregister = adapterFor(app.platform)?.unregister;
  if (unregister)
    await unregister(appRecord(app)).catch((err) => logger.warn({ err: (err as Error).message, appId: app.id }, 'platform unregistration failed'));
}

// Platform calls look their app up on every request: remembered briefly (a rotation or delete
// here clears it at once; other processes see it within the TTL).
const APP_CACHE_MS = settings.channelAppCacheMs();
const appCache = new Map<string, { row: ChannelApp; record: AppRecord; until: number }>();

export async function inboundApp(id: string): Promise<{ row: ChannelApp; record: AppRecord } | null> {
  const hit = appCache.get(id);
  if (hit && hit.until > Date.now()) return hit;
  const row = await prisma.channelApp.findUnique({ where: { id } });
  if (!row) return null;
  const entry = { row, record: appRecord(row), until: Date.now() + APP_CACHE_MS };
  if (APP_CACHE_MS > 0) {
    if (appCache.size > 1000) appCache.clear();
    appCache.set(id, entry);
  }
  return entry;
}

/** The platform refused the app's credentials while in use: it needs new ones. */
export async function markNeedsReauth(appId: string): Promise<void> {
  await prisma.channelApp.updateMany({ where: { id: appId, status: 'active' }, data: { status: 'needs_reauth' } });
}
