// The one place the service reads its environment (test/unit/config-reads.test.ts keeps it so):
// the start-up settings (`loadConfig`, read once with the contract's names and defaults), the
// tunables read when used (`settings`), and the environment handed to the settings parsers that
// take one as a parameter so their tests can pass their own (`environment()`).
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
  /**
   * Where traces go (OTLP/HTTP): OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, else
   * OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`, as the OpenTelemetry SDK resolves them; unset (or
   * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none): no tracing SDK is started at all.
   */
  otelTracesEndpoint: string | undefined;
  /** METRICS_TOKEN: the bearer `GET /metrics` asks for; unset, /metrics answers 404 (docs/operations.md). */
  metricsToken: string | undefined;
}

/** The OTLP/HTTP traces URL as the SDK derives it from the standard variables (undefined: tracing off). */
export function otlpTracesEndpoint(env: NodeJS.ProcessEnv): string | undefined {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!base) return undefined;
  return `${base.replace(/\/+$/, '')}/v1/traces`;
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
    otelTracesEndpoint: otlpTracesEndpoint(env),
    metricsToken: env.METRICS_TOKEN || undefined,
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

/**
 * The whole environment, for the parsers of a group of variables that take it as a parameter
 * (their tests pass their own). Each group is documented where it is parsed:
 * - K8S_*, SANDBOX_IMAGE*, SANDBOX_DEFAULT_* / MAX_* / CPU_REQUEST_RATIO / WORKSPACE_SIZE /
 *   RUN_AS_USER / SNAPSHOT_*: src/sandbox/kubernetes/settings.ts
 * - BLOB_STORE, S3_*, AWS_REGION: src/files/configured-blob-store.ts, src/files/s3-blob-store.ts
 * - EGRESS_ALLOWED_HOSTS, EGRESS_LISTEN, EGRESS_UPSTREAM, EGRESS_MITM: src/egress/settings.ts;
 *   EGRESS_CA_CERT, EGRESS_CA_KEY: src/egress/ca.ts; EGRESS_UPSTREAM, POD_NAMESPACE:
 *   src/runtime/kubernetes-sandboxes.ts
 * - HTTP_REQUEST_TIMEOUT_MS, HTTP_HEADERS_TIMEOUT_MS: src/http/server-limits.ts
 * - INSTANCE_ID (and the pod's POD_NAME / HOSTNAME): src/runtime/instance.ts
 * - the capability vendors' key and base URL variables (EXA_API_KEY, …): the table in
 *   src/tools/capabilities/vendors.ts
 * - everything in `loadConfig` above: src/services/standalone.ts
 */
export function environment(): NodeJS.ProcessEnv {
  return process.env;
}

/** A number, the fallback when unset or empty (`Number(raw || fallback)`). */
const num = (name: string, fallback: number) => Number(process.env[name] || fallback);
/** A number, the fallback only when unset (an empty value reads as 0). */
const numUnlessUnset = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const text = (name: string): string | undefined => process.env[name];

/**
 * Tunables, read each time they are called: a module that keeps one in a constant calls it at
 * import (as it always read the variable); one that calls it per use lets tests change it.
 */
