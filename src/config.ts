// Start-up settings, read once from the environment with the contract's names and defaults.
import path from 'node:path';
import { service } from './services/registry.js';

function int(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number, got "${raw}"`);
  return n;
}

function openaiApiMode(raw: string | undefined): 'responses' | 'chat' | null {
  if (!raw) return null;
  if (raw === 'responses' || raw === 'chat') return raw;
  throw new Error(`OPENAI_API_MODE must be "responses" or "chat", got "${raw}"`);
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  adminEmail: string;
  adminPassword: string | undefined;
  adminToken: string | undefined;
  secretKey: string | undefined;
  rateLimitPerMinute: number;
  startingCreditsCents: number;
  sandboxDriver: string;
  anthropicApiKey: string | undefined;
  anthropicBaseUrl: string;
  openaiApiKey: string | undefined;
  openaiBaseUrl: string;
  /** OPENAI_API_MODE: the wire API for every OpenAI model (`responses` or `chat`); unset, the catalog's per-model `api`. */
  openaiApiMode: 'responses' | 'chat' | null;
  cookieSecure: boolean;
  /** Whether this process runs turns (with Redis, API-only processes can leave them to workers). */
  turnWorker: boolean;
  /** Redis key prefix of the BullMQ queues (one per deployment sharing a Redis). */
  queuePrefix: string;
  /** Messaging platform API origins (tests point them at local fakes). */
  telegramApiBaseUrl: string;
  slackApiBaseUrl: string;
  discordApiBaseUrl: string;
  whatsappApiBaseUrl: string;
  /** The origin platforms and connect links are given; default the listening address. */
  publicUrl: string | undefined;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: int('PORT', 8080),
    host: env.HOST || '127.0.0.1',
    dataDir: path.resolve(env.DATA_DIR || './.data'),
    databaseUrl: env.DATABASE_URL || undefined,
    redisUrl: env.REDIS_URL || undefined,
    adminEmail: env.ADMIN_EMAIL || 'admin@localhost',
    adminPassword: env.ADMIN_PASSWORD || undefined,
    adminToken: env.ADMIN_TOKEN || undefined,
    secretKey: env.SECRET_KEY || undefined,
    rateLimitPerMinute: int('RATE_LIMIT_PER_MINUTE', 120),
    startingCreditsCents: int('STARTING_CREDITS_CENTS', 500),
    sandboxDriver: env.SANDBOX_DRIVER || 'local',
    anthropicApiKey: env.ANTHROPIC_API_KEY || undefined,
    anthropicBaseUrl: (env.ANTHROPIC_BASE_URL || 'https://api.anthropic.com').replace(/\/+$/, ''),
    openaiApiKey: env.OPENAI_API_KEY || undefined,
    openaiBaseUrl: (env.OPENAI_BASE_URL || 'https://api.openai.com/v1').replace(/\/+$/, ''),
    openaiApiMode: openaiApiMode(env.OPENAI_API_MODE),
    cookieSecure: env.COOKIE_SECURE === '1' || env.COOKIE_SECURE === 'true',
    turnWorker: env.TURN_WORKER !== '0',
    queuePrefix: env.QUEUE_PREFIX || 'agent-service',
    telegramApiBaseUrl: (env.TELEGRAM_API_BASE_URL || 'https://api.telegram.org').replace(/\/+$/, ''),
    slackApiBaseUrl: (env.SLACK_API_BASE_URL || 'https://slack.com/api').replace(/\/+$/, ''),
    discordApiBaseUrl: (env.DISCORD_API_BASE_URL || 'https://discord.com/api/v10').replace(/\/+$/, ''),
    whatsappApiBaseUrl: (env.WHATSAPP_API_BASE_URL || 'https://graph.facebook.com/v21.0').replace(/\/+$/, ''),
    publicUrl: env.PUBLIC_URL ? env.PUBLIC_URL.replace(/\/+$/, '') : undefined,
  };
}

declare module './services/registry.js' {
  interface Services {
    /** The start-up settings (startServer's `cfg`; the environment's in a test process). */
    config: Config;
  }
}

/** The process's config: the composed one (src/composition/compose.ts). */
export function config(): Config {
  return service('config');
}
