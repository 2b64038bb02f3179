// Files: listing, detail and soft delete (upload and download are byte streams served by the
// REST layer directly). Types derived from src/files/contract.ts; resolvers return its views.
import { builder } from './builder.js';
import { AppError } from '../errors.js';
import { listFiles, findFile, deleteFile, fileJson } from '../files/files.js';
import { fileBody, fileList, fileDeleted, type FileView } from '../files/contract.js';
import { objectOf } from './graphql-types.js';

const FileType = objectOf(fileBody);

builder.queryField('files', (t) =>
  t.field({
    type: objectOf(fileList),
    description: "The universe's uploads, or with scopeId a session's files; ids returns exactly those files",
    args: {
      limit: t.arg.int({ description: '1 to 100, default 20' }),
      page: t.arg.string(),
      ids: t.arg.stringList({ description: 'at most 100' }),
      scopeId: t.arg.string({ description: "sess_… id: that session's files" }),
    },
    authScopes: { read: true },
    resolve: async (_r, args, ctx) => {
      if (args.limit != null && (args.limit < 1 || args.limit > 100)) throw new AppError('invalid_request', 'limit must be between 1 and 100');
      if (args.ids && args.ids.length > 100) throw new AppError('invalid_request', 'ids[] takes at most 100 ids');
      return listFiles(ctx.viewer!, {
        limit: args.limit ?? undefined,
        page: args.page ?? undefined,
        ids: args.ids ?? undefined,
        scopeId: args.scopeId ?? undefined,
      });
    },
  }),
);

builder.queryField('file', (t) =>
  t.field({
    type: FileType,
    args: { id: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_r, { id }, ctx) => fileJson(await findFile(ctx.viewer!, id)) satisfies FileView,
  }),
);

builder.mutationField('deleteFile', (t) =>
  t.field({
    type: objectOf(fileDeleted),
    description: 'Soft delete: the file stops resolving; sessions holding a copy keep it',
    args: { id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { id }, ctx) => {
      await deleteFile(ctx.viewer!, id);
      return { type: 'file_deleted' as const, id };
    },
  }),
);