export const settings = {
  // Logging (src/logger.ts). VITEST is set by the test runner: quiet logs, never pretty.
  /** LOG_LEVEL: pino level (default info; silent under vitest). */
  logLevel: () => text('LOG_LEVEL') || (text('VITEST') ? 'silent' : 'info'),
  /** LOG_FORMAT: `json` or `pretty` (default pretty on a terminal outside vitest, else json). */
  logFormat: () => text('LOG_FORMAT') || (process.stdout.isTTY && !text('VITEST') ? 'pretty' : 'json'),
  /** OTEL_CAPTURE_CONTENT=1: spans carry message and tool content (default: never). */
  otelCaptureContent: () => text('OTEL_CAPTURE_CONTENT') === '1',
  /** OTEL_TRACE_READS=1: a span for every GET/HEAD too (default: only when the client sends a sampled traceparent). */
  otelTraceReads: () => text('OTEL_TRACE_READS') === '1',
  /** OTEL_BSP_MAX_QUEUE_SIZE: spans waiting for export at most; more are dropped and counted (default 2048, the SDK's). */
  otelMaxQueueSize: () => num('OTEL_BSP_MAX_QUEUE_SIZE', 2048),
  /** NODE_ENV=production: GraphQL does not warn about unused queries. */
  production: () => text('NODE_ENV') === 'production',

  // Database, HTTP, shutdown.
  /** DATABASE_POOL_SIZE: PostgreSQL pool connections (default 10). */
  databasePoolSize: () => num('DATABASE_POOL_SIZE', 10),
  /** STREAM_PING_MS: keep-alive comment interval of SSE streams (default 15 s). */
  streamPingMs: () => num('STREAM_PING_MS', 15_000),
  /**
   * STREAM_BUFFER_BYTES: bytes an SSE stream may have waiting in the process for a slow client
   * (beyond what the kernel's socket buffers hold) before the stream waits for it; a client that
   * takes nothing for STREAM_SLOW_CUT_MS is closed with a reconnect hint (default 1 MiB); one
   * that keeps reading is waited for. It resumes with Last-Event-ID.
   */
  streamBufferBytes: () => num('STREAM_BUFFER_BYTES', 1 << 20),
  /** STREAM_SLOW_CUT_MS: how long a full stream waits for a client that takes nothing before it is closed, and a closed one before its connection is cut (default 5 s). */
  streamSlowCutMs: () => num('STREAM_SLOW_CUT_MS', 5000),
  /** SHUTDOWN_DRAIN_MS: how long a stopping process lets running work finish (default 5 s). */
  shutdownDrainMs: () => numUnlessUnset('SHUTDOWN_DRAIN_MS', 5000),
  /** BLOB_STORE: `local` (default) or `s3`; read here for the shared-state warnings at start. */
  blobStore: () => text('BLOB_STORE'),

  // Auth.
  /** TOKEN_LAST_USED_INTERVAL_MS: how often a token's lastUsedAt is written (default 60 s). */
  tokenLastUsedIntervalMs: () => numUnlessUnset('TOKEN_LAST_USED_INTERVAL_MS', 60_000),
  /** AUTH_CACHE_TTL_MS: how long a resolved token is cached (default 5 s). */
  authCacheTtlMs: () => numUnlessUnset('AUTH_CACHE_TTL_MS', 5_000),

  // Turns and their recovery.
  /**
   * TURN_CONCURRENCY: sessions one process runs turns for at once (default 256); a run beyond
   * it waits for a slot in arrival order (src/runtime/turn-slots.ts), and it is the BullMQ
   * worker's concurrency. Turns mostly wait on the model: the cap bounds memory and sandboxes.
   */
  turnConcurrency: () => Math.max(1, num('TURN_CONCURRENCY', 256)),
  /** MODEL_MAX_ATTEMPTS: tries of one model call (default 3). */
  modelMaxAttempts: () => num('MODEL_MAX_ATTEMPTS', 3),
  /** MODEL_RETRY_BASE_MS: first retry delay of a model call, doubled per try (default 500). */
  modelRetryBaseMs: () => num('MODEL_RETRY_BASE_MS', 500),
  /** PROMPT_CACHING: `off` sends no cache breakpoints / cache key (default on; docs/engines.md "Prompt caching"). */
  promptCaching: () => text('PROMPT_CACHING') !== 'off',
  /** COMPACT_AT_SHARE: share of the model's context window a hermes call may fill before older turns are summarised (default 0.8). */
  compactAtShare: () => {
    const v = Number(text('COMPACT_AT_SHARE'));
    return Number.isFinite(v) && v > 0 && v <= 1 ? v : 0.8;
  },
  /** CONTEXT_WINDOW_CAP: caps every model's context window (tokens) for compaction; unset: the catalog's windows. */
  contextWindowCap: () => {
    const v = Number(text('CONTEXT_WINDOW_CAP'));
    return Number.isInteger(v) && v > 0 ? v : null;
  },
  /** COMPACT_KEEP_TURNS: recent turns compaction keeps verbatim (default 2). */
  compactKeepTurns: () => num('COMPACT_KEEP_TURNS', 2),
  /** RUNNER_STALE_MS: a running session not heard from for this long is recovered (default 30 s). */
  runnerStaleMs: () => num('RUNNER_STALE_MS', 30_000),
  /** THREADS_PER_SESSION: multiagent, how many of a session's threads run turns at once (default 4; more wait their turn). */
  threadsPerSession: () => num('THREADS_PER_SESSION', 4),
  /** RECOVERY_INTERVAL_MS: how often stale sessions are looked for (default 15 s). */
  recoveryIntervalMs: () => num('RECOVERY_INTERVAL_MS', 15_000),

  // Routines.
  /** ROUTINE_SCHEDULER=inprocess: schedule routines in this process even with Redis. */
  routineScheduler: () => text('ROUTINE_SCHEDULER'),
  /** MISSED_FIRE_WINDOW_MS: a missed fire older than this is skipped (default 1 h). */
  missedFireWindowMs: () => num('MISSED_FIRE_WINDOW_MS', 60 * 60 * 1000),
  /** SCHEDULER_TICK_MS: the in-process scheduler's tick (default 1 s). */
  schedulerTickMs: () => num('SCHEDULER_TICK_MS', 1000),

  // Webhooks.
  /** WEBHOOK_RETRY_OFFSETS_MS: comma-separated delays of the delivery attempts (default 0,5000,30000). */
  webhookRetryOffsetsMs: () => (text('WEBHOOK_RETRY_OFFSETS_MS') || '0,5000,30000').split(',').map(Number),
  /** WEBHOOK_DISABLE_AFTER: consecutive failures that disable a webhook (default 20). */
  webhookDisableAfter: () => num('WEBHOOK_DISABLE_AFTER', 20),
  /** WEBHOOK_TIMEOUT_MS: one delivery's timeout (default 10 s). */
  webhookTimeoutMs: () => num('WEBHOOK_TIMEOUT_MS', 10_000),

  // Channels.
  /** CHANNEL_MARKER_MAX_MS: longest a typing/progress marker is kept up (default 10 min). */
  channelMarkerMaxMs: () => num('CHANNEL_MARKER_MAX_MS', 10 * 60_000),
  /** CHANNEL_INBOUND_SWEEP_MS: how often (and after how long) inbound messages left `received` are handled again (default 3 s). */
  channelInboundSweepMs: () => num('CHANNEL_INBOUND_SWEEP_MS', 3_000),
  /** CHANNEL_PLATFORM_TIMEOUT_MS: one platform API call's timeout (default 15 s). */
  channelPlatformTimeoutMs: () => num('CHANNEL_PLATFORM_TIMEOUT_MS', 15_000),
  /** CHANNEL_REPLY_WAIT_MS: longest a reply waits for its turn to end (default 1 h). */
  channelReplyWaitMs: () => num('CHANNEL_REPLY_WAIT_MS', 60 * 60_000),
  /** CHANNEL_POSTING_LEASE_MS: lease of the process posting a reply (default 2 min). */
  channelPostingLeaseMs: () => num('CHANNEL_POSTING_LEASE_MS', 2 * 60_000),
  /** CHANNEL_APP_CACHE_MS: how long a channel app's settings are cached (default 5 s). */
  channelAppCacheMs: () => numUnlessUnset('CHANNEL_APP_CACHE_MS', 5_000),

  // Sandboxes and the network.
  /** SANDBOX_ISOLATION: force the local driver's isolation kind (default: the best available). */
  sandboxIsolation: () => text('SANDBOX_ISOLATION'),
  /** SANDBOX_FORWARDER=node: forward sandbox ports in node even when socat is present. */
  sandboxForwarder: () => text('SANDBOX_FORWARDER'),
  /** SANDBOX_CGROUPS=0: no per-sandbox cgroups. */
  sandboxCgroupsOff: () => text('SANDBOX_CGROUPS') === '0',
  /** SANDBOX_CGROUP_PARENT: the cgroup the sandboxes' cgroups are made in (default the process's own). */
  sandboxCgroupParent: () => text('SANDBOX_CGROUP_PARENT'),
  /** OUTBOUND_ALLOW: internal addresses outbound requests may reach anyway (default none). */
  outboundAllow: () => text('OUTBOUND_ALLOW') ?? '',
  /** EGRESS_UPSTREAM_CA_FILE: extra CA the egress proxy trusts upstream (default none). */
  egressUpstreamCaFile: () => text('EGRESS_UPSTREAM_CA_FILE'),

  // CLI engines (src/engines/cli).
  /** ENGINE_CACHE_DIR: where engine CLIs are installed (default <tmpdir>/agent-service-engines). */
  engineCacheDir: () => text('ENGINE_CACHE_DIR'),
  /** ENGINE_SERVER_IDLE_MS: an idle engine server stops after this (non-numbers and 0: the default). */
  engineServerIdleMs: (fallback: number) => Number(text('ENGINE_SERVER_IDLE_MS')) || fallback,
  /** ENGINE_SERVER_ANSWER_MS: longest wait for an engine server's answer (non-numbers and 0: the default). */
  engineServerAnswerMs: (fallback: number) => Number(text('ENGINE_SERVER_ANSWER_MS')) || fallback,

  // Tools: MCP servers (docs/tools.md) and capabilities.
  /** MCP_CONNECT_TIMEOUT_MS: connect and list of a tool server (default 15 s). */
  mcpConnectTimeoutMs: () => num('MCP_CONNECT_TIMEOUT_MS', 15_000),
  /** MCP_CALL_TIMEOUT_MS: one tool call (default 120 s). */
  mcpCallTimeoutMs: () => num('MCP_CALL_TIMEOUT_MS', 120_000),
  /** MCP_MAX_RESPONSE_BYTES: bytes of one answer (default 16 MiB). */
  mcpMaxResponseBytes: () => num('MCP_MAX_RESPONSE_BYTES', 16 * 1024 * 1024),
  /** MCP_MAX_RESULT_CHARS: text of a result kept for the model (default 100 000). */
  mcpMaxResultChars: () => num('MCP_MAX_RESULT_CHARS', 100_000),
  /** MCP_IDLE_CLOSE_MS: an unused tool server connection is closed after this (default 5 min). */
  mcpIdleCloseMs: () => num('MCP_IDLE_CLOSE_MS', 300_000),
  /** CAPABILITY_POLL_MS: poll interval of a capability's long task (default 5 s). */
  capabilityPollMs: () => num('CAPABILITY_POLL_MS', 5000),
  /** CAPABILITY_TASK_TIMEOUT_MS: longest a capability's long task may run (default 10 min). */
  capabilityTaskTimeoutMs: () => num('CAPABILITY_TASK_TIMEOUT_MS', 600_000),
  /** REMBG_API_KEY: the background-removal service's key (optional). */
  rembgApiKey: () => text('REMBG_API_KEY'),
  /** GPTIMAGE_MODEL: the image model (default gpt-image-1). */
  gptImageModel: () => text('GPTIMAGE_MODEL') || 'gpt-image-1',
  /** MINIMAX_VIDEO_MODEL: the MiniMax video model (default MiniMax-Hailuo-02). */
  minimaxVideoModel: () => text('MINIMAX_VIDEO_MODEL') || 'MiniMax-Hailuo-02',
  /** SEEDANCE_MODEL: the Seedance video model (default seedance-1-0-pro-250528). */
  seedanceModel: () => text('SEEDANCE_MODEL') || 'seedance-1-0-pro-250528',
};
