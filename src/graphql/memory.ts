// Memory stores, memories and versions (issue #30). Inputs and outputs are derived from the zod
// schemas of src/memory/contract.ts; resolvers return the contract-shaped views of
// src/memory/view.ts.
import { builder } from './builder.js';
import { AppError } from '../errors.js';
import { archiveMemoryStore, createMemoryStore, findMemoryStore, listMemoryStores, patchMemoryStore } from '../memory/stores.js';
import {
  createMemory,
  deleteMemory,
  findMemory,
  findMemoryByPath,
  findVersion,
  listMemories,
  listVersions,
  redactVersion,
  restoreVersion,
  updateMemory,
} from '../memory/memories.js';
import { memorySummaryView, memoryStoreView, memoryVersionView, memoryView } from '../memory/view.js';
import {
  createMemoryBody,
  createMemoryStoreBody,
  memoryBody,
  memoryDeleted,
  memoryList,
  memoryStoreBody,
  memoryVersionBody,
  patchMemoryBody,
  patchMemoryStoreBody,
} from '../memory/contract.js';
import { inputOf, objectOf } from './graphql-types.js';
import { takeInput } from './input.js';
import { newestFirst } from './id-connection.js';
import { withinLength } from './arg-limits.js';

const MemoryStoreType = objectOf(memoryStoreBody);
const MemoryType = objectOf(memoryBody);
const MemoryVersionType = objectOf(memoryVersionBody);
const PAGE = { defaultSize: 20, maxSize: 100 };

