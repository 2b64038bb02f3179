// The model gateway as an HTTP endpoint for sandboxed CLIs: the providers' own APIs
// (Anthropic Messages, OpenAI Chat Completions and Responses) under `/gateway/`, authenticated by
// the session's short-lived credential (AGENT_SERVICE_TOKEN, sent as the API key), never a
// provider key. Each request is metered like hermes' calls (openMeter: platform key or
// subscription, wallet hold, budget stopped mid-stream, usage recorded) and its body and answer
// pass through in the provider's wire format, so every CLI feature (tools, thinking, reasoning)
// works without the gateway knowing it.
//
// Mounted at `/gateway` on the service (src/http/app.ts) and on the sandbox's egress endpoint
// (src/egress/gateway-route.ts). The credential works only while a turn of its session runs.
import type http from 'node:http';
import { prisma } from '../db/client.js';
import { logger } from '../logger.js';
import { sseBatches } from './sse.js';
import { redact } from './http-errors.js';
import { openMeter, type Meter } from './metering.js';
import { verifySessionCredential } from './session-credentials.js';
import { BudgetReachedError, ProviderError, type Provider, type Usage } from './types.js';
import { wireUsage, type WireApi } from './wire-usage.js';
import { handleMcpRelay } from '../tools/mcp/relay.js';
import { inSessionTurn } from '../telemetry/tracing.js';

/** The MCP relay's path under /gateway. */
export const MCP_RELAY_PATH = '/mcp';

/** Request bodies up to this size (a long conversation with images); more is a 413. */
export const GATEWAY_BODY_LIMIT = 32 * 1024 * 1024;
const DEFAULT_MAX_TOKENS = 8192;
const ANTHROPIC_VERSION = '2023-06-01';

interface Route {
  api: WireApi;
  provider: Provider;
  /** The provider URL, from the credential's base URL (Anthropic without /v1, OpenAI with it). */
  upstream(baseUrl: string): string;
}

const ROUTES: Readonly<Record<string, Route>> = {
  '/anthropic/v1/messages': { api: 'anthropic_messages', provider: 'anthropic', upstream: (b) => `${b}/v1/messages` },
  '/openai/v1/chat/completions': { api: 'openai_chat', provider: 'openai', upstream: (b) => `${b}/chat/completions` },
  '/openai/v1/responses': { api: 'openai_responses', provider: 'openai', upstream: (b) => `${b}/responses` },
};

/** Request headers that describe the call (not the caller) and go on to the provider. */
const FORWARDED_HEADERS = ['anthropic-version', 'anthropic-beta', 'openai-beta', 'accept'];

/**
 * An error in the spec's envelope `{error: {code, message}}`, with the provider's own `type`
 * fields beside it so the CLIs' SDKs read it as a provider error.
 */
function sendError(res: http.ServerResponse, status: number, code: string, message: string, type = code): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ type: 'error', error: { code, type, message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

function credentialOf(req: http.IncomingMessage): string | null {
  const key = req.headers['x-api-key'];
  if (typeof key === 'string' && key) return key.trim();
  const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
  return bearer ? bearer[1]!.trim() : null;
}

class BodyTooLarge extends Error {}

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > GATEWAY_BODY_LIMIT) throw new BodyTooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > GATEWAY_BODY_LIMIT) throw new BodyTooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The session a request's credential belongs to, if it is valid and a turn of it is running. */
async function authenticate(
  req: http.IncomingMessage,
  transportSession: string | null,
): Promise<{ sessionId: string; universeId: string; turn: number } | string> {
  const token = credentialOf(req);
  if (!token) return 'no credential: send the session credential (AGENT_SERVICE_TOKEN) as the API key';
  const sessionId = await verifySessionCredential(token);
  // A credential only works on its own session's connection (a leaked one cannot cross sessions).
  if (!sessionId || (transportSession && transportSession !== sessionId)) return 'the session credential is unknown, expired or revoked';
  const session = await prisma.session.findUnique({ where: { id: sessionId }, select: { status: true, universeId: true, turnCount: true } });
  if (!session || session.status !== 'running') return 'the session credential is revoked: no turn of its session is running';
  return { sessionId, universeId: session.universeId, turn: session.turnCount };
}

