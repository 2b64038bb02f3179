// /files: upload (multipart, streamed), list, detail, soft delete, content of session files.
import { z } from 'zod';
import { defineRoute } from '../route.js';
import { AppError } from '../../src/errors.js';
import { parseUpload } from '../../src/files/upload.js';
import { recordUpload, fileJson, contentOf } from '../../src/files/files.js';
import { Timestamp } from '../schemas.js';
import { blobStore } from '../../src/files/blob-store.js';
import { sendBlob } from '../../src/files/send-blob.js';

const FIELDS = 'type id createdAt filename mimeType sizeBytes downloadable expiresAt';
export const FileBody = z.object({
  type: z.literal('file'), id: z.string(), created_at: Timestamp, filename: z.string(), mime_type: z.string(),
  size_bytes: z.int(), downloadable: z.boolean(), expires_at: Timestamp.nullable(),
}).meta({ id: 'File' });
const toRest = (f: any) => ({ type: 'file', id: f.id, created_at: f.createdAt, filename: f.filename, mime_type: f.mimeType, size_bytes: f.sizeBytes, downloadable: f.downloadable, expires_at: f.expiresAt });

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).optional().describe('1 to 100, default 20'),
  page: z.string().max(64).optional().describe('the next_page of the previous answer'),
  'ids[]': z.union([z.string(), z.array(z.string())]).optional().describe('up to 100 file ids; not combinable with page or limit'),
  ids: z.union([z.string(), z.array(z.string())]).optional(),
  scope_id: z.string().max(128).optional().describe('sess_… id: that session\'s files'),
});

/** Content-Disposition with a safe ASCII fallback and the UTF-8 name. */
function disposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

export const fileRoutes = [
  defineRoute({
    method: 'POST', path: '/files', operationId: 'uploadFile', tag: 'Files', scope: 'write',
    summary: 'Upload a file (multipart part `file`, optional `expires_in_seconds` 3600 to 7776000); at most 32 MiB',
    document: '',
    raw: async (req, res, ctx) => {
      const upload = await parseUpload(req);
      const file = await recordUpload(ctx.viewer!, upload.blob, upload).catch(async (err: unknown) => {
        await blobStore().delete(upload.blob.key).catch(() => undefined); // no blob without its row
        throw err;
      });
      res.status(200).json(fileJson(file));
    },
    rawRequestBody: {
      required: true,
      content: { 'multipart/form-data': { schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' }, expires_in_seconds: { type: 'integer', minimum: 3600, maximum: 7776000 } } } } },
    },
    result: (d) => d,
    response: FileBody,
    errors: ['invalid_request', 'file_too_large'],
  }),
  defineRoute({
    method: 'GET', path: '/files', operationId: 'listFiles', tag: 'Files', scope: 'read',
    summary: "The universe's uploads (or a session's files with scope_id), newest first",
    query: listQuery,
    document: `query Files($limit: Int, $page: String, $ids: [String!], $scopeId: String) { files(limit: $limit, page: $page, ids: $ids, scopeId: $scopeId) { data { ${FIELDS} } nextPage } }`,
    variables: ({ query }) => {
      const raw = query['ids[]'] ?? query.ids;
      const ids = raw === undefined ? null : Array.isArray(raw) ? raw : [raw];
      return { limit: query.limit ?? null, page: query.page ?? null, ids, scopeId: query.scope_id ?? null };
    },
    result: (d) => ({ data: d.files.data.map(toRest), next_page: d.files.nextPage }),
    response: z.object({ data: z.array(FileBody), next_page: z.string().nullable() }).meta({ id: 'FileList' }),
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'GET', path: '/files/{file_id}', operationId: 'getFile', tag: 'Files', scope: 'read',
    summary: 'One file',
    document: `query File($id: String!) { file(id: $id) { ${FIELDS} } }`,
    variables: ({ params }) => ({ id: params.file_id }),
    result: (d) => toRest(d.file),
    response: FileBody,
  }),
  defineRoute({
    method: 'DELETE', path: '/files/{file_id}', operationId: 'deleteFile', tag: 'Files', scope: 'write',
    summary: 'Soft delete: stops resolving everywhere; sessions already holding a copy keep it',
    document: `mutation Delete($id: String!) { deleteFile(id: $id) }`,
    variables: ({ params }) => ({ id: params.file_id }),
    result: (d) => ({ type: 'file_deleted', id: d.deleteFile }),
    response: z.object({ type: z.literal('file_deleted'), id: z.string() }).meta({ id: 'FileDeleted' }),
    errors: ['file_is_session_resource'],
  }),
  defineRoute({
    method: 'GET', path: '/files/{file_id}/content', operationId: 'getFileContent', tag: 'Files', scope: 'read',
    summary: 'Raw bytes of a session file (uploads are not downloadable)',
    document: '',
    raw: async (req, res, ctx) => {
      const { file, stream } = await contentOf(ctx.viewer!, String(req.params.file_id));
      await sendBlob(stream, res, { 'content-type': file.mimeType, 'content-length': String(file.sizeBytes), 'content-disposition': disposition(file.filename) });
    },
    rawResponseContent: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
    result: (d) => d,
    response: z.any(),
    errors: ['not_downloadable'],
  }),
];
