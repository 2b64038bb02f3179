// Inbound files: downloaded through the platform before anything is forwarded (all or nothing,
// within the per-message limit), then either stored as downloadable files (webhook routes, which
// get `file_id`s) or handed to the session as content blocks (the session keeps per-session
// copies the model sees).
import { Readable } from 'node:stream';
import { prisma } from '../db/client.js';
import { newId } from '../ids.js';
import { blobStore } from '../blobs/blob-store.js';
import { MAX_FILE_BYTES } from '../files/files.js';
import type { File } from '../generated/prisma/client.js';
import type { ContentBlockInput } from '../events/content.js';
import { adapterFor } from './platforms/index.js';
import { PlatformError, type AppRecord, type InboundAttachment } from './platforms/types.js';

export interface Downloaded {
  attachment: InboundAttachment;
  data: Buffer;
  mimeType: string;
  name: string;
}

/** A download failed or the message is over its limit: the end user is asked to send again. */
export class AttachmentError extends Error {}

/** Loopback attachments are stored when played in; their `ref` is that file's id. */
export const LOOPBACK_REF = 'file:';

const mib = (n: number) => `${Math.round(n / 1024 / 1024)} MiB`;

export async function downloadAll(platform: string, app: AppRecord | null, attachments: InboundAttachment[]): Promise<Downloaded[]> {
  const limit = adapterFor(platform)?.maxInboundBytes ?? MAX_FILE_BYTES;
  const declared = attachments.reduce((n, a) => n + (a.sizeBytes ?? 0), 0);
  if (declared > limit) throw new AttachmentError(`the files of one message may total at most ${mib(limit)}`);
  const out: Downloaded[] = [];
  let left = limit;
  for (const a of attachments) {
    try {
      let got: { data: Buffer; mimeType: string; name: string };
      if (a.ref.startsWith(LOOPBACK_REF)) {
        const file = await prisma.file.findUniqueOrThrow({ where: { id: a.ref.slice(LOOPBACK_REF.length) } });
        got = { data: await blobStore().read(file.blobKey), mimeType: file.mimeType, name: file.filename };
      } else {
        got = await adapterFor(platform)!.download(app!, a, left);
      }
      left -= got.data.length;
      if (left < 0) throw new AttachmentError(`the files of one message may total at most ${mib(limit)}`);
      out.push({ attachment: a, ...got });
    } catch (err) {
      if (err instanceof AttachmentError) throw err;
      throw new AttachmentError(`"${a.name}" could not be received (${err instanceof PlatformError ? err.message : 'download failed'})`);
    }
  }
  return out;
}

/** A downloadable file of the universe (optionally of a session) holding channel bytes. */
export async function storeChannelFile(universeId: string, sessionId: string | null, data: Buffer, meta: { name: string; mimeType: string }): Promise<File> {
  const blob = await blobStore().put(Readable.from([data]), { maxBytes: MAX_FILE_BYTES });
  return prisma.file.create({
    data: {
      id: newId('file'),
      universeId,
      sessionId,
      filename: meta.name,
      mimeType: meta.mimeType,
      sizeBytes: blob.size,
      sha256: blob.sha256,
      blobKey: blob.key,
      downloadable: true,
    },
  });
}

export interface AttachmentJson {
  file_id: string;
  type: InboundAttachment['type'];
  name: string;
  mime_type: string;
  size_bytes: number;
}

/** Webhook routes: each download becomes a file (loopback files already are one). */
export async function storeForWebhook(universeId: string, downloaded: Downloaded[]): Promise<AttachmentJson[]> {
  const out: AttachmentJson[] = [];
  for (const d of downloaded) {
    const file = d.attachment.ref.startsWith(LOOPBACK_REF)
      ? await prisma.file.findUniqueOrThrow({ where: { id: d.attachment.ref.slice(LOOPBACK_REF.length) } })
      : await storeChannelFile(universeId, null, d.data, { name: d.name, mimeType: d.mimeType });
    out.push({ file_id: file.id, type: d.attachment.type, name: file.filename, mime_type: file.mimeType, size_bytes: file.sizeBytes });
  }
  return out;
}

const MODEL_IMAGES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * The user.message content of a channel message: its text, then each file as a block the model
 * can read (images, PDFs, plain text); other files are kept as session files and named in text.
 */
export async function contentFor(universeId: string, sessionId: string, text: string, downloaded: Downloaded[]): Promise<ContentBlockInput[]> {
  const blocks: ContentBlockInput[] = [];
  if (text.trim()) blocks.push({ type: 'text', text });
  for (const d of downloaded) {
    const mime = d.mimeType.toLowerCase();
    if (MODEL_IMAGES.has(mime)) {
      blocks.push({ type: 'image', source: { type: 'base64', media_type: mime, data: d.data.toString('base64') } });
    } else if (mime === 'application/pdf') {
      blocks.push({ type: 'document', source: { type: 'base64', media_type: mime, data: d.data.toString('base64') }, title: d.name });
    } else if (mime.startsWith('text/') && d.data.length > 0 && !d.data.includes(0)) {
      blocks.push({ type: 'document', source: { type: 'text', media_type: 'text/plain', data: d.data.toString('utf8') }, title: d.name });
    } else {
      const file = await storeChannelFile(universeId, sessionId, d.data, { name: d.name, mimeType: d.mimeType });
      blocks.push({
        type: 'text',
        text: `[The user sent a file the model cannot read directly: "${file.filename}" (${file.mimeType}, ${file.sizeBytes} bytes), kept as session file ${file.id}]`,
      });
    }
  }
  if (!blocks.length) blocks.push({ type: 'text', text: '(empty message)' });
  return blocks;
}
