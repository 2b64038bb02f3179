// The platform registry: one adapter per platform, all behind the same interface.
import type { AppPlatform, LivePlatform } from '../contract.js';
import type { Outbound, PlatformAdapter } from './types.js';
import { telegram } from './telegram.js';
import { slack } from './slack.js';
import { discord } from './discord.js';
import { whatsapp } from './whatsapp.js';
import { loopback } from './loopback.js';

const adapters: Record<Exclude<AppPlatform, 'imessage'>, PlatformAdapter> = { telegram, slack, discord, whatsapp };

/** The adapter of an app platform (imessage has none yet: coming soon). */
export function adapterFor(platform: string): PlatformAdapter | null {
  return (adapters as Record<string, PlatformAdapter>)[platform] ?? null;
}

/** Where posts to a connection of this platform go. */
export function outboundFor(platform: LivePlatform | string): Outbound {
  if (platform === 'loopback') return loopback;
  const adapter = adapterFor(platform);
  if (!adapter) throw new Error(`no adapter for platform ${platform}`);
  return adapter;
}
