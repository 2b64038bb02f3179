// What a CLI engine is told in one turn: the turn's inputs as text (user messages, system
// messages marked as such), with message attachments written into the sandbox under
// /workspace/.attachments and named in the text (a CLI reads files, not inline bytes); and the
// system prompt (agent prompt, instructions, skills) in hermes' layout minus hermes' tool preamble.
import { prisma } from '../../../db/client.js';
import { blobStore } from '../../../blobs/blob-store.js';
import type { SessionEvent } from '../../../events/types.js';
import type { ContentBlockInput } from '../../../events/content.js';
import type { Sandbox } from '../../../sandbox/driver.js';
import { systemPromptFor } from '../../hermes/system-prompt.js';
import { outcomePrompt } from '../../outcome-prompt.js';

export const ATTACHMENTS_DIR = '/workspace/.attachments';

const PREAMBLE =
  "You are an agent running in a sandbox. Your working directory is /workspace; act there with your own tools. Be concise and finish the user's request.";

export function cliSystemPrompt(input: Parameters<typeof systemPromptFor>[0]): string {
  // hermes' prompt without its first paragraph (which names hermes' own tools).
  const rest = systemPromptFor(input).split('\n\n').slice(1);
  return [PREAMBLE, ...rest].join('\n\n');
}

const safeName = (name: string) =>
  name
    .replace(/[^\w.-]+/g, '_')
    .replace(/^\.+/, '')
    .slice(0, 100) || 'file';
const EXT: Record<string, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
  'application/pdf': '.pdf',
  'text/plain': '.txt',
};

async function attachment(sandbox: Sandbox, b: Exclude<ContentBlockInput, { type: 'text' }>, n: number): Promise<string> {
  const docTitle = b.type === 'document' ? (b.title ?? null) : null;
  const title = docTitle ? ` "${docTitle}"` : '';
  const place = async (name: string, data: Buffer) => {
    const p = `${ATTACHMENTS_DIR}/${n}-${safeName(name)}`;
    await sandbox.writeFile(p, data);
    return `[attached ${b.type}${title}: ${p}]`;
  };
  const src = b.source;
  if (src.type === 'file') {
    const f = await prisma.file.findUnique({ where: { id: src.file_id } });
    if (!f) return `[${b.type} ${src.file_id} is no longer available]`;
    return place(f.filename, await blobStore().read(f.blobKey));
  }
  if (src.type === 'base64') return place(`${b.type}${EXT[src.media_type] ?? ''}`, Buffer.from(src.data, 'base64'));
  if (src.type === 'text') return place(`${docTitle ?? 'document'}.txt`, Buffer.from(src.data));
  return `[${b.type}${title} at ${src.url}]`;
}

/** The turn's inputs as one prompt; attachments are placed in the sandbox first. */
export async function turnPrompt(sessionId: string, turn: number, sandbox: Sandbox): Promise<string> {
  const rows = await prisma.sessionEvent.findMany({
    where: { sessionId, turn, type: { in: ['user.message', 'system.message', 'user.define_outcome'] } },
    orderBy: { seq: 'asc' },
    select: { payload: true, seq: true },
  });
  const parts: string[] = [];
  for (const { payload, seq } of rows) {
    const e = payload as SessionEvent;
    if (e.type === 'user.define_outcome') parts.push(outcomePrompt(e));
    else if (e.type === 'system.message') {
      parts.push(...e.content.map((b) => `<system-message>\n${b.text}\n</system-message>`));
    } else if (e.type === 'user.message') {
      let i = 0;
      const text: string[] = [];
      for (const b of e.content) text.push(b.type === 'text' ? b.text : await attachment(sandbox, b, seq * 100 + i++));
      parts.push(text.join('\n'));
    }
  }
  return parts.join('\n\n') || '(no input)';
}
