// Content blocks of user.message / system.message events and the send-events body, with the
// spec's limits. Strict objects: extra properties are refused.
import { z } from 'zod';
import { messagePart } from './parts.js';

const nonEmpty = z.string().min(1);

export const base64Source = z.strictObject({ type: z.literal('base64'), media_type: nonEmpty, data: nonEmpty }).meta({ id: 'Base64Source' });
export const urlSource = z.strictObject({ type: z.literal('url'), url: nonEmpty.max(8192) }).meta({ id: 'UrlSource' });
export const fileSource = z.strictObject({ type: z.literal('file'), file_id: nonEmpty.max(128) }).meta({ id: 'FileSource' });
export const textSource = z
  .strictObject({ type: z.literal('text'), media_type: z.literal('text/plain').default('text/plain'), data: nonEmpty })
  .meta({ id: 'TextSource' });

export const textBlock = z.strictObject({ type: z.literal('text'), text: nonEmpty }).meta({ id: 'TextBlock' });
export const imageBlock = z
  .strictObject({
    type: z.literal('image'),
    source: z.discriminatedUnion('type', [base64Source, urlSource, fileSource]).meta({ id: 'ImageSource' }),
  })
  .meta({ id: 'ImageBlock' });
export const documentBlock = z
  .strictObject({
    type: z.literal('document'),
    source: z.discriminatedUnion('type', [base64Source, urlSource, fileSource, textSource]).meta({ id: 'DocumentSource' }),
    // "All string fields non-empty" (spec): a title or context is a non-empty string or null.
    title: nonEmpty.nullish(),
    context: nonEmpty.nullish(),
  })
  .meta({ id: 'DocumentBlock' });

export const contentBlock = z.discriminatedUnion('type', [textBlock, imageBlock, documentBlock]).meta({ id: 'ContentBlock' });
export type ContentBlockInput = z.infer<typeof contentBlock>;

export const userMessageEvent = z.strictObject({ type: z.literal('user.message'), content: z.array(contentBlock).min(1) }).meta({ id: 'UserMessageInput' });
export type UserMessageInput = z.output<typeof userMessageEvent>;
export const systemMessageEvent = z
  .strictObject({ type: z.literal('system.message'), content: z.array(textBlock).min(1).max(1000) })
  .meta({ id: 'SystemMessageInput' });
export const userInterruptEvent = z.strictObject({ type: z.literal('user.interrupt') }).meta({ id: 'UserInterruptInput' });

export const toolConfirmationResult = z.enum(['allow', 'deny']).meta({ id: 'ToolConfirmationResult' });
export const userToolConfirmationEvent = z
  .strictObject({
    type: z.literal('user.tool_confirmation'),
    tool_use_id: nonEmpty.max(128).describe("The id of the agent.tool_use event awaiting confirmation (its part's call_id is accepted too)"),
    result: toolConfirmationResult,
    deny_message: z.string().max(10_000).nullish().describe('deny: the reason, told to the model'),
  })
  .meta({ id: 'UserToolConfirmationInput' });

/** Beyond the spec (issue #31): summarise the older conversation now (hermes); a turn of its own. */
export const userCompactEvent = z.strictObject({ type: z.literal('user.compact') }).meta({ id: 'UserCompactInput' });

// ---- outcomes (issue #33): beyond the spec, a send-events type beside user.message ----
export const OUTCOME_LIMITS = { description: 10_000, rubric: 50_000, maxIterations: 20 } as const;
export const userDefineOutcomeEvent = z
  .strictObject({
    type: z.literal('user.define_outcome'),
    description: nonEmpty.max(OUTCOME_LIMITS.description).describe("The task: the agent's turn input (1 to 10000 characters)"),
    rubric: nonEmpty.max(OUTCOME_LIMITS.rubric).describe('Markdown: the explicit criteria the grader checks, one per list item (1 to 50000 characters)'),
    max_iterations: z.int32().min(1).max(OUTCOME_LIMITS.maxIterations).default(3).describe('Evaluations at most (1 to 20, default 3)'),
    grader_llm: nonEmpty.max(200).nullish().describe("The grader's model; default the session's"),
  })
  .meta({ id: 'UserDefineOutcomeInput' });
export type UserDefineOutcomeInput = z.output<typeof userDefineOutcomeEvent>;

/** A session's or a routine's initial_events: user messages and at most one outcome (issue #33). */
export const initialEvent = z.discriminatedUnion('type', [userMessageEvent, userDefineOutcomeEvent]).meta({ id: 'InitialEventInput' });
export type InitialEvent = z.output<typeof initialEvent>;
export const initialEvents = (min: number) =>
  z
    .array(initialEvent)
    .min(min)
    .max(50)
    .refine((events) => events.filter((e) => e.type === 'user.define_outcome').length <= 1, 'at most one user.define_outcome');

export const inputEvent = z
  .discriminatedUnion('type', [userMessageEvent, systemMessageEvent, userInterruptEvent, userToolConfirmationEvent, userCompactEvent, userDefineOutcomeEvent])
  .meta({ id: 'SendEventInput' });
export type InputEvent = z.infer<typeof inputEvent>;

export const sendEventsBody = z.strictObject({ events: z.array(inputEvent).min(1).max(50) }).meta({ id: 'SendSessionEventsInput' });
export type SendEventsBody = z.infer<typeof sendEventsBody>;

/** Deprecated send: `{parts}` (message parts); its text parts become one user.message. */
export const legacySendBody = z.strictObject({ parts: z.array(messagePart).min(1).max(1000) }).meta({ id: 'LegacySendInput' });
export type LegacySendBody = z.output<typeof legacySendBody>;
