// What a platform's call to `POST|GET /v1/channels/inbound/{app_id}` does once the REST edge has
// read its exact bytes (a signed route: rest/routes/channels.ts, rest/signed-route.ts): find the
// app, verify the platform's own signature scheme (no bearer token, no per-token rate limit),
// parse, apply the notices, record the messages, and say what to answer the platform. A bad or
// missing signature is 401 invalid_token and records nothing.
import { AppError } from '../errors.js';
import { inboundApp } from './apps.js';
import { applyNotice } from './connections.js';
import { adapterFor } from './platforms/index.js';
import { recordInbound } from './inbound.js';
import type { InboundRequest } from './platforms/types.js';

export const INBOUND_BODY_LIMIT = 1024 * 1024;

/** The answer the platform expects: a string body is text (a challenge), anything else JSON. */
export interface InboundAnswer {
  status: number;
  body: string | Record<string, unknown>;
}

export async function receivePlatformInbound(appId: string, request: InboundRequest): Promise<InboundAnswer> {
  const found = /^chapp_[0-9a-z]{26}$/.test(appId) ? await inboundApp(appId) : null;
  const adapter = found ? adapterFor(found.row.platform) : null;
  if (!found || !adapter) throw new AppError('not_found', 'channel app not found');
  const { row: app, record } = found;
  if (!adapter.verify(record, request)) throw new AppError('invalid_token', `the request does not carry a valid ${app.platform} signature`);
  let result;
  try {
    result = adapter.parse(record, request);
  } catch {
    throw new AppError('invalid_request', `the ${app.platform} payload could not be read`);
  }
  for (const notice of result.notices) await applyNotice(app, notice);
  await recordInbound(app.universeId, { appId: app.id }, result.messages);
  return { status: result.status, body: result.body ?? {} };
}
