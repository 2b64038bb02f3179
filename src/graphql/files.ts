// Files: listing, detail and soft delete (upload and download are byte streams served by the
// REST layer directly).
import { builder } from './builder.js';
import { AppError } from '../errors.js';
import { listFiles, findFile, deleteFile, fileJson } from '../files/files.js';

const FileType = builder.simpleObject('File', {
  fields: (t) => ({
    type: t.string(),
    id: t.string(),
    createdAt: t.string(),
    filename: t.string(),
    mimeType: t.string(),
    sizeBytes: t.int(),
    downloadable: t.boolean({ description: 'false for uploads (write-once); true for per-session copies' }),
    expiresAt: t.string({ nullable: true }),
  }),
});
const FileList = builder.simpleObject('FileList', {
  fields: (t) => ({ data: t.field({ type: [FileType], description: 'Newest first' }), nextPage: t.string({ nullable: true }) }),
});

const toGraph = (f: ReturnType<typeof fileJson>) => ({
  type: f.type, id: f.id, createdAt: f.created_at, filename: f.filename, mimeType: f.mime_type, sizeBytes: f.size_bytes, downloadable: f.downloadable, expiresAt: f.expires_at,
});

builder.queryField('files', (t) =>
  t.field({
    type: FileList,
    description: "The universe's uploads, or with scopeId a session's files; ids returns exactly those files",
    args: { limit: t.arg.int(), page: t.arg.string(), ids: t.arg.stringList(), scopeId: t.arg.string() },
    authScopes: { read: true },
    resolve: async (_r, args, ctx) => {
      if (args.limit != null && (args.limit < 1 || args.limit > 100)) throw new AppError('invalid_request', 'limit must be between 1 and 100');
      if (args.ids && args.ids.length > 100) throw new AppError('invalid_request', 'ids[] takes at most 100 ids');
      const list = await listFiles(ctx.viewer!, { limit: args.limit ?? undefined, page: args.page ?? undefined, ids: args.ids ?? undefined, scopeId: args.scopeId ?? undefined });
      return { data: list.data.map(toGraph), nextPage: list.next_page };
    },
  }),
);

builder.queryField('file', (t) =>
  t.field({ type: FileType, args: { id: t.arg.string({ required: true }) }, authScopes: { read: true }, resolve: async (_r, { id }, ctx) => toGraph(fileJson(await findFile(ctx.viewer!, id))) }),
);

builder.mutationField('deleteFile', (t) =>
  t.string({
    description: 'Soft delete: the file stops resolving; sessions holding a copy keep it. Returns the id',
    args: { id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { id }, ctx) => {
      await deleteFile(ctx.viewer!, id);
      return id;
    },
  }),
);
