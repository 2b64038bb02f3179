// Starts the real service on a free port for one test file: its own database (an in-memory
// PGlite, or a fresh schema on TEST_DATABASE_URL), Redis when TEST_REDIS_URL is set.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import type { Services } from '../../src/services/registry.js';
import { splitSchema } from '../../src/db/client.js';
import { ResponseValidator, registerValidator, type OpenApiDocument } from './openapi-validator.js';

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
  /** The body's bytes as received (downloads). */
  bytes: Uint8Array;
}

export interface CallOptions {
  body?: unknown;
  /** Raw body string (for malformed JSON tests). */
  raw?: string;
  /** A multipart body (uploads); fetch sets the content type with its boundary. */
  form?: FormData;
  token?: string | null;
  cookie?: string;
  headers?: Record<string, string>;
}

export interface TestServer {
  url: string;
  base: string;
  adminToken: string;
  adminEmail: string;
  adminPassword: string;
  running: RunningServer;
  api<T = any>(method: string, path: string, opts?: CallOptions): Promise<ApiResponse<T>>;
  /**
   * `fetch` for calls api() cannot make (hostile bodies, aborts, streams): a /v1 answer is
   * checked against the document like api()'s (an event stream by status and content type only).
   */
  fetch(target: string, init?: RequestInit): Promise<Response>;
  gql<T = any>(query: string, variables?: Record<string, unknown>, opts?: CallOptions): Promise<ApiResponse<{ data?: T; errors?: any[] }>>;
  login(email?: string, password?: string): Promise<string>;
  mintToken(scope: 'read' | 'write' | 'admin', opts?: { universe?: string | null; cookie?: string; name?: string }): Promise<string>;
  stop(): Promise<void>;
}

// The migrated empty database every in-memory test database starts from (test/helpers/database-image.ts).
let migratedImage: Blob | undefined;
function databaseImage(): Blob | undefined {
  const file = process.env.VITEST ? inject('pgliteImageFile') : ''; // the benches start servers outside Vitest
  if (!file) return undefined;
  migratedImage ??= new Blob([fs.readFileSync(file)]);
  return migratedImage;
}

/** `services`: parts composed instead of the real ones (e.g. a DNS resolver), see composeServices. */
export async function startTestServer(overrides: Partial<Config> = {}, opts: { services?: Partial<Services> } = {}): Promise<TestServer> {
  const suffix = randomBytes(6).toString('hex');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-service-test-'));
  const adminToken = `ast_test_${suffix}${randomBytes(12).toString('hex')}`;
  const adminPassword = 'correct horse battery staple';
  const schema = `t_${suffix}`;
  const databaseUrl = process.env.TEST_DATABASE_URL
    ? `${process.env.TEST_DATABASE_URL}${process.env.TEST_DATABASE_URL.includes('?') ? '&' : '?'}schema=${schema}`
    : undefined;
  const cfg: Config = {
    ...loadConfig({}),
    port: 0,
    host: '127.0.0.1',
    dataDir,
    databaseUrl,
    redisUrl: process.env.TEST_REDIS_URL || undefined,
    adminEmail: `owner-${suffix}@example.test`,
    adminPassword,
    adminToken,
    secretKey: randomBytes(32).toString('hex'),
    rateLimitPerMinute: 100_000,
    queuePrefix: `test-${suffix}`,
    ...overrides,
  };
  const pgliteImage = databaseUrl ? undefined : databaseImage();
  const running = await startServer(cfg, { pgliteDir: 'memory://', pgliteImage, services: opts.services });
  const url = running.url;
  const base = `${url}/v1`;

  // Every /v1 answer is checked against the document this server publishes (fetched once).
  let validator: Promise<ResponseValidator> | undefined;
  const responseValidator = () =>
    (validator ??= fetch(`${base}/openapi.json`)
      .then((r) => r.json() as Promise<OpenApiDocument>)
      .then((doc) => new ResponseValidator(doc)));
  const unregister = registerValidator(base, responseValidator);

  const resolve = (target: string) =>
    target.startsWith('http') ? target : target.startsWith('/v1') || target.startsWith('/graphql') || target.startsWith('/auth') ? url + target : base + target;

  async function checkedFetch(target: string, init: RequestInit = {}): Promise<Response> {
    const full = resolve(target);
    const res = await fetch(full, init);
    if (!full.startsWith(`${base}/`)) return res;
    const method = init.method ?? 'GET';
    const contentType = res.headers.get('content-type');
    const check = async (body: unknown, empty: boolean) =>
      (await responseValidator()).check({ method, path: full.slice(base.length), status: res.status, contentType, body, empty });
    if (contentType?.startsWith('text/event-stream')) {
      await check(null, false);
      return res;
    }
    const bytes = new Uint8Array(await res.arrayBuffer());
    const text = new TextDecoder().decode(bytes);
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    await check(parsed, bytes.length === 0);
    return new Response(bytes.length ? bytes : null, { status: res.status, statusText: res.statusText, headers: res.headers });
  }

  async function call<T>(method: string, target: string, opts: CallOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    const token = opts.token === undefined ? adminToken : opts.token;
    if (token) headers.authorization = `Bearer ${token}`;
    if (opts.cookie) headers.cookie = opts.cookie;
    let body: string | FormData | undefined;
    if (opts.form !== undefined) {
      body = opts.form;
    } else if (opts.raw !== undefined) {
      body = opts.raw;
      headers['content-type'] ??= 'application/json';
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    }
    const full = resolve(target);
    const res = await fetch(full, { method, headers, body });
    const bytes = new Uint8Array(await res.arrayBuffer());
    const text = new TextDecoder().decode(bytes);
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON: keep text */
    }
    if (full.startsWith(`${base}/`)) {
      (await responseValidator()).check({
        method,
        path: full.slice(base.length),
        status: res.status,
        contentType: res.headers.get('content-type'),
        body: parsed,
        empty: bytes.length === 0,
      });
    }
    return { status: res.status, body: parsed as T, headers: res.headers, bytes };
  }

  const server: TestServer = {
    url,
    base,
    adminToken,
    adminEmail: cfg.adminEmail,
    adminPassword,
    running,
    api: call,
    fetch: checkedFetch,
    gql: (query, variables, opts = {}) => call('POST', '/graphql', { ...opts, body: { query, variables } }),
    async login(email = cfg.adminEmail, password = adminPassword) {
      const res = await fetch(`${url}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      if (res.status !== 200) throw new Error(`login failed: ${res.status} ${await res.text()}`);
      const cookie = res.headers.get('set-cookie')!;
      return cookie.split(';')[0]!;
    },
    async mintToken(scope, opts = {}) {
      const cookie = opts.cookie ?? (await server.login());
      const res = await server.gql<{ createApiToken: { token: string } }>(
        `mutation($input: CreateApiTokenInput!) { createApiToken(input: $input) { token } }`,
        { input: { name: opts.name ?? `${scope} token`, scope, universe: opts.universe ?? null } },
        { token: null, cookie },
      );
      if (!res.body.data?.createApiToken) throw new Error(`mint failed: ${JSON.stringify(res.body)}`);
      return res.body.data.createApiToken.token;
    },
    async stop() {
      unregister();
      await running.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (databaseUrl) {
        const { url: plain } = splitSchema(databaseUrl);
        const client = new pg.Client({ connectionString: plain });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      }
    },
  };
  return server;
}
