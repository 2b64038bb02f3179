// The loopback surface's two API ends: playing an end user's message in (it then takes the
// same path as a platform's: recorded once, processed off the request) and reading what the
// service posted back (the outbox).
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { MAX_FILE_BYTES } from '../files/files.js';
import type { Viewer } from '../auth/viewer.js';
import { channelId } from './ids.js';
import { findConnection } from './connections.js';
import { recordInbound } from './inbound.js';
import { LOOPBACK_REF, storeChannelFile } from './attachments.js';
import type { InboundAttachment } from './platforms/types.js';
import type { ChannelMessagePart, LoopbackAcceptedJson, LoopbackInboundBody, LoopbackOutboxItemJson } from './contract.js';

async function loopbackConnection(viewer: Viewer, id: string) {
  const conn = await findConnection(viewer, id);
  if (conn.platform !== 'loopback') throw new AppError('invalid_request', `${conn.id} is a ${conn.platform} connection, not loopback`);
  return conn;
}

const kindOf = (mime: string): InboundAttachment['type'] =>
  mime.startsWith('image/') ? 'image' : mime.startsWith('audio/') ? 'audio' : mime.startsWith('video/') ? 'video' : 'document';

export async function receiveLoopback(viewer: Viewer, connectionId: string, body: LoopbackInboundBody): Promise<LoopbackAcceptedJson> {
  // The acknowledgement path: one light read, one insert (the rest happens after the answer).
  const conn = await prisma.channelConnection.findFirst({
    where: { id: connectionId, universeId: viewer.universe.id },
    select: { id: true, platform: true, status: true, channelId: true, universeId: true },
  });
  if (!conn) throw new AppError('not_found', 'channel connection not found');
  if (conn.platform !== 'loopback') throw new AppError('invalid_request', `${conn.id} is a ${conn.platform} connection, not loopback`);
  if (conn.status !== 'CONNECTED') throw new AppError('conflict', `the connection is ${conn.status}: open its connect.url and claim it first`);
  const messageId = body.message_id ?? channelId('lbmsg');
  const decoded = (body.attachments ?? []).map((a) => {
    if (!/^[A-Za-z0-9+/=\s]+$/.test(a.data)) throw new AppError('invalid_request', `attachments: ${a.name} is not base64`);
    return { ...a, bytes: Buffer.from(a.data, 'base64') };
  });
  if (decoded.reduce((n, a) => n + a.bytes.length, 0) > MAX_FILE_BYTES)
    throw new AppError('file_too_large', 'the files of one message may total at most 32 MiB');
  // A repeated message id is dropped before its files are stored twice.
  if (decoded.length && (await prisma.channelInbound.findUnique({ where: { dedupeKey: `${conn.id}:${messageId}` }, select: { id: true } }))) {
    return { message_id: messageId, thread_id: body.thread_id, duplicate: true };
  }
  const attachments: InboundAttachment[] = [];
  for (const a of decoded) {
    const file = await storeChannelFile(conn.universeId, null, a.bytes, { name: a.name, mimeType: a.mime_type });
    attachments.push({ ref: `${LOOPBACK_REF}${file.id}`, type: kindOf(a.mime_type), name: a.name, mimeType: a.mime_type, sizeBytes: a.bytes.length });
  }
  const created = await recordInbound(conn.universeId, { connectionId: conn.id }, [
    {
      kind: 'message',
      dedupeId: messageId,
      surfaceId: conn.channelId ?? conn.id,
      threadId: body.thread_id,
      messageId,
      text: body.text,
      conversation: { id: body.thread_id, is_dm: true, type: 'loopback', title: null },
      author: { id: body.author, name: body.author, username: null },
      attachments,
    },
  ]);
  return { message_id: messageId, thread_id: body.thread_id, duplicate: created === 0 };
}

export async function loopbackOutbox(viewer: Viewer, connectionId: string, q: { after?: string; thread_id?: string }): Promise<LoopbackOutboxItemJson[]> {
  const conn = await loopbackConnection(viewer, connectionId);
  const rows = await prisma.loopbackMessage.findMany({
    where: { connectionId: conn.id, ...(q.after ? { id: { gt: q.after } } : {}), ...(q.thread_id ? { threadId: q.thread_id } : {}) },
    orderBy: { id: 'asc' },
    take: 500,
  });
  return rows.map((r) => {
    const b = r.body as { text?: string; parts?: ChannelMessagePart[]; display_name?: string | null; reply_to?: string | null };
    return {
      id: r.id,
      thread_id: r.threadId,
      kind: r.kind as LoopbackOutboxItemJson['kind'],
      text: b.text ?? null,
      parts: b.parts ?? [],
      display_name: b.display_name ?? null,
      reply_to: b.reply_to ?? null,
      created_at: r.createdAt.toISOString(),
    };
  });
}
