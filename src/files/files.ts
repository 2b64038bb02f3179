// Files: uploads (write-once, not downloadable, optional expiry) and per-session copies
// (downloadable). Listing pages newest first; deletion is soft.
import { Readable } from 'node:stream';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { Viewer } from '../auth/viewer.js';
import type { File } from '../generated/prisma/client.js';
import { blobStore } from '../blobs/blob-store.js';
import { decodePageToken, encodePageToken } from '../pagination/page-token.js';

export const MAX_FILE_BYTES = 32 * 1024 * 1024;
export const MIN_EXPIRES_S = 3600;
export const MAX_EXPIRES_S = 7_776_000;

export function fileJson(f: File) {
  return {
    type: 'file' as const,
    id: f.id,
    created_at: f.createdAt.toISOString(),
    filename: f.filename,
    mime_type: f.mimeType,
    size_bytes: f.sizeBytes,
    downloadable: f.downloadable,
    expires_at: f.expiresAt?.toISOString() ?? null,
  };
}

const live = (now = new Date()) => ({ deletedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] });

/** A file of the viewer's universe that still resolves (not deleted, not expired). */
export async function findFile(viewer: Viewer, id: string): Promise<File> {
  const f = await prisma.file.findFirst({ where: { id, universeId: viewer.universe.id, ...live() } });
  if (!f) throw new AppError('not_found', 'file not found');
  return f;
}

export async function recordUpload(
  viewer: Viewer,
  blob: { key: string; size: number; sha256: string },
  meta: { filename: string; mimeType: string; expiresInSeconds: number | null },
): Promise<File> {
  return prisma.file.create({
    data: {
      id: newId('file'),
      universeId: viewer.universe.id,
      filename: meta.filename,
      mimeType: meta.mimeType,
      sizeBytes: blob.size,
      sha256: blob.sha256,
      blobKey: blob.key,
      downloadable: false,
      expiresAt: meta.expiresInSeconds ? new Date(Date.now() + meta.expiresInSeconds * 1000) : null,
    },
  });
}

/** A downloadable per-session copy (bytes copied, so deleting the source keeps it). */
export async function sessionCopyFromBytes(
  universeId: string,
  sessionId: string,
  data: Buffer,
  meta: { filename: string; mimeType: string; sourceFileId?: string | null },
): Promise<File> {
  const blob = await blobStore().put(Readable.from([data]), { maxBytes: MAX_FILE_BYTES });
  return prisma.file.create({
    data: {
      id: newId('file'),
      universeId,
      sessionId,
      sourceFileId: meta.sourceFileId ?? null,
      filename: meta.filename,
      mimeType: meta.mimeType,
      sizeBytes: blob.size,
      sha256: blob.sha256,
      blobKey: blob.key,
      downloadable: true,
    },
  });
}

export async function sessionCopyOf(universeId: string, sessionId: string, source: File): Promise<File> {
  let data: Buffer;
  try {
    data = await blobStore().read(source.blobKey);
  } catch (err) {
    // The row is here but its bytes are not: uploaded through another process with its own
    // DATA_DIR (local blob store). The client's reference cannot be used here: 404, not a 500.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    throw new AppError(
      'not_found',
      `file ${source.id} not found: its bytes are not in this process's blob store (several processes must share one, e.g. BLOB_STORE=s3)`,
    );
  }
  return sessionCopyFromBytes(universeId, sessionId, data, { filename: source.filename, mimeType: source.mimeType, sourceFileId: source.id });
}

export interface ListQuery {
  limit?: number;
  page?: string;
  ids?: string[];
  scopeId?: string;
}

export async function listFiles(viewer: Viewer, q: ListQuery) {
  if (q.ids?.length) {
    if (q.page || q.limit !== undefined) throw new AppError('invalid_request', 'ids[] cannot be combined with page or limit');
    const found = await prisma.file.findMany({ where: { id: { in: q.ids }, universeId: viewer.universe.id, ...live() } });
    const byId = new Map(found.map((f) => [f.id, f]));
    return {
      // Each file once, in the order first asked (an id repeated in ids[] is one file).
      data: [...new Set(q.ids)]
        .map((id) => byId.get(id))
        .filter((f): f is File => !!f)
        .map(fileJson),
      next_page: null,
    };
  }
  let sessionId: string | null = null;
  if (q.scopeId) {
    const session = await prisma.session.findFirst({ where: { id: q.scopeId, universeId: viewer.universe.id }, select: { id: true } });
    if (!session) throw new AppError('not_found', 'session not found');
    sessionId = session.id;
  }
  const limit = q.limit ?? 20;
  const after = q.page ? decodePageToken('files', q.page) : null;
  const rows = await prisma.file.findMany({
    // Without scope_id: the universe's uploads only (not downloadable). Channel attachments of
    // webhook-bound messages are downloadable files of no session: reachable by id, not listed.
    where: { universeId: viewer.universe.id, sessionId, ...(sessionId ? {} : { downloadable: false }), ...live(), ...(after ? { id: { lt: after } } : {}) },
    orderBy: { id: 'desc' },
    take: limit + 1,
  });
  const page = rows.slice(0, limit);
  return { data: page.map(fileJson), next_page: rows.length > limit ? encodePageToken('files', page[page.length - 1]!.id) : null };
}

export async function deleteFile(viewer: Viewer, id: string): Promise<void> {
  const f = await findFile(viewer, id);
  const backing = await prisma.sessionResource.findFirst({ where: { fileId: f.id } });
  if (backing) {
    const session = await prisma.session.findUnique({ where: { id: backing.sessionId }, select: { status: true } });
    if (session && session.status !== 'terminated')
      throw new AppError('file_is_session_resource', `the file backs session resource ${backing.id}; delete the resource instead`);
  }
  await prisma.file.update({ where: { id: f.id }, data: { deletedAt: new Date() } });
}

/** The bytes of a downloadable file; uploads are write-once (400), expired files 404. */
export async function contentOf(viewer: Viewer, id: string): Promise<{ file: File; stream: Readable }> {
  const f = await prisma.file.findFirst({ where: { id, universeId: viewer.universe.id, deletedAt: null } });
  if (!f || (f.expiresAt && f.expiresAt <= new Date())) throw new AppError('not_found', 'file not found');
  if (!f.downloadable) throw new AppError('not_downloadable', 'uploads are write-once: only session files download');
  return { file: f, stream: blobStore().get(f.blobKey) };
}
