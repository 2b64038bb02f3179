// Images and documents riding a message become per-session file copies: every image/document
// source (base64, url, file, text) is rewritten to `{type: file, file_id}` naming a downloadable
// copy, as the spec's history shows them.
import { AppError } from '../errors.js';
import { prisma } from '../db/client.js';
import { sessionCopyFromBytes, sessionCopyOf, MAX_FILE_BYTES } from '../files/files.js';
import { guardedFetch, outboundErrorMessage, urlShapeRefusal } from '../net/outbound-guard.js';
import type { ContentBlockInput } from '../events/content.js';

const EXT: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'application/pdf': 'pdf',
  'text/plain': 'txt',
};
const nameFor = (kind: string, mime: string, i: number) => `${kind}-${i + 1}.${EXT[mime] ?? 'bin'}`;

async function fetchUrl(url: string): Promise<{ data: Buffer; mimeType: string }> {
  const problem = urlShapeRefusal(url);
  if (problem) throw new AppError('invalid_request', `source url refused: ${problem}`);
  let res: Awaited<ReturnType<typeof guardedFetch>>;
  try {
    // Every address is checked at connect time, on the connection itself (no rebinding gap).
    res = await guardedFetch(url, { redirect: 'error', signal: AbortSignal.timeout(30_000) });
  } catch (err) {
    throw new AppError('invalid_request', `source url could not be fetched: ${outboundErrorMessage(err)}`);
  }
  if (!res.ok || !res.body) throw new AppError('invalid_request', `source url answered ${res.status}`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > MAX_FILE_BYTES) throw new AppError('file_too_large', 'a source over 32 MiB');
    chunks.push(Buffer.from(chunk));
  }
  return { data: Buffer.concat(chunks), mimeType: (res.headers.get('content-type') ?? 'application/octet-stream').split(';')[0]!.trim() };
}

async function copyFor(universeId: string, sessionId: string, block: ContentBlockInput & { type: 'image' | 'document' }, i: number): Promise<string> {
  const src = block.source as Record<string, string>;
  if (src.type === 'file') {
    const upload = await prisma.file.findFirst({
      where: { id: src.file_id, universeId, deletedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }] },
    });
    if (!upload) throw new AppError('not_found', `file ${src.file_id} not found`);
    return (await sessionCopyOf(universeId, sessionId, upload)).id;
  }
  let data: Buffer;
  let mimeType: string;
  if (src.type === 'base64') {
    if (!/^[A-Za-z0-9+/=\s]+$/.test(src.data!)) throw new AppError('invalid_request', 'base64 source data is not base64');
    data = Buffer.from(src.data!, 'base64');
    mimeType = src.media_type!;
  } else if (src.type === 'text') {
    data = Buffer.from(src.data!, 'utf8');
    mimeType = 'text/plain';
  } else {
    ({ data, mimeType } = await fetchUrl(src.url!));
  }
  if (data.length > MAX_FILE_BYTES) throw new AppError('file_too_large', 'a source over 32 MiB');
  const title = block.type === 'document' ? (block as { title?: string | null }).title : null;
  return (await sessionCopyFromBytes(universeId, sessionId, data, { filename: title || nameFor(block.type, mimeType, i), mimeType })).id;
}

/** The content with every image/document source replaced by a per-session file copy. */
export async function materializeContent(universeId: string, sessionId: string, content: ContentBlockInput[]): Promise<ContentBlockInput[]> {
  const out: ContentBlockInput[] = [];
  for (const [i, block] of content.entries()) {
    if (block.type === 'text') {
      out.push(block);
      continue;
    }
    const fileId = await copyFor(universeId, sessionId, block, i);
    out.push({ ...block, source: { type: 'file', file_id: fileId } } as ContentBlockInput);
  }
  return out;
}
