// Media a capability reads (an image to cut out or animate, audio to transcribe): a file of the
// session (a message attachment or an earlier tool's output), a file in the sandbox's
// /workspace, or a public URL (fetched through the outbound guard).
import { z } from 'zod';
import { prisma } from '../../db/client.js';
import { blobStore } from '../../blobs/blob-store.js';
import type { Sandbox } from '../../sandbox/driver.js';
import { vendorDownload, VendorError } from './vendors.js';

const MAX_MEDIA_BYTES = 32 * 1024 * 1024;

export const mediaInput = z
  .strictObject({
    file_id: z.string().min(1).max(128).optional().describe('a file of this session (file_…), e.g. an attachment or an earlier tool result'),
    path: z.string().min(1).max(4096).optional().describe('a file in /workspace'),
    url: z.url().max(4096).optional().describe('a public http(s) URL'),
  })
  .refine((m) => [m.file_id, m.path, m.url].filter(Boolean).length === 1, 'give exactly one of file_id, path, url');
export type MediaInput = z.output<typeof mediaInput>;

export interface MediaScope {
  sessionId: string;
  universeId: string;
  sandbox: Sandbox;
  signal: AbortSignal;
}

const BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  m4a: 'audio/mp4',
  flac: 'audio/flac',
  webm: 'audio/webm',
  mp4: 'video/mp4',
};
const mimeOfName = (name: string) => BY_EXTENSION[name.split('.').pop()?.toLowerCase() ?? ''] ?? 'application/octet-stream';

export async function loadMedia(input: MediaInput, scope: MediaScope): Promise<{ data: Buffer; mimeType: string; filename: string }> {
  if (input.file_id) {
    // Files of this session, or uploads of its universe.
    const f = await prisma.file.findFirst({
      where: { id: input.file_id, universeId: scope.universeId, deletedAt: null, OR: [{ sessionId: scope.sessionId }, { sessionId: null }] },
    });
    if (!f) throw new VendorError(`no file ${input.file_id} in this session`);
    if (f.sizeBytes > MAX_MEDIA_BYTES) throw new VendorError(`${input.file_id} is over ${MAX_MEDIA_BYTES} bytes`);
    return { data: await blobStore().read(f.blobKey), mimeType: f.mimeType, filename: f.filename };
  }
  if (input.path) {
    const st = await scope.sandbox.stat(input.path);
    if (!st?.isFile) throw new VendorError(`no file at ${input.path}`);
    if (st.size > MAX_MEDIA_BYTES) throw new VendorError(`${input.path} is over ${MAX_MEDIA_BYTES} bytes`);
    const name = input.path.split('/').pop() || 'file';
    return { data: await scope.sandbox.readFile(input.path, { maxBytes: MAX_MEDIA_BYTES }), mimeType: mimeOfName(name), filename: name };
  }
  const got = await vendorDownload('the media URL', input.url!, { signal: scope.signal, timeoutMs: 60_000, maxBytes: MAX_MEDIA_BYTES });
  const name = new URL(input.url!).pathname.split('/').pop() || 'file';
  return { data: got.data, mimeType: got.mimeType === 'application/octet-stream' ? mimeOfName(name) : got.mimeType, filename: name };
}

/** A URL the vendor can fetch itself: a public URL as given, anything else as a data: URL. */
export async function mediaAsUrl(input: MediaInput, scope: MediaScope): Promise<string> {
  if (input.url) return input.url;
  const m = await loadMedia(input, scope);
  return `data:${m.mimeType};base64,${m.data.toString('base64')}`;
}
