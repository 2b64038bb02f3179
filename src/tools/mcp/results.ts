// An MCP tool result (content blocks, structured content, isError) as the tool_result the model
// reads: text kept (cut at a size limit), images, audio and embedded binary resources stored as
// session files (the model gets their file ids; clients get image/file parts).
import type { ProducedFile } from '../result-files.js';
import { extensionOf } from '../result-files.js';

type Block = { type: string; [k: string]: unknown };

export interface ConvertedResult {
  isError: boolean;
  /** The model's view, files still to be stored (their place holds `{type, file: n}`). */
  content: Record<string, unknown>[];
  structured: Record<string, unknown> | null;
  files: ProducedFile[];
  truncated: boolean;
}

const MAX_FILE_BYTES = 32 * 1024 * 1024;

export function convertResult(
  raw: { content?: unknown; structuredContent?: unknown; isError?: unknown; toolResult?: unknown },
  limits: { maxTextChars: number },
  label: string,
): ConvertedResult {
  const out: ConvertedResult = { isError: raw.isError === true, content: [], structured: null, files: [], truncated: false };
  let budget = limits.maxTextChars;
  const text = (t: string) => {
    if (budget <= 0) {
      out.truncated = true;
      return null;
    }
    const kept = t.length > budget ? t.slice(0, budget) : t;
    if (kept.length < t.length) out.truncated = true;
    budget -= kept.length;
    return kept;
  };
  const file = (base64: string, mimeType: string, name: string | null) => {
    const data = Buffer.from(base64, 'base64');
    if (data.length > MAX_FILE_BYTES) return { type: 'note', text: `a ${mimeType} of ${data.length} bytes was left out (over ${MAX_FILE_BYTES} bytes)` };
    out.files.push({ data, mimeType, filename: name ?? `${label}-${out.files.length + 1}.${extensionOf(mimeType)}` });
    return { type: 'file', file: out.files.length - 1 };
  };
  // Servers of the oldest protocol answer `{toolResult}` instead of content blocks.
  const blocks: Block[] = Array.isArray(raw.content)
    ? (raw.content as Block[])
    : raw.toolResult !== undefined
      ? [{ type: 'text', text: JSON.stringify(raw.toolResult) }]
      : [];
  for (const b of blocks) {
    switch (b.type) {
      case 'text': {
        const t = text(String(b.text ?? ''));
        if (t !== null) out.content.push({ type: 'text', text: t });
        break;
      }
      case 'image':
      case 'audio':
        out.content.push(file(String(b.data ?? ''), String(b.mimeType ?? 'application/octet-stream'), null));
        break;
      case 'resource': {
        const r = (b.resource ?? {}) as { uri?: string; mimeType?: string; text?: string; blob?: string };
        if (typeof r.blob === 'string') {
          const name = r.uri ? decodeURIComponent(r.uri.split('/').pop() || '') || null : null;
          out.content.push({ ...file(r.blob, r.mimeType ?? 'application/octet-stream', name), uri: r.uri ?? null });
        } else {
          const t = text(String(r.text ?? ''));
          if (t !== null) out.content.push({ type: 'resource', uri: r.uri ?? null, mime_type: r.mimeType ?? null, text: t });
        }
        break;
      }
      case 'resource_link':
        out.content.push({
          type: 'resource_link',
          uri: b.uri ?? null,
          name: b.name ?? null,
          mime_type: b.mimeType ?? null,
          description: b.description ?? null,
        });
        break;
      default:
        out.content.push({ type: 'note', text: `a ${String(b.type)} block was left out` });
    }
  }
  if (raw.structuredContent && typeof raw.structuredContent === 'object' && !Array.isArray(raw.structuredContent)) {
    const json = JSON.stringify(raw.structuredContent);
    if (json.length <= budget) out.structured = raw.structuredContent as Record<string, unknown>;
    else out.truncated = true;
  }
  return out;
}
