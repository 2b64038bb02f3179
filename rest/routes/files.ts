// /files: upload (multipart, streamed), list, detail, soft delete, content of session files.
import { z } from 'zod';
import { defineRoute } from '../route.js';
import { AppError } from '../../src/errors.js';
import { parseUpload } from '../../src/files/upload.js';
import { recordUpload, fileJson, contentOf } from '../../src/files/files.js';
import { fileBody, fileList, fileDeleted, type FileView } from '../../src/files/contract.js';
import { selectionOf } from '../../src/contract/values.js';
import { blobStore } from '../../src/blobs/blob-store.js';
import { sendBlob } from '../../src/files/send-blob.js';
import { answerOnce } from '../idempotency.js';

const FILE = selectionOf(fileBody);

const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).optional().describe('1 to 100, default 20'),
  page: z.string().max(64).optional().describe('the next_page of the previous answer'),
  'ids[]': z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe('up to 100 file ids; not combinable with page or limit'),
  ids: z.union([z.string(), z.array(z.string())]).optional(),
  scope_id: z.string().max(128).optional().describe("sess_… id: that session's files"),
});

/** Content-Disposition with a safe ASCII fallback and the UTF-8 name. */
function disposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

export const fileRoutes = [
  defineRoute({
    method: 'POST',
    path: '/files',
    operationId: 'uploadFile',
    tag: 'Files',
    scope: 'write',
    summary: 'Upload a file (multipart part `file`, optional `expires_in_seconds` 3600 to 7776000); at most 32 MiB',
    document: '',
    raw: async (req, res, ctx) => {
      const upload = await parseUpload(req);
      const dropBlob = () =>
        blobStore()
          .delete(upload.blob.key)
          .catch(() => undefined); // no blob without its row
      // The body as read: its file part's name, type and content, and the expiry asked for.
      const fingerprint = {
        filename: upload.filename,
        mimeType: upload.mimeType,
        size: upload.blob.size,
        sha256: upload.blob.sha256,
        expiresInSeconds: upload.expiresInSeconds,
      };
      await answerOnce(
        req,
        res,
        ctx,
        fingerprint,
        async () => {
          const file = await recordUpload(ctx.viewer!, upload.blob, upload).catch(async (err: unknown) => {
            await dropBlob();
            throw err;
          });
          return { status: 200, body: fileJson(file) satisfies FileView };
        },
        dropBlob,
      );
    },
    idempotent: true,
    rawRequestBody: {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['file'],
            properties: { file: { type: 'string', format: 'binary' }, expires_in_seconds: { type: 'integer', minimum: 3600, maximum: 7776000 } },
          },
        },
      },
    },
    response: fileBody,
    errors: ['invalid_request', 'file_too_large'],
  }),
  defineRoute({
    method: 'GET',
    path: '/files',
    operationId: 'listFiles',
    tag: 'Files',
    scope: 'read',
    summary: "The universe's uploads (or a session's files with scope_id), newest first",
    query: listQuery,
    document: `query Files($limit: Int, $page: String, $ids: [String!], $scopeId: String) { files(limit: $limit, page: $page, ids: $ids, scopeId: $scopeId) { ${selectionOf(fileList)} } }`,
    variables: ({ query }) => {
      const raw = query['ids[]'] ?? query.ids;
      const ids = raw === undefined ? null : Array.isArray(raw) ? raw : [raw];
      return { limit: query.limit ?? null, page: query.page ?? null, ids, scopeId: query.scope_id ?? null };
    },
    pick: (data) => data.files,
    response: fileList,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'GET',
    path: '/files/{file_id}',
    operationId: 'getFile',
    tag: 'Files',
    scope: 'read',
    summary: 'One file',
    document: `query File($file_id: String!) { file(id: $file_id) { ${FILE} } }`,
    pick: (data) => data.file,
    response: fileBody,
  }),
  defineRoute({
    method: 'DELETE',
    path: '/files/{file_id}',
    operationId: 'deleteFile',
    tag: 'Files',
    scope: 'write',
    summary: 'Soft delete: stops resolving everywhere; sessions already holding a copy keep it',
    document: `mutation Delete($file_id: String!) { deleted: deleteFile(id: $file_id) { ${selectionOf(fileDeleted)} } }`,
    pick: (data) => data.deleted,
    response: fileDeleted,
    errors: ['file_is_session_resource'],
  }),
  defineRoute({
    method: 'GET',
    path: '/files/{file_id}/content',
    operationId: 'getFileContent',
    tag: 'Files',
    scope: 'read',
    summary: 'Raw bytes of a session file (uploads are not downloadable)',
    document: '',
    raw: async (req, res, ctx) => {
      const { file, stream } = await contentOf(ctx.viewer!, String(req.params.file_id));
      await sendBlob(stream, res, {
        'content-type': file.mimeType,
        'content-length': String(file.sizeBytes),
        'content-disposition': disposition(file.filename),
      });
    },
    // The bytes travel with the file's own media type (its mime_type), whatever it is.
    rawResponseContent: {
      '*/*': {
        schema: {
          type: 'string',
          format: 'binary',
          description: "the file's bytes; Content-Type is the file's mime_type, Content-Disposition attachment with its filename",
        },
      },
    },
    response: z.string().describe('The raw bytes'),
    errors: ['not_downloadable'],
  }),
];
