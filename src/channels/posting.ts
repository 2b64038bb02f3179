// Posting into a thread: the session's replies, notices to end users, the threads API and
// proactive deliveries all go through `postToThread` (long texts are split to the platform's
// limit; the reply context rides the first piece). A refusal of the credentials marks the app.
import { AppError } from '../errors.js';
import { logger } from '../logger.js';
import type { Viewer } from '../auth/viewer.js';
import { appRecord } from './apps.js';
import { applyNotice, findConnection, type ConnectionRow } from './connections.js';
import { outboundFor, adapterFor } from './platforms/index.js';
import { splitText } from './platforms/http.js';
import { PlatformError, type OutboundMessage, type Surface } from './platforms/types.js';
import { closeMarker, markerTarget } from './markers.js';
import { putSlot, resolveDestination } from './bindings.js';
import { emitChannelEvent } from './events.js';
import { channelId } from './ids.js';
import type { ChannelDeliveryJson, ChannelMessagePart, DeliveryBody, PostedMessageJson, PostMessageBody } from './contract.js';

export function surfaceOf(conn: ConnectionRow): Surface {
  return { app: conn.app ? appRecord(conn.app) : null, connectionId: conn.id, channelId: conn.channelId };
}

/** Waits before the next try of a piece the platform could not take (its own retry_after first). */
const RETRY_BACKOFF_MS = [500, 2_000, 5_000];
const MAX_RETRY_AFTER_MS = 20_000;

/**
 * Posts `message` (split to the platform's limit). With `retry.attempts`, each piece that meets a
 * transient refusal (no answer, 429, 5xx) is tried again, after the platform's retry_after when
 * it says one, so a piece already posted is never sent twice; `retry.beforeRetry` runs first.
 */
export async function postToThread(
  conn: ConnectionRow,
  threadId: string,
  message: OutboundMessage,
  reply: { replyTo?: string | null; context?: Record<string, string> } = {},
  retry: { attempts: number; beforeRetry?: () => Promise<unknown> } = { attempts: 1 },
): Promise<{ messageId: string | null }> {
  const outbound = outboundFor(conn.platform);
  const surface = surfaceOf(conn);
  const pieces = message.raw ? [message.text] : splitText(message.text, outbound.maxTextLength);
  let messageId: string | null = null;
  try {
    for (const [i, text] of pieces.entries()) {
      const target = { threadId, replyTo: i === 0 ? reply.replyTo : null, context: i === 0 ? reply.context : undefined };
      for (let attempt = 1; ; attempt++) {
        try {
          ({ messageId } = await outbound.send(surface, target, { ...message, text }));
          break;
        } catch (err) {
          if (!(err instanceof PlatformError) || !err.transient || attempt >= retry.attempts) throw err;
          const wait = Math.min(err.detail.retryAfterMs ?? RETRY_BACKOFF_MS[Math.min(attempt - 1, RETRY_BACKOFF_MS.length - 1)]!, MAX_RETRY_AFTER_MS);
          logger.info({ platform: conn.platform, attempt, waitMs: wait, reason: err.message }, 'the platform could not take a post now; trying again');
          await new Promise((r) => setTimeout(r, wait));
          await retry.beforeRetry?.();
        }
      }
    }
  } catch (err) {
    if (err instanceof PlatformError && err.unauthorized && conn.app) {
      await applyNotice(conn.app, { kind: 'needs_reauth', surfaceId: null, reason: err.message }).catch((e) =>
        logger.error({ err: e }, 'could not record needs_reauth'),
      );
    }
    throw err;
  }
  return { messageId };
}

/** Consecutive text/markdown parts become one message; each raw part is its own. */
function messagesOf(platform: string, parts: ChannelMessagePart[], displayName: string | null): OutboundMessage[] {
  const out: OutboundMessage[] = [];
  let texts: string[] = [];
  let markdown = false;
  const flush = () => {
    if (texts.length) out.push({ text: texts.join('\n\n'), markdown, displayName });
    texts = [];
    markdown = false;
  };
  for (const part of parts) {
    if (part.type === 'raw') {
      if (part.platform !== platform)
        throw new AppError('invalid_request', `parts: a raw part for ${part.platform} cannot be posted to a ${platform} connection`);
      flush();
      out.push({ text: '', markdown: false, raw: JSON.parse(part.payload) as Record<string, unknown>, displayName });
    } else {
      texts.push(part.text);
      markdown ||= part.type === 'markdown';
    }
  }
  flush();
  return out;
}

function requireConnected(conn: ConnectionRow): void {
  if (conn.status !== 'CONNECTED') throw new AppError('conflict', `the connection is ${conn.status}; it posts only once CONNECTED`);
}

const refused = (conn: ConnectionRow, err: unknown) =>
  err instanceof PlatformError ? new AppError('invalid_spec', `${conn.platform} refused the message: ${err.message}`) : err;

/** POST …/threads/{thread_id}/messages: replies to the thread's latest routed message. */
export async function postMessage(viewer: Viewer, connectionId: string, threadId: string, body: PostMessageBody): Promise<PostedMessageJson> {
  const conn = await findConnection(viewer, connectionId);
  requireConnected(conn);
  const pending = markerTarget(conn.id, threadId);
  let messageId: string | null = null;
  try {
    for (const [i, message] of messagesOf(conn.platform, body.parts, body.display_name ?? null).entries()) {
      ({ messageId } = await postToThread(conn, threadId, message, i === 0 && pending ? { replyTo: pending.replyTo, context: pending.context } : {}));
    }
  } catch (err) {
    throw refused(conn, err);
  }
  if (body.done) await closeMarker(conn.id, threadId);
  return { connection_id: conn.id, thread_id: threadId, message_id: messageId };
}

/** Where a proactive message goes: the latest conversation, else the surface's own thread. */
function proactiveThread(conn: ConnectionRow): string | null {
  if (conn.lastThreadId) return conn.lastThreadId;
  if (conn.platform === 'loopback') return 'default';
  return conn.channelId ? (adapterFor(conn.platform)?.homeThread?.(conn.channelId) ?? null) : null;
}

/**
 * POST …/deliveries: binds the thread to the destination (replies route there), answers at once
 * and posts after; a refusal emits delivery.failed.
 */
export async function createDelivery(viewer: Viewer, connectionId: string, body: DeliveryBody): Promise<ChannelDeliveryJson> {
  const conn = await findConnection(viewer, connectionId);
  requireConnected(conn);
  const threadId = proactiveThread(conn);
  if (!threadId) throw new AppError('conflict', 'the connection has no conversation yet: wait for the first message, or post into a thread');
  const messages = messagesOf(conn.platform, body.parts, body.display_name ?? null);
  const dest = await resolveDestination(viewer, body.destination);
  await putSlot(viewer.universe.id, conn.id, threadId, threadId, dest, threadId.slice(0, 60));
  const id = channelId('chdlv');
  setImmediate(() => {
    void (async () => {
      try {
        for (const message of messages) await postToThread(conn, threadId, message);
      } catch (err) {
        logger.warn({ err: (err as Error).message, connectionId: conn.id }, 'proactive delivery refused');
        await emitChannelEvent(conn.universeId, {
          type: 'delivery.failed',
          data: {
            delivery_id: id,
            connection_id: conn.id,
            app_id: conn.appId,
            platform: conn.platform,
            thread_id: threadId,
            error: { message: (err as Error).message },
            metadata: conn.metadata,
          },
        });
      }
    })().catch((err) => logger.error({ err }, 'delivery.failed could not be emitted'));
  });
  return { id, connection_id: conn.id, thread_id: threadId, status: 'queued' };
}
