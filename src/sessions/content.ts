// Content blocks of user.message / system.message events and the send-events body, with the
// spec's limits. Strict objects: extra properties are refused.
import { z } from 'zod';

const nonEmpty = z.string().min(1);

export const base64Source = z.strictObject({ type: z.literal('base64'), media_type: nonEmpty, data: nonEmpty });
export const urlSource = z.strictObject({ type: z.literal('url'), url: nonEmpty.max(8192) });
export const fileSource = z.strictObject({ type: z.literal('file'), file_id: nonEmpty.max(128) });
export const textSource = z.strictObject({ type: z.literal('text'), media_type: z.literal('text/plain').default('text/plain'), data: nonEmpty });

export const textBlock = z.strictObject({ type: z.literal('text'), text: nonEmpty });
export const imageBlock = z.strictObject({
  type: z.literal('image'),
  source: z.discriminatedUnion('type', [base64Source, urlSource, fileSource]),
});
export const documentBlock = z.strictObject({
  type: z.literal('document'),
  source: z.discriminatedUnion('type', [base64Source, urlSource, fileSource, textSource]),
  title: z.string().nullish(),
  context: z.string().nullish(),
});

export const contentBlock = z.discriminatedUnion('type', [textBlock, imageBlock, documentBlock]);
export type ContentBlockInput = z.infer<typeof contentBlock>;

export const userMessageEvent = z.strictObject({ type: z.literal('user.message'), content: z.array(contentBlock).min(1) });
export const systemMessageEvent = z.strictObject({ type: z.literal('system.message'), content: z.array(textBlock).min(1).max(1000) });
export const userInterruptEvent = z.strictObject({ type: z.literal('user.interrupt') });

export const inputEvent = z.discriminatedUnion('type', [userMessageEvent, systemMessageEvent, userInterruptEvent]);
export type InputEvent = z.infer<typeof inputEvent>;

export const sendEventsBody = z.strictObject({ events: z.array(inputEvent).min(1).max(50) });
export type SendEventsBody = z.infer<typeof sendEventsBody>;

/** Deprecated send: `{parts}` (message parts). Text-like parts become one user.message. */
export const legacyPart = z.looseObject({ type: z.string().min(1), index: z.number().int().min(0).optional() });
export const legacySendBody = z.strictObject({ parts: z.array(legacyPart).min(1).max(1000) });