/** Largest answer the request asks for, under each API's name for it (the wallet holds its worst case). */
function maxTokensOf(body: Record<string, unknown>): number {
  for (const k of ['max_tokens', 'max_completion_tokens', 'max_output_tokens']) {
    const v = body[k];
    if (typeof v === 'number' && Number.isInteger(v) && v > 0) return v;
  }
  return DEFAULT_MAX_TOKENS;
}

/** The body sent upstream: unchanged, except that a streamed chat completion must report its usage. */
function upstreamBody(route: Route, raw: Buffer, body: Record<string, unknown>): Uint8Array<ArrayBuffer> | string {
  const bytes = new Uint8Array(raw); // a copy on a plain ArrayBuffer (what fetch takes)
  if (route.api !== 'openai_chat' || body.stream !== true) return bytes;
  const opts = (body.stream_options && typeof body.stream_options === 'object' ? body.stream_options : {}) as Record<string, unknown>;
  if (opts.include_usage === true) return bytes;
  return JSON.stringify({ ...body, stream_options: { ...opts, include_usage: true } });
}

/** The budget stop as the API's own in-stream error, so the CLI ends its turn. */
function budgetStopRecord(api: WireApi): string {
  const message = "the session's budget is reached: the model call was stopped";
  if (api === 'anthropic_messages')
    return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'budget_reached', code: 'budget_reached', message } })}\n\n`;
  if (api === 'openai_chat') return `data: ${JSON.stringify({ error: { type: 'budget_reached', code: 'budget_reached', message, param: null } })}\n\n`;
  return `event: error\ndata: ${JSON.stringify({ type: 'error', code: 'budget_reached', message, param: null })}\n\n`;
}

export async function handleGatewayRequest(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  ctx: { sessionId: string | null; path: string },
): Promise<void> {
  const path = ctx.path.split('?')[0]!.replace(/\/+$/, '');
  if (path === MCP_RELAY_PATH) {
    // The session's service-side tools for CLI engines (src/tools/mcp/relay.ts), same credential rule.
    const who = await authenticate(req, ctx.sessionId);
    if (typeof who === 'string') return sendError(res, 401, 'unauthorized', who, 'authentication_error');
    return handleMcpRelay(req, res, who);
  }
  const route = ROUTES[path];
  if (!route)
    return sendError(
      res,
      404,
      'not_found',
      `the model gateway serves ${[...Object.keys(ROUTES), MCP_RELAY_PATH].map((p) => `/gateway${p}`).join(', ')}; not ${path}`,
    );
  if (req.method !== 'POST') return sendError(res, 405, 'method_not_allowed', `use POST for /gateway${path}`);

  const who = await authenticate(req, ctx.sessionId);
  if (typeof who === 'string') return sendError(res, 401, 'unauthorized', who, 'authentication_error');

  let raw: Buffer;
  try {
    raw = await readBody(req);
  } catch (err) {
    if (err instanceof BodyTooLarge)
      return sendError(res, 413, 'payload_too_large', `request bodies are limited to ${GATEWAY_BODY_LIMIT} bytes`, 'request_too_large');
    throw err;
  }
  let body: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(raw.toString('utf8'));
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    body = parsed as Record<string, unknown>;
  } catch {
    return sendError(res, 400, 'invalid_request', 'the body must be a JSON object', 'invalid_request_error');
  }
  if (typeof body.model !== 'string' || !body.model) return sendError(res, 400, 'invalid_request', 'model: a model name is required', 'invalid_request_error');

  // The model call's span joins the session's running turn's trace (the CLIs send no traceparent).
  const model = body.model;
  await inSessionTurn(who.sessionId, () => meterAndForward(req, res, route, who, raw, { ...body, model }));
}

async function meterAndForward(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  route: Route,
  who: { sessionId: string; universeId: string; turn: number },
  raw: Buffer,
  body: Record<string, unknown> & { model: string },
): Promise<void> {
  let meter: Meter;
  try {
    meter = await openMeter(
      { sessionId: who.sessionId, universeId: who.universeId, turn: who.turn },
      {
        provider: route.provider,
        model: body.model,
        estimatedInputTokens: Math.ceil(raw.length / 4),
        maxTokens: maxTokensOf(body),
      },
    );
  } catch (err) {
    if (err instanceof BudgetReachedError) return sendError(res, 402, 'budget_reached', "the session's budget is reached: no more model calls in this session");
    if (err instanceof ProviderError) return sendError(res, err.code === 'insufficient_credits' ? 402 : 503, err.code, err.message);
    throw err;
  }
  await forward(req, res, route, meter, upstreamBody(route, raw, body));
}

async function forward(req: http.IncomingMessage, res: http.ServerResponse, route: Route, meter: Meter, body: Uint8Array<ArrayBuffer> | string): Promise<void> {
  const upstream = new AbortController();
  const onClose = () => upstream.abort();
  res.on('close', onClose); // the CLI went away (interrupt, killed): stop the provider call too
  const tracker = wireUsage(route.api);
  const key = meter.cred.apiKey;
  let usage: Usage | null = null;
  try {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    for (const h of FORWARDED_HEADERS) {
      const v = req.headers[h];
      if (typeof v === 'string') headers[h] = v;
    }
    if (route.provider === 'anthropic') {
      headers['x-api-key'] = key;
      headers['anthropic-version'] ??= ANTHROPIC_VERSION;
    } else headers.authorization = `Bearer ${key}`;

    let answer: Response;
    try {
      answer = await fetch(route.upstream(meter.cred.baseUrl.replace(/\/+$/, '')), { method: 'POST', headers, body, signal: upstream.signal });
    } catch (err) {
      meter.failed('error', err);
      if (!upstream.signal.aborted)
        sendError(res, 502, 'provider_unavailable', `${route.provider} could not be reached: ${(err as Error).message}`, 'api_error');
      return;
    }

    if (!answer.ok || !answer.body) {
      meter.failed('error', new Error(`${route.provider} answered ${answer.status}`));
      const text = redact(await answer.text().catch(() => ''), key);
      if (answer.status === 401 || answer.status === 403) {
        // The service's own credential was refused: not the CLI's fault, and not its key to fix.
        const err = await meter.refused(
          new ProviderError(`${route.provider} refused the gateway's credential`, { status: answer.status, retryable: false, code: 'provider_auth' }),
        );
        logger.warn({ status: answer.status, provider: route.provider, detail: text.slice(0, 300) }, 'provider refused the gateway credential');
        return sendError(res, 502, err.code, err.message, 'api_error');
      }
      // The provider's own error (400 with its reason, 429, 5xx) goes back as it said it.
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json', ...retryHeaders(answer) }).end(text);
      return;
    }

    const type = answer.headers.get('content-type') ?? '';
    if (!type.includes('text/event-stream')) {
      const text = await answer.text();
      try {
        tracker.json(JSON.parse(text));
      } catch {
        /* not JSON: nothing to meter from it */
      }
      usage = tracker.usage;
      res.writeHead(answer.status, { 'content-type': type || 'application/json' }).end(text);
      return;
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    try {
      read: for await (const batch of sseBatches(answer.body as unknown as AsyncIterable<Uint8Array>))
        for (const rec of batch) {
          tracker.record(rec.data);
          if (meter.overBudget(tracker.usage, tracker.streamedChars)) {
            usage = meter.cutUsage(tracker.usage, tracker.streamedChars);
            meter.failed('budget');
            res.write(budgetStopRecord(route.api));
            upstream.abort();
            break read;
          }
          res.write(`${rec.event !== null ? `event: ${rec.event}\n` : ''}data: ${rec.data.split('\n').join('\ndata: ')}\n\n`);
        }
    } catch (err) {
      if (!upstream.signal.aborted) logger.warn({ err, provider: route.provider }, 'provider stream broke off in the gateway');
    }
    usage ??= tracker.usage;
    res.end();
  } finally {
    res.off('close', onClose);
    await meter.record(usage ?? tracker.usage);
  }
}

function retryHeaders(answer: Response): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of ['retry-after', 'retry-after-ms']) {
    const v = answer.headers.get(h);
    if (v) out[h] = v;
  }
  return out;
}

/** Express-style mount: `app.use('/gateway', gatewayMiddleware)` (the path after the mount point). */
export function gatewayMiddleware(req: http.IncomingMessage, res: http.ServerResponse): void {
  handleGatewayRequest(req, res, { sessionId: null, path: req.url ?? '/' }).catch((err: unknown) => {
    logger.error({ err }, 'model gateway request failed');
    sendError(res, 500, 'internal_error', 'the model gateway failed');
  });
}
