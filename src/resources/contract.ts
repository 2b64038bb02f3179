// Session resources: the inputs (at session create and add) and the resource as returned, with
// the spec's limits. One definition for REST validation, OpenAPI, GraphQL and the domain.
import { z } from 'zod';
import { dateTime } from '../contract/zod-walk.js';

const branchCheckout = z.strictObject({ type: z.literal('branch'), name: z.string().min(1).max(255) }).meta({ id: 'BranchCheckout' });
const commitCheckout = z
  .strictObject({ type: z.literal('commit'), sha: z.string().regex(/^[0-9a-fA-F]{7,64}$/, '7 to 64 hex characters') })
  .meta({ id: 'CommitCheckout' });
export const checkout = z.discriminatedUnion('type', [branchCheckout, commitCheckout]).meta({ id: 'Checkout' });

// A mount path: the spec's 1 to 4096 characters, and no segment longer than a file name may be
// (255 bytes of UTF-8), so a path the sandbox cannot create is refused up front.
export const MAX_MOUNT_SEGMENT_BYTES = 255;
const mountPath = (where: string) =>
  z
    .string()
    .min(1)
    .max(4096)
    .refine((p) => p.split('/').every((segment) => Buffer.byteLength(segment, 'utf8') <= MAX_MOUNT_SEGMENT_BYTES), {
      error: `each path segment must be at most ${MAX_MOUNT_SEGMENT_BYTES} bytes (UTF-8)`,
    })
    .nullish()
    .describe(`Under /workspace; default /workspace/<${where}>; each path segment at most ${MAX_MOUNT_SEGMENT_BYTES} bytes (UTF-8)`);

export const fileResourceInput = z
  .strictObject({
    // The add route takes only files: its 400 says why another type is refused.
    type: z.literal('file', { error: 'only file resources can be added to a session; repositories and memory stores attach at session create only' }),
    file_id: z.string().min(1).max(128).describe('An upload (`file_…`); copied read-only into the sandbox'),
    mount_path: mountPath('file_id'),
  })
  .meta({ id: 'FileResourceInput' });

export const repositoryResourceInput = z
  .strictObject({
    type: z.literal('github_repository'),
    url: z.string().min(1).max(2048).describe('https://<host>/<owner>/<repo>'),
    authorization_token: z.string().min(1).max(1024).optional().describe('Clone token; write-only, never enters the sandbox'),
    checkout: checkout.nullish(),
    mount_path: mountPath('repo'),
  })
  .meta({ id: 'RepositoryResourceInput' });

const memoryStoreAccess = z.enum(['read_write', 'read_only']).meta({ id: 'MemoryStoreAccess' });

export const memoryStoreResourceInput = z
  .strictObject({
    type: z.literal('memory_store'),
    memory_store_id: z.string().min(1).max(128).describe('A memory store (`memstore_…`) of the universe, not archived; mounted as a directory'),
    access: memoryStoreAccess.default('read_write').describe('read_only: the jail refuses writes'),
    instructions: z.string().max(4096).nullish().describe('How the agent should use the store; shown in its system prompt'),
  })
  .meta({ id: 'MemoryStoreResourceInput', description: 'Only at session create: at most 8 per session; they cannot be added later' });

export const resourceInput = z.discriminatedUnion('type', [fileResourceInput, repositoryResourceInput, memoryStoreResourceInput]).meta({ id: 'ResourceInput' });
export type ResourceInput = z.output<typeof resourceInput>;

export const rotateTokenBody = z.strictObject({ authorization_token: z.string().min(1).max(1024) }).meta({ id: 'RotateResourceTokenInput' });

const timestamps = { created_at: dateTime(z.string()), updated_at: dateTime(z.string()) };
export const fileResource = z
  .strictObject({
    type: z.literal('file'),
    id: z.string(),
    file_id: z.string().describe('The per-session read-only copy'),
    mount_path: z.string(),
    ...timestamps,
  })
  .meta({ id: 'FileResource' });
export const repositoryResource = z
  .strictObject({
    type: z.literal('github_repository'),
    id: z.string(),
    url: z.string(),
    mount_path: z.string(),
    checkout: checkout.optional().describe('Absent: the default branch'),
    ...timestamps,
  })
  .meta({ id: 'RepositoryResource' });
export const memoryStoreResource = z
  .strictObject({
    type: z.literal('memory_store'),
    id: z.string(),
    memory_store_id: z.string(),
    access: memoryStoreAccess,
    instructions: z.string().nullable(),
    mount_path: z.string().describe('Chosen by the service: /workspace/memory/<store name>'),
    ...timestamps,
  })
  .meta({ id: 'MemoryStoreResource' });
export const sessionResource = z.discriminatedUnion('type', [fileResource, repositoryResource, memoryStoreResource]).meta({ id: 'SessionResource' });
export type SessionResourceView = z.output<typeof sessionResource>;

export const resourcePage = z.strictObject({ data: z.array(sessionResource), next_page: z.string().nullable() }).meta({ id: 'SessionResourcePage' });
export const resourceDeleted = z.strictObject({ type: z.literal('session_resource_deleted'), id: z.string() }).meta({ id: 'SessionResourceDeleted' });
