// Files a tool produced (an MCP server's image, a generated picture or video): stored as
// downloadable files of the session (listed by GET /v1/files?scope_id=<session>) and shown to
// clients as file / image / video message parts whose `uri` is the file's content path.
import { sessionCopyFromBytes } from '../files/files.js';
import type { MessagePart } from '../events/parts.js';

export interface ProducedFile {
  data: Buffer;
  filename: string;
  mimeType: string;
  /** Known dimensions or length, carried into the part. */
  width?: number | null;
  height?: number | null;
  durationMs?: number | null;
  alt?: string | null;
}

/** What the tool's result (the model's view) says about a stored file. */
export interface FileRef {
  file_id: string;
  filename: string;
  mime_type: string;
  size_bytes: number;
}

export interface StoredFiles {
  refs: FileRef[];
  parts: MessagePart[];
}

export const contentUri = (fileId: string) => `/v1/files/${fileId}/content`;

function partOf(index: number, ref: FileRef, f: ProducedFile): MessagePart {
  const common = { index, media_type: ref.mime_type, uri: contentUri(ref.file_id), data: null };
  if (ref.mime_type.startsWith('image/')) {
    return { type: 'image', ...common, alt: f.alt ?? null, width: f.width ?? null, height: f.height ?? null };
  }
  if (ref.mime_type.startsWith('video/')) {
    return {
      type: 'video',
      ...common,
      alt: f.alt ?? null,
      width: f.width ?? null,
      height: f.height ?? null,
      duration_ms: f.durationMs ?? null,
      size_bytes: ref.size_bytes,
      thumbnail_uri: null,
    };
  }
  return { type: 'file', ...common, name: ref.filename, size_bytes: ref.size_bytes };
}

export async function storeToolFiles(scope: { universeId: string; sessionId: string }, files: ProducedFile[]): Promise<StoredFiles> {
  const refs: FileRef[] = [];
  const parts: MessagePart[] = [];
  for (const f of files) {
    const row = await sessionCopyFromBytes(scope.universeId, scope.sessionId, f.data, { filename: f.filename, mimeType: f.mimeType });
    const ref = { file_id: row.id, filename: row.filename, mime_type: row.mimeType, size_bytes: row.sizeBytes };
    refs.push(ref);
    parts.push(partOf(parts.length, ref, f));
  }
  return { refs, parts };
}

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'video/mp4': 'mp4',
  'video/webm': 'webm',
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'audio/ogg': 'ogg',
  'application/pdf': 'pdf',
  'text/plain': 'txt',
  'application/json': 'json',
};
export const extensionOf = (mimeType: string) => EXTENSIONS[mimeType.split(';')[0]!.trim().toLowerCase()] ?? 'bin';
