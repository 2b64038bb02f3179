// Files as the spec shows them: a file, a page of files, a deletion. One definition each for
// the REST answers, OpenAPI and the GraphQL types (uploads and downloads are byte streams).
import { z } from 'zod';
import { dateTime } from '../contract/zod-walk.js';

export const fileBody = z
  .strictObject({
    type: z.literal('file'),
    id: z.string(),
    created_at: dateTime(z.string()),
    filename: z.string(),
    mime_type: z.string(),
    size_bytes: z.int32(),
    downloadable: z.boolean().describe('false for uploads (write-once); true for per-session copies'),
    expires_at: dateTime(z.string()).nullable(),
  })
  .meta({ id: 'File' });
export type FileView = z.output<typeof fileBody>;

export const fileList = z
  .strictObject({
    data: z.array(fileBody).describe('Newest first'),
    next_page: z.string().nullable().describe('Pass back as ?page= for the next page; null on the last page'),
  })
  .meta({ id: 'FileList' });

export const fileDeleted = z.strictObject({ type: z.literal('file_deleted'), id: z.string() }).meta({ id: 'FileDeleted' });