builder.queryField('memoryStores', (t) =>
  t.connection({
    type: MemoryStoreType,
    description: 'Memory stores of the universe (archived ones included), newest first',
    authScopes: { read: true },
    resolve: (_r, args, ctx) => newestFirst(args, PAGE, async (page) => (await listMemoryStores(ctx.viewer!, page)).map(memoryStoreView)),
  }),
);
builder.queryField('memoryStore', (t) =>
  t.field({
    type: MemoryStoreType,
    args: { id: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_r, { id }, ctx) => memoryStoreView(await findMemoryStore(ctx.viewer!, id)),
  }),
);
builder.mutationField('createMemoryStore', (t) =>
  t.field({
    type: MemoryStoreType,
    description: 'Create a memory store: small text documents sessions mount as a directory',
    args: { input: t.arg({ type: inputOf(createMemoryStoreBody, 'CreateMemoryStore'), required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { input }, ctx) => memoryStoreView(await createMemoryStore(ctx.viewer!, takeInput(ctx, createMemoryStoreBody, input))),
  }),
);
builder.mutationField('updateMemoryStore', (t) =>
  t.field({
    type: MemoryStoreType,
    description: 'Update a memory store; every field optional',
    args: { id: t.arg.string({ required: true }), input: t.arg({ type: inputOf(patchMemoryStoreBody, 'UpdateMemoryStore'), required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { id, input }, ctx) => memoryStoreView(await patchMemoryStore(ctx.viewer!, id, takeInput(ctx, patchMemoryStoreBody, input))),
  }),
);
builder.mutationField('archiveMemoryStore', (t) =>
  t.field({
    type: MemoryStoreType,
    description: 'Archive the store (idempotent): new mounts are refused; sessions that mount it keep it',
    args: { id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { id }, ctx) => memoryStoreView(await archiveMemoryStore(ctx.viewer!, id)),
  }),
);

// ---- memories ----

builder.queryField('memories', (t) =>
  t.field({
    type: objectOf(memoryList),
    description: 'Memories of a store by path (without content)',
    args: {
      memoryStoreId: t.arg.string({ required: true }),
      pathPrefix: t.arg.string({ description: 'A prefix of the path; default /' }),
      depth: t.arg.int({ description: 'At most this many segments below the prefix’s directory; default unlimited' }),
      limit: t.arg.int({ description: '1 to 1000, default 100' }),
      page: t.arg.string(),
    },
    authScopes: { read: true },
    resolve: async (_r, a, ctx) => {
      const limit = a.limit ?? 100;
      if (limit < 1 || limit > 1000) throw new AppError('invalid_request', 'limit must be between 1 and 1000');
      if (a.depth != null && (a.depth < 1 || a.depth > 1024)) throw new AppError('invalid_request', 'depth must be between 1 and 1024');
      const page = await listMemories(ctx.viewer!, a.memoryStoreId, { pathPrefix: a.pathPrefix ?? '/', depth: a.depth ?? null, limit, page: a.page ?? null });
      return { data: page.data.map(memorySummaryView), next_page: page.nextPage };
    },
  }),
);
builder.queryField('memory', (t) =>
  t.field({
    type: MemoryType,
    description: 'One memory, by id or by path',
    args: { memoryStoreId: t.arg.string({ required: true }), id: t.arg.string(), path: t.arg.string() },
    authScopes: { read: true },
    resolve: async (_r, a, ctx) => {
      if ((a.id == null) === (a.path == null)) throw new AppError('invalid_request', 'give exactly one of id and path');
      const memory = a.id != null ? await findMemory(ctx.viewer!, a.memoryStoreId, a.id) : await findMemoryByPath(ctx.viewer!, a.memoryStoreId, a.path!);
      return memoryView(memory);
    },
  }),
);
builder.mutationField('createMemory', (t) =>
  t.field({
    type: MemoryType,
    description: 'Create a memory at a path (409 when one exists there)',
    args: { memoryStoreId: t.arg.string({ required: true }), input: t.arg({ type: inputOf(createMemoryBody, 'CreateMemory'), required: true }) },
    authScopes: { write: true },
    resolve: async (_r, a, ctx) => memoryView(await createMemory(ctx.viewer!, a.memoryStoreId, takeInput(ctx, createMemoryBody, a.input))),
  }),
);
builder.mutationField('updateMemory', (t) =>
  t.field({
    type: MemoryType,
    description: 'Edit a memory’s content or path, from the content_sha256 the edit was made from (409 version_conflict when stale)',
    args: {
      memoryStoreId: t.arg.string({ required: true }),
      id: t.arg.string({ required: true }),
      input: t.arg({ type: inputOf(patchMemoryBody, 'UpdateMemory'), required: true }),
    },
    authScopes: { write: true },
    resolve: async (_r, a, ctx) => memoryView(await updateMemory(ctx.viewer!, a.memoryStoreId, a.id, takeInput(ctx, patchMemoryBody, a.input))),
  }),
);
builder.mutationField('deleteMemory', (t) =>
  t.field({
    type: objectOf(memoryDeleted),
    description: 'Delete a memory (its versions stay); with expectedContentSha256, only if unchanged since',
    args: { memoryStoreId: t.arg.string({ required: true }), id: t.arg.string({ required: true }), expectedContentSha256: t.arg.string() },
    authScopes: { write: true },
    resolve: async (_r, a, ctx) => {
      const memory = await deleteMemory(ctx.viewer!, a.memoryStoreId, a.id, a.expectedContentSha256 ?? null);
      return { type: 'memory_deleted' as const, id: memory.id };
    },
  }),
);

// ---- versions ----

builder.queryField('memoryVersions', (t) =>
  t.connection({
    type: MemoryVersionType,
    description: 'Versions of a store’s memories (of one memory with memoryId), newest first',
    args: { memoryStoreId: t.arg.string({ required: true }), memoryId: t.arg.string() },
    authScopes: { read: true },
    resolve: (_r, args, ctx) =>
      newestFirst(args, PAGE, async (page) =>
        (await listVersions(ctx.viewer!, args.memoryStoreId, withinLength('memoryId', args.memoryId, 128) ?? null, page)).map(memoryVersionView),
      ),
  }),
);
builder.queryField('memoryVersion', (t) =>
  t.field({
    type: MemoryVersionType,
    args: { memoryStoreId: t.arg.string({ required: true }), id: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_r, a, ctx) => memoryVersionView(await findVersion(ctx.viewer!, a.memoryStoreId, a.id)),
  }),
);
builder.mutationField('restoreMemoryVersion', (t) =>
  t.field({
    type: MemoryType,
    description: 'Make a version’s content the memory’s again (a new version; a deleted memory comes back with its id)',
    args: { memoryStoreId: t.arg.string({ required: true }), id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_r, a, ctx) => memoryView(await restoreVersion(ctx.viewer!, a.memoryStoreId, a.id)),
  }),
);
builder.mutationField('redactMemoryVersion', (t) =>
  t.field({
    type: MemoryVersionType,
    description: 'Null a version’s content and path for good (idempotent); the audit row stays',
    args: { memoryStoreId: t.arg.string({ required: true }), id: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_r, a, ctx) => memoryVersionView(await redactVersion(ctx.viewer!, a.memoryStoreId, a.id)),
  }),
);
