// The deprecated `{parts}` send's translation into one user.message's content blocks: text parts
// become text blocks, image parts image blocks, file parts document blocks (the name as title).
// A part's bytes come from `data` (base64) or `uri` (an http(s) URL, a `data:` URI, or an
// uploaded `file_<id>`). Parts a user message cannot carry (reasoning, tool calls and results,
// video, status, error) are refused rather than dropped: the 410 says what was delivered.
import { AppError } from '../errors.js';
import type { LegacySendBody, ContentBlockInput } from '../events/content.js';

type Part = LegacySendBody['parts'][number];
type Source = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string } | { type: 'file'; file_id: string };

function sourceOf(part: Part & { media_type: string; uri: string | null; data: string | null }, i: number): Source {
  if (part.data) return { type: 'base64', media_type: part.media_type, data: part.data };
  const uri = part.uri ?? '';
  const dataUri = /^data:([^;,]+)?(;base64)?,(.*)$/s.exec(uri);
  if (dataUri) {
    const data = dataUri[2] ? dataUri[3]! : Buffer.from(decodeURIComponent(dataUri[3]!), 'utf8').toString('base64');
    if (data) return { type: 'base64', media_type: dataUri[1] || part.media_type, data };
  }
  if (/^file_[A-Za-z0-9_-]+$/.test(uri)) return { type: 'file', file_id: uri };
  if (/^https?:\/\//i.test(uri)) return { type: 'url', url: uri };
  throw new AppError('invalid_request', `parts[${i}] (${part.type}) needs its bytes: data (base64), or uri as an http(s) URL, a data: URI or a file_ id`);
}

export function legacyPartsToContent(parts: LegacySendBody['parts']): ContentBlockInput[] {
  const content: ContentBlockInput[] = [];
  for (const [i, part] of parts.entries()) {
    if (part.type === 'text') {
      if (part.text) content.push({ type: 'text', text: part.text });
    } else if (part.type === 'image') {
      content.push({ type: 'image', source: sourceOf(part, i) } as ContentBlockInput);
    } else if (part.type === 'file') {
      content.push({ type: 'document', source: sourceOf(part, i), title: part.name || null, context: null } as ContentBlockInput);
    } else {
      throw new AppError('invalid_request', `parts[${i}] is a ${part.type} part: the deprecated send delivers text, image and file parts only`);
    }
  }
  if (!content.length) throw new AppError('invalid_request', 'parts must contain a non-empty text part, an image part or a file part');
  return content;
}
