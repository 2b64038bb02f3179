// Message parts of the spec (discriminated by `type`; every part has `index`): what agent
// events carry and what the deprecated `{parts}` send accepts.
import { z } from 'zod';

const nullableString = z.string().nullable();

const index = z.int32().min(0).default(0);
const streamFields = { stream_id: nullableString.default(null), stream_index: z.int32().min(0).nullable().default(null) };

export const textPart = z.strictObject({ type: z.literal('text'), index, text: z.string().default(''), ...streamFields }).meta({ id: 'TextPart' });
export const reasoningPart = z
  .strictObject({
    type: z.literal('reasoning'),
    index,
    text: z.string().default(''),
    redacted: z.boolean().default(false),
    ...streamFields,
  })
  .meta({ id: 'ReasoningPart' });
export const toolCallPart = z
  .strictObject({
    type: z.literal('tool_call'),
    index,
    call_id: z.string(),
    tool_name: z.string().min(1),
    args: z.record(z.string(), z.unknown()).default({}).describe("The tool's arguments (their shape belongs to the tool)"),
    args_partial: nullableString.default(null),
  })
  .meta({ id: 'ToolCallPart' });
export const toolResultPart = z
  .strictObject({
    type: z.literal('tool_result'),
    index,
    call_id: z.string(),
    tool_name: z.string().min(1),
    status: z.enum(['ok', 'error']).default('ok').meta({ id: 'ToolResultStatus' }),
    result: z.record(z.string(), z.unknown()).default({}).describe("The tool's result (its shape belongs to the tool)"),
  })
  .meta({ id: 'ToolResultPart' });
const mediaFields = { media_type: z.string().min(1), uri: nullableString.default(null), data: nullableString.default(null) };
export const filePart = z
  .strictObject({
    type: z.literal('file'),
    index,
    name: z.string(),
    ...mediaFields,
    size_bytes: z.int32().min(0).nullable().default(null),
  })
  .meta({ id: 'FilePart' });
const dims = { alt: nullableString.default(null), width: z.int32().nullable().default(null), height: z.int32().nullable().default(null) };
export const imagePart = z.strictObject({ type: z.literal('image'), index, ...mediaFields, ...dims }).meta({ id: 'ImagePart' });
export const videoPart = z
  .strictObject({
    type: z.literal('video'),
    index,
    ...mediaFields,
    ...dims,
    duration_ms: z.int32().nullable().default(null),
    size_bytes: z.int32().nullable().default(null),
    thumbnail_uri: nullableString.default(null),
  })
  .meta({ id: 'VideoPart' });
export const STATUS_LEVELS = ['thinking', 'working', 'waiting', 'idle', 'done'] as const;
export const statusPart = z
  .strictObject({
    type: z.literal('status'),
    index,
    level: z.enum(STATUS_LEVELS).meta({ id: 'StatusLevel' }),
    text: nullableString.default(null),
  })
  .meta({ id: 'StatusPart' });
export const errorPart = z
  .strictObject({
    type: z.literal('error'),
    index,
    code: z.string(),
    message: z.string().min(1),
    retryable: z.boolean().default(false),
  })
  .meta({ id: 'ErrorPart' });

export const messagePart = z
  .discriminatedUnion('type', [textPart, reasoningPart, toolCallPart, toolResultPart, filePart, imagePart, videoPart, statusPart, errorPart])
  .meta({ id: 'MessagePart' });
export type MessagePart = z.output<typeof messagePart>;
