// Memory stores (issue #30): the create/patch bodies and the store, memory and version as
// returned, with the limits. One definition each for REST validation, OpenAPI, the
// GraphQL types and the domain.
import { z } from 'zod';
import { dateTime } from '../contract/zod-walk.js';
import { MAX_CONTENT_BYTES, MAX_PATH_BYTES, MEMORY_PATH_PATTERN } from './paths.js';

const metadataInput = z.record(z.string().max(256), z.unknown()).describe('Client metadata (free-form)');

export const createMemoryStoreBody = z
  .strictObject({
    name: z.string().min(1).max(255),
    description: z.string().max(1024).nullish().describe('Shown to the agent in its system prompt when the store is mounted'),
    metadata: metadataInput.default({}),
  })
  .meta({ id: 'CreateMemoryStoreInput' });
export type CreateMemoryStoreBody = z.output<typeof createMemoryStoreBody>;

export const patchMemoryStoreBody = z
  .strictObject({
    name: z.string().min(1).max(255).optional(),
    description: z.string().max(1024).nullable().optional(),
    metadata: metadataInput.optional().describe('Replaces the metadata'),
  })
  .meta({ id: 'UpdateMemoryStoreInput' });
export type PatchMemoryStoreBody = z.output<typeof patchMemoryStoreBody>;

/** A memory path: `/` then segments, no `.`/`..`/empty segments, no control characters. */
export const memoryPath = z
  .string()
  .min(2)
  .max(MAX_PATH_BYTES)
  .regex(new RegExp(MEMORY_PATH_PATTERN), 'must start with / and have no ., .. or empty segments and no control characters')
  .refine((p) => Buffer.byteLength(p, 'utf8') <= MAX_PATH_BYTES, `path is longer than ${MAX_PATH_BYTES} bytes`)
  .describe(`Starts with /; at most ${MAX_PATH_BYTES} bytes; no ., .. or empty segments, no control characters`);

const memoryContent = z
  .string()
  .max(MAX_CONTENT_BYTES)
  .refine((c) => Buffer.byteLength(c, 'utf8') <= MAX_CONTENT_BYTES, `content is larger than ${MAX_CONTENT_BYTES} bytes`)
  .describe(`UTF-8 text, at most ${MAX_CONTENT_BYTES} bytes (100 KiB)`);

export const createMemoryBody = z.strictObject({ path: memoryPath, content: memoryContent }).meta({ id: 'CreateMemoryInput' });
export type CreateMemoryBody = z.output<typeof createMemoryBody>;

/** A memory's content_sha256 as a caller passes it back (an edit's or a delete's expected version). */
export const expectedContentSha256 = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lower-case hex characters');

export const patchMemoryBody = z
  .strictObject({
    content: memoryContent.optional(),
    path: memoryPath.optional().describe('Moves the memory'),
    expected_content_sha256: expectedContentSha256.describe('The content_sha256 the edit was made from: 409 version_conflict when the memory changed since'),
  })
  .meta({ id: 'UpdateMemoryInput' });
export type PatchMemoryBody = z.output<typeof patchMemoryBody>;

// ---- answers ----

const timestamps = { created_at: dateTime(z.string()), updated_at: dateTime(z.string()) };

export const memoryStoreBody = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    archived_at: dateTime(z.string()).nullable().describe('Archived stores refuse new mounts; existing mounts stay readable'),
    ...timestamps,
  })
  .meta({ id: 'MemoryStore' });
export type MemoryStoreView = z.output<typeof memoryStoreBody>;

export const memoryStoreList = z
  .strictObject({
    data: z.array(memoryStoreBody).describe('Newest first'),
    next_page: z.string().nullable().describe('Pass back as ?page= for the next page; null on the last page'),
  })
  .meta({ id: 'MemoryStoreList' });

export const memoryBody = z
  .strictObject({
    id: z.string(),
    memory_store_id: z.string(),
    path: z.string(),
    content: z.string(),
    content_sha256: z.string().describe('Hex SHA-256 of the UTF-8 content: pass it back as expected_content_sha256 to edit'),
    size_bytes: z.number().int(),
    ...timestamps,
  })
  .meta({ id: 'Memory' });
export type MemoryView = z.output<typeof memoryBody>;

export const memorySummary = memoryBody.omit({ content: true }).meta({ id: 'MemorySummary' });
export type MemorySummaryView = z.output<typeof memorySummary>;

export const memoryList = z
  .strictObject({
    data: z.array(memorySummary).describe('By path'),
    next_page: z.string().nullable().describe('Pass back as ?page= for the next page; null on the last page'),
  })
  .meta({ id: 'MemoryList' });

export const memoryDeleted = z.strictObject({ type: z.literal('memory_deleted'), id: z.string() }).meta({ id: 'MemoryDeleted' });

const sessionActor = z.strictObject({ type: z.literal('session'), session_id: z.string() }).meta({ id: 'MemorySessionActor' });
const userActor = z.strictObject({ type: z.literal('user'), user_id: z.string() }).meta({ id: 'MemoryUserActor' });
export const memoryActor = z.discriminatedUnion('type', [sessionActor, userActor]).meta({ id: 'MemoryActor' });
export type MemoryActor = z.output<typeof memoryActor>;

export const memoryOperation = z.enum(['created', 'modified', 'deleted']).meta({ id: 'MemoryOperation' });
export type MemoryOperation = z.output<typeof memoryOperation>;

export const memoryVersionBody = z
  .strictObject({
    id: z.string(),
    memory_store_id: z.string(),
    memory_id: z.string(),
    operation: memoryOperation,
    path: z.string().nullable().describe('null once redacted'),
    content: z.string().nullable().describe('The content after the change; null for a deletion or once redacted'),
    content_sha256: z.string().nullable(),
    size_bytes: z.number().int().nullable(),
    actor: memoryActor,
    created_at: dateTime(z.string()),
    redacted_at: dateTime(z.string()).nullable(),
    redacted_by: z.string().nullable().describe('The user who redacted it'),
  })
  .meta({ id: 'MemoryVersion' });
export type MemoryVersionView = z.output<typeof memoryVersionBody>;

export const memoryVersionList = z
  .strictObject({
    data: z.array(memoryVersionBody).describe('Newest first'),
    next_page: z.string().nullable().describe('Pass back as ?page= for the next page; null on the last page'),
  })
  .meta({ id: 'MemoryVersionList' });
