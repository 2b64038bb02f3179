// Routing one inbound message of a connected surface: the thread's binding, else the
// connection's, else channel.unmapped_conversation. A webhook destination gets
// message.received (command.received for slash commands) with its files stored; a session
// destination gets a user.message turn whose answer is posted back; a refused turn emits
// turn.refused and tells the end user briefly. Reactions and button taps are events.
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { logger } from '../logger.js';
import { sendEvents } from '../sessions/send.js';
import { seqOf } from '../events/store.js';
import { channelId } from './ids.js';
import { routeFor } from './bindings.js';
import { emitChannelEvent } from './events.js';
import { AttachmentError, contentFor, downloadAll, storeForWebhook, type Downloaded } from './attachments.js';
import { postToThread, surfaceOf } from './posting.js';
import { openMarker } from './markers.js';
import { outboundFor } from './platforms/index.js';
import { universeViewer } from './universe-viewer.js';
import { watchReply } from './replies.js';
import type { ConnectionRow } from './connections.js';
import type { InboundMessage } from './platforms/types.js';

/** What every message event carries (app_id from the connection, is_dm from the platform). */
function messageData(conn: ConnectionRow, msg: InboundMessage): Record<string, unknown> {
  return {
    connection_id: conn.id,
    app_id: conn.appId,
    platform: conn.platform,
    thread_id: msg.threadId,
    message_id: msg.messageId,
    text: msg.text,
    conversation: msg.conversation,
    author: msg.author,
    metadata: conn.metadata,
  };
}

const REFUSAL_NOTICE: Record<string, string> = {
  budget_reached: 'This conversation reached its spending limit, so your message was not passed on.',
  insufficient_credits: 'The agent is out of credits right now, so your message was not passed on.',
  session_archived: 'This conversation is closed, so your message was not passed on.',
};

/** Tells the end user something in the thread (best effort). */
async function notify(conn: ConnectionRow, msg: InboundMessage, text: string): Promise<void> {
  await postToThread(conn, msg.threadId, { text, markdown: false }, { replyTo: msg.messageId, context: msg.context }).catch((err) =>
    logger.warn({ err: (err as Error).message, connectionId: conn.id }, 'could not notify the end user'),
  );
}

/** Returns a short note of what happened (kept on the inbound record). */
export async function routeInbound(conn: ConnectionRow, msg: InboundMessage): Promise<string> {
  if (conn.lastThreadId !== msg.threadId && (msg.kind === 'message' || msg.kind === 'command')) {
    await prisma.channelConnection.update({ where: { id: conn.id }, data: { lastThreadId: msg.threadId } });
  }
  const base = messageData(conn, msg);
  if (msg.kind === 'reaction') {
    await emitChannelEvent(conn.universeId, { type: 'message.reaction', data: { ...base, reaction: msg.reaction } });
    return 'reaction';
  }
  if (msg.kind === 'action') {
    await emitChannelEvent(conn.universeId, { type: 'interaction.action', data: { ...base, action: msg.action } });
    return 'action';
  }

  const binding = await routeFor(conn.id, msg.threadId);
  if (!binding) {
    await emitChannelEvent(conn.universeId, {
      type: 'channel.unmapped_conversation',
      data: { ...base, attachments: msg.attachments.map((a) => ({ type: a.type, name: a.name, mime_type: a.mimeType, size_bytes: a.sizeBytes })) },
    });
    return 'unmapped';
  }

  let downloaded: Downloaded[];
  try {
    downloaded = await downloadAll(conn.platform, surfaceOf(conn).app, msg.attachments);
  } catch (err) {
    if (!(err instanceof AttachmentError)) throw err;
    // Never a partial message: the end user is asked to send it again.
    await notify(conn, msg, `Your message was not passed on: ${err.message}. Please send it again.`);
    return `attachment refused: ${err.message}`;
  }

  const outbound = outboundFor(conn.platform);
  const target = { threadId: msg.threadId, replyTo: msg.messageId, context: msg.context };
  if (binding.webhookEndpointId) {
    const attachments = await storeForWebhook(conn.universeId, downloaded);
    await emitChannelEvent(conn.universeId, {
      type: msg.kind === 'command' ? 'command.received' : 'message.received',
      endpointId: binding.webhookEndpointId,
      data: {
        ...base,
        route_key: binding.routeKey,
        binding_id: binding.id,
        ...(attachments.length ? { attachments } : {}),
        ...(msg.command ? { command: msg.command } : {}),
      },
    });
    openMarker(surfaceOf(conn), outbound, target);
    return 'webhook';
  }

  const sessionId = binding.sessionId!;
  const text = msg.kind === 'command' && conn.platform !== 'telegram' ? msg.command?.text || `/${msg.command?.name ?? ''}` : msg.text;
  let eventId: string;
  try {
    const content = await contentFor(conn.universeId, sessionId, text, downloaded);
    const [event] = await sendEvents(await universeViewer(conn.universeId), sessionId, { events: [{ type: 'user.message', content }] });
    eventId = event!.id;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    await emitChannelEvent(conn.universeId, {
      type: 'turn.refused',
      data: { ...base, session_id: sessionId, error: { code: err.code, message: err.message } },
    });
    await notify(conn, msg, REFUSAL_NOTICE[err.code] ?? 'Your message could not be passed on to the agent.');
    return `turn refused: ${err.code}`;
  }
  const inputSeq = (await seqOf(sessionId, eventId)) ?? 0;
  const reply = await prisma.channelReply.create({
    data: {
      id: channelId('chrep'),
      connectionId: conn.id,
      threadId: msg.threadId,
      sessionId,
      inputEventId: eventId,
      inputSeq,
      replyTo: msg.messageId,
      context: msg.context ?? {},
    },
  });
  openMarker(surfaceOf(conn), outbound, target);
  watchReply(reply);
  return 'session';
}
